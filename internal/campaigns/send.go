package campaigns

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"wharf/internal/infra/metrics"
	"wharf/internal/infra/phone"
	"wharf/internal/outbound"
	"wharf/internal/templates"
	"wharf/models"
	"wharf/platform"
)

// batchOutcome is what a lane learns from one chunk of sends.
type batchOutcome struct {
	claimed int
	// wait > 0: hand the worker slot back for this long (the provider
	// throttled us, or is in trouble).
	wait       time.Duration
	waitReason string
	waitKind   metrics.WaitReason
	// stop != "": the campaign cannot go on (an account or template
	// problem).
	stop string
}

// sendResult is the outcome of one recipient's send.
type sendResult struct {
	wait       time.Duration
	waitReason string
	waitKind   metrics.WaitReason
	stop       string
}

// sendChunk claims up to n recipients (at most maxSendsAtOnce) and sends to
// them at once. The chunk is claimed just before its sends start, so a
// worker that dies leaves no recipient claimed that was not on its way to
// the provider.
func (s *Service) sendChunk(ctx context.Context, r *run, n int) (batchOutcome, error) {
	recs, err := s.claim(ctx, r.campaign.ID, min(n, maxSendsAtOnce))
	if err != nil || len(recs) == 0 {
		return batchOutcome{}, err
	}
	results := make([]sendResult, len(recs))
	settled := make([]settlement, len(recs))
	optedOut, err := s.optedOut(ctx, r, recs)
	if err != nil {
		// Not knowing who opted out, send to nobody: the chunk goes back.
		for i := range recs {
			settled[i] = released(recs[i].ID, false)
		}
		s.settle(ctx, settled)
		s.log.Warn("cannot read the recipients' opt-outs; the chunk waits", "campaign_id", r.campaign.ID, "error", err)
		return batchOutcome{claimed: len(recs), wait: time.Second, waitReason: "cannot read the recipients' opt-outs",
			waitKind: metrics.WaitProviderError}, nil
	}
	if len(recs) == 1 {
		results[0], settled[0] = s.send(ctx, r, &recs[0], optedOut)
	} else {
		var wg sync.WaitGroup
		for i := range recs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], settled[i] = s.send(ctx, r, &recs[i], optedOut)
			}()
		}
		wg.Wait()
	}
	// One statement records the whole chunk: a send's outcome waits for the
	// chunk's slowest send (milliseconds), and a worker that dies meanwhile
	// leaves the chunk sending, which the sweep calls unknown, never resent.
	s.settleFor(ctx, r.campaign, settled)
	out := batchOutcome{claimed: len(recs)}
	for _, res := range results {
		if res.stop != "" && out.stop == "" {
			out.stop = res.stop
		}
		if res.wait > out.wait {
			out.wait, out.waitReason, out.waitKind = res.wait, res.waitReason, res.waitKind
		}
	}
	return out, nil
}

// send makes one send and says how to settle the recipient. optedOut is
// the chunk's recipients who opted out of marketing (nil: the template is
// not a marketing one).
func (s *Service) send(ctx context.Context, r *run, rec *models.CampaignRecipient, optedOut map[string]bool) (sendResult, settlement) {
	if ctx.Err() != nil {
		// The worker is stopping: the recipient was never handed over.
		return sendResult{}, released(rec.ID, false)
	}
	values, missing := s.values(r.campaign, r.tmpl, rec)
	if len(missing) > 0 {
		return sendResult{}, failedTo(rec.ID, models.RecipientFailed, false, nil, "missing values for the template",
			fmt.Sprintf("the recipient has no value for: %s", strings.Join(missing, ", ")))
	}
	t, err := templates.Build(r.tmpl, values)
	if err != nil {
		return sendResult{}, failedTo(rec.ID, models.RecipientFailed, false, nil, "cannot build the template", err.Error())
	}
	msg := platform.NewMessage(phone.Digits(rec.PhoneNumber), "template")
	msg.Template = &t
	msg.BizOpaqueCallbackData = CallbackPrefix + rec.ID.String()
	// The send is not cancelled with the lane: once the request may have
	// left, finishing it and recording the answer beats guessing later. Its
	// token was taken with the chunk's (RunLane).
	// The opt-out rule is the Sender's; the chunk read the recipients'
	// opt-outs at once, so it reads none per send.
	om := outbound.Message{Account: r.account, Priority: outbound.Campaign, Message: msg, Paced: true}
	if optedOut != nil {
		out := optedOut[rec.PhoneNumber]
		om.Marketing, om.OptedOut = true, &out
	}
	res := s.sender.Send(context.WithoutCancel(ctx), om)
	pe := res.ProviderError()
	switch res.Outcome {
	case outbound.Accepted:
		return sendResult{}, sentTo(rec.ID, res.MessageID)
	case outbound.Refused:
		if errors.Is(res.Err, outbound.ErrOptedOut) {
			return sendResult{}, failedTo(rec.ID, models.RecipientSkipped, false, nil, "opted out of marketing",
				"the contact opted out of marketing messages; a marketing template is not sent to it")
		}
		return sendResult{}, failedTo(rec.ID, models.RecipientFailed, false, nil, "cannot send", res.Err.Error())
	case outbound.Failed:
		return sendResult{}, failedTo(rec.ID, models.RecipientFailed, false, nil, "cannot send", res.Err.Error())
	case outbound.Unknown:
		return sendResult{}, failedTo(rec.ID, models.RecipientUnknown, true, nil, "send outcome unknown",
			"the connection to the provider broke during the send ("+res.Err.Error()+"); a provider status will settle it if the message "+
				"was accepted; it is not resent, to avoid a duplicate")
	case outbound.AccountFault:
		return sendResult{stop: "the provider refused the account: " + res.Err.Error()}, released(rec.ID, false)
	case outbound.TemplateFault:
		return sendResult{stop: "the provider refused the template: " + res.Err.Error()}, released(rec.ID, false)
	case outbound.Paced:
		return sendResult{wait: res.Wait, waitReason: "waiting for the messaging tier's pace", waitKind: metrics.WaitPace}, released(rec.ID, false)
	case outbound.Throttled:
		return sendResult{wait: res.Wait, waitReason: fmt.Sprintf("the provider throttled the account (code %d)", pe.Code),
			waitKind: metrics.WaitProviderThrottle}, released(rec.ID, false)
	case outbound.Transient:
		if rec.Attempts+1 < maxAttempts {
			return sendResult{wait: time.Duration(rec.Attempts+1) * time.Second, waitReason: fmt.Sprintf("provider trouble (code %d)", pe.Code),
				waitKind: metrics.WaitProviderError}, released(rec.ID, true)
		}
	}
	code := pe.Code
	return sendResult{}, failedTo(rec.ID, models.RecipientFailed, true, &code, pe.Message, pe.Details)
}

// optedOut answers the chunk's recipients who opted out of marketing, in
// one read, when the campaign's template is a marketing one (nil
// otherwise: nobody is skipped).
func (s *Service) optedOut(ctx context.Context, r *run, recs []models.CampaignRecipient) (map[string]bool, error) {
	if !templates.IsMarketing(r.tmpl) {
		return nil, nil
	}
	if s.optOuts == nil {
		return map[string]bool{}, nil
	}
	numbers := make([]string, len(recs))
	for i := range recs {
		numbers[i] = recs[i].PhoneNumber
	}
	return s.optOuts.OptedOutAmong(ctx, r.campaign.OrganizationID, numbers)
}

// values maps the template's placeholders to the recipient's fields.
func (s *Service) values(c *models.Campaign, t *models.Template, rec *models.CampaignRecipient) (map[string]string, []string) {
	values := map[string]string{}
	var missing []string
	for _, key := range templates.Keys(templates.Slots(t)) {
		field := c.VariableMapping.V[key]
		var v string
		switch field {
		case "name":
			v = rec.Name
		case "phone_number":
			v = rec.PhoneNumber
		default:
			if x, ok := rec.Data.V[field]; ok && x != nil {
				v = strings.TrimSpace(fmt.Sprint(x))
			}
		}
		if v == "" {
			missing = append(missing, fmt.Sprintf("%s (field %s)", key, field))
			continue
		}
		values[key] = v
	}
	// A document header's file name is no placeholder (a send is complete
	// without it): it comes from the recipient's field of that name.
	if _, media := values[templates.HeaderMediaKey]; media {
		if x, ok := rec.Data.V[templates.HeaderFilenameKey]; ok && x != nil {
			if fn := strings.TrimSpace(fmt.Sprint(x)); fn != "" {
				values[templates.HeaderFilenameKey] = fn
			}
		}
	}
	return values, missing
}
