// Package outbound is the one way a message leaves for the provider. Every
// send (a person's reply, the chatbot's, an API or system template send, a
// notification, a framework send, a campaign recipient) goes through
// Sender.Send, which
//
//   - paces it from its account's budget in Redis, one budget per account
//     shared by every kind of send and every process, at the rate of the
//     account's messaging tier (accounts.Rate), with a priority order: a
//     person's reply and the chatbot before API sends, before campaigns.
//     A lower priority leaves the last tokens of the budget to the higher
//     ones, so a running campaign never delays a reply by more than one
//     token interval;
//   - runs the rules that may refuse a send before it leaves (Rule): the
//     first is the marketing opt-out (optout.go): a marketing template is
//     not sent to a contact who opted out of marketing;
//   - builds nothing the caller cares about: it posts the caller's
//     platform.Message and classifies the answer once (Outcome);
//   - acts on what concerns the account as a whole: a token or account the
//     provider refused marks the account disconnected with the provider's
//     reason (and campaign lanes, which check the account, pause); and on
//     what concerns the contact: the provider's marketing opt-out (131050)
//     opts the contact out;
//   - records the outcome in the metrics once.
//
// Callers map outcomes to their own replies: an HTTP error, a job retry, a
// recipient settlement. Storing the message is theirs.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"wharf/internal/accounts"
	"wharf/internal/infra/metrics"
	"wharf/internal/infra/ratelimit"
	"wharf/models"
	"wharf/platform"
)

// Priority orders the sends that share an account's budget.
type Priority int

// Priorities, highest first.
const (
	// Reply: a person's reply from the console or the API, the chatbot's
	// replies.
	Reply Priority = iota
	// API: template sends (API key or console), notifications, the
	// framework's sends.
	API
	// Campaign: campaign recipients.
	Campaign
)

func (p Priority) String() string {
	switch p {
	case Reply:
		return "reply"
	case API:
		return "api"
	}
	return "campaign"
}

// reserve is how many tokens a send of priority p leaves in the budget for
// the higher ones: none for replies, one for API sends (a reply takes it),
// two for campaigns (a reply and an API send).
func (p Priority) reserve() int { return int(p) }

// Outcome is what became of a send.
type Outcome string

// Outcomes.
const (
	// Accepted: the provider took the message (Result.MessageID).
	Accepted Outcome = "accepted"
	// Unknown: the request may have reached the provider but its answer
	// was lost (a broken connection); resending could duplicate it.
	Unknown Outcome = "unknown"
	// Paced: the account's budget had no token for this priority; nothing
	// was sent. Retry after Result.Wait.
	Paced Outcome = "paced"
	// Throttled: the provider throttled the account; nothing was sent.
	// Retry after Result.Wait.
	Throttled Outcome = "throttled"
	// Transient: the provider failed (a code of its own); nothing was
	// sent; a retry may succeed.
	Transient Outcome = "transient"
	// AccountFault: the provider refused the account or its token; the
	// account has been marked disconnected.
	AccountFault Outcome = "account_fault"
	// TemplateFault: the provider refused the template (paused, disabled).
	TemplateFault Outcome = "template_fault"
	// Rejected: the provider refused this message (the recipient, its
	// content).
	Rejected Outcome = "rejected"
	// Refused: a rule refused the send before it left.
	Refused Outcome = "refused"
	// Failed: the request could not be made (not a provider answer).
	Failed Outcome = "failed"
)

// Message is one send.
type Message struct {
	Account  *accounts.Account
	Priority Priority
	Message  platform.Message
	// Paced says the caller already took the send's token (Sender.Take):
	// campaign lanes take a chunk's tokens at once.
	Paced bool
	// Marketing: the message is a template of the MARKETING category,
	// which a contact opted out of marketing is not sent (optout.go).
	// Utility and authentication templates and free-form messages are not.
	Marketing bool
	// OptedOut is the recipient's opt-out when the caller read it with its
	// own rows (a campaign reads a chunk's numbers at once); nil: the rule
	// reads it.
	OptedOut *bool
}

// Result is the classified answer to a send.
type Result struct {
	Outcome   Outcome
	MessageID string        // Accepted
	Wait      time.Duration // Paced, Throttled, Transient: how long to wait before a retry
	// Err is the reason of every outcome but Accepted: the provider's
	// *platform.Error, a rule's refusal, or why the request failed.
	Err error
}

// ProviderError is the provider's error of the result, if any.
func (r Result) ProviderError() *platform.Error {
	pe, _ := platform.AsError(r.Err)
	return pe
}

// Rule may refuse a send before it leaves. Rules run in order on every
// send, whatever its priority; the first error refuses it (Refused).
type Rule interface {
	Check(ctx context.Context, m *Message) error
}

// Deps are the Sender's collaborators.
type Deps struct {
	Provider *platform.Client
	// Limiter keeps the budgets in Redis; nil paces nothing (tests of the
	// domains that do not measure pacing).
	Limiter  *ratelimit.Limiter
	Accounts *accounts.Service
	Metrics  *metrics.Set // nil: none
	// OptOuts are the contacts' marketing opt-outs (nil: only the callers'
	// Message.OptedOut are checked, and 131050 is not recorded).
	OptOuts OptOuts
	Rules   []Rule
	Log     *slog.Logger
}

// Sender sends messages to the provider.
type Sender struct {
	d Deps
}

// New builds a Sender.
func New(d Deps) *Sender {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	// The opt-out rule runs even without a store: a caller that read the
	// recipients' opt-outs itself (Message.OptedOut) is answered from them.
	d.Rules = append([]Rule{marketingOptOut{d.OptOuts}}, d.Rules...)
	return &Sender{d: d}
}

// MaxReplyWait is how long a reply waits in place for its account's
// budget before it gives up (Paced). A reply waits at most one interval
// behind API sends and campaigns; longer waits come only from other
// replies on the same account beyond its tier.
const MaxReplyWait = 5 * time.Second

// Take takes up to n tokens of account a's budget for sends of priority p,
// without waiting; with none, it answers how long until one is free. An
// account without a rate of ours (TIER_UNLIMITED), or a Sender without a
// limiter, gets all n.
func (s *Sender) Take(ctx context.Context, a *models.PlatformAccount, p Priority, n int) (int, time.Duration, error) {
	rate := accounts.Rate(a)
	if rate <= 0 || s.d.Limiter == nil {
		return n, 0, nil
	}
	// A burst of at most one second's worth: in any window of w seconds an
	// account sends at most rate × (w + 1), so 10% above the rate over 10 s.
	got, wait, err := s.d.Limiter.Pace(ctx, "account:"+a.ID.String(), rate, rate, p.reserve(), n)
	if err == nil && got == 0 {
		s.d.Metrics.OutboundPaced(p.String(), wait)
	}
	return got, wait, err
}

// Send sends one message: it checks the rules, takes the message's token
// (a reply waits up to MaxReplyWait for it, the others do not wait),
// posts it and classifies the answer.
func (s *Sender) Send(ctx context.Context, m Message) Result {
	r := s.send(ctx, &m)
	s.d.Metrics.OutboundSend(m.Priority.String(), string(r.Outcome))
	return r
}

func (s *Sender) send(ctx context.Context, m *Message) Result {
	for _, rule := range s.d.Rules {
		if err := rule.Check(ctx, m); err != nil {
			if errors.Is(err, errRuleUnavailable) {
				return Result{Outcome: Failed, Err: err}
			}
			return Result{Outcome: Refused, Err: err}
		}
	}
	if !m.Paced {
		if r, ok := s.pace(ctx, m); !ok {
			return r
		}
	}
	res, err := s.d.Provider.Send(ctx, m.Account.Creds(), m.Message)
	if err == nil {
		return Result{Outcome: Accepted, MessageID: res.MessageID}
	}
	r := Classify(err)
	if r.Outcome == AccountFault {
		s.accountFault(ctx, &m.Account.PlatformAccount, r.Err)
	}
	if pe := r.ProviderError(); pe != nil && pe.Code == CodeMarketingOptOut {
		s.providerOptOut(ctx, &m.Account.PlatformAccount, m.Message.To)
	}
	return r
}

// pace takes the message's token; a reply waits for it in place.
func (s *Sender) pace(ctx context.Context, m *Message) (Result, bool) {
	deadline := time.Now().Add(MaxReplyWait)
	for {
		got, wait, err := s.Take(ctx, &m.Account.PlatformAccount, m.Priority, 1)
		switch {
		case err != nil:
			return Result{Outcome: Failed, Err: fmt.Errorf("pace the send: %w", err)}, false
		case got > 0:
			return Result{}, true
		case m.Priority != Reply || time.Now().Add(wait).After(deadline):
			return Result{Outcome: Paced, Wait: wait, Err: errors.New("the account's messaging tier allows no send yet")}, false
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Result{Outcome: Failed, Err: ctx.Err()}, false
		case <-t.C:
		}
	}
}

// Classify turns an error of platform.Client.Send into its outcome.
func Classify(err error) Result {
	pe, ok := platform.AsError(err)
	switch {
	case !ok:
		return Result{Outcome: Failed, Err: err}
	case pe.Code == 0 && pe.Class == platform.Transient:
		// The connection broke: the provider may have the message.
		return Result{Outcome: Unknown, Err: err}
	case pe.AboutAccount():
		return Result{Outcome: AccountFault, Err: err}
	case pe.AboutTemplate():
		return Result{Outcome: TemplateFault, Err: err}
	case pe.Class == platform.Throttled:
		return Result{Outcome: Throttled, Wait: max(pe.RetryAfter, time.Second), Err: err}
	case pe.Class == platform.Transient:
		return Result{Outcome: Transient, Wait: time.Second, Err: err}
	}
	return Result{Outcome: Rejected, Err: err}
}

// accountFault marks the account disconnected with the provider's reason:
// its queued sends then fail as sends of an inactive account, and the
// lanes of its running campaigns pause (they check the account).
func (s *Sender) accountFault(ctx context.Context, a *models.PlatformAccount, err error) {
	if s.d.Accounts == nil {
		return
	}
	reason := "the provider refused the account: " + err.Error()
	if err := s.d.Accounts.Disconnect(context.WithoutCancel(ctx), a.OrganizationID, a.ID, reason); err != nil {
		s.d.Log.Error("cannot mark the account disconnected", "account_id", a.ID, "error", err)
		return
	}
	s.d.Log.Warn("account disconnected: the provider refused it", "account_id", a.ID, "reason", reason)
}
