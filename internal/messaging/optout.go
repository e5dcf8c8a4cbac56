package messaging

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/contacts"
	"wharf/internal/inbound"
	"wharf/internal/infra/statuses"
	"wharf/internal/orgsettings"
	"wharf/internal/outbound"
	"wharf/models"
)

// Opt-out keywords (docs/CAMPAIGNS.md, Opt-outs). An incoming text that is
// exactly one of the organization's opt-out or opt-in keywords (trimmed,
// any case) opts its contact out of marketing or back in, in the inbound
// transaction that stores the message; the organization's confirmation,
// if it set one, is queued as a reply in the same transaction (the
// contact just wrote: inside the service window) and sent through the
// outbound Sender like a bot reply. The message is then answered: the
// chatbot, after messaging, does not also answer it (inbound.Incoming's
// Answered). An opt-out keyword is always answered, whether or not the
// contact had opted out already, so that STOP never starts or moves a flow.
// An opt-in keyword is one only from a contact who opted out: from anyone
// else START is an ordinary message (no change, no confirmation, and the
// chatbot answers it: organizations' flows start on such words).

// keywordsOf answers the organization's keywords: from the settings
// domain's cache when it was given one, else through tx.
func (s *Service) keywordsOf(ctx context.Context, tx *gorm.DB, orgID uuid.UUID) (orgsettings.Keywords, error) {
	if s.keywords != nil {
		return s.keywords.Keywords(ctx, tx, orgID)
	}
	return orgsettings.KeywordsIn(ctx, tx, orgID)
}

// keywordReply handles a stored incoming message that may be a keyword. It
// answers whether it was one, and the work to do after the commit.
func (s *Service) keywordReply(ctx context.Context, tx *gorm.DB, in *inbound.Incoming) (bool, func(context.Context), error) {
	if in.Message.Type != "text" || in.Message.Text == nil {
		return false, nil, nil
	}
	text := strings.TrimSpace(in.Message.Text.Body)
	// Most messages are longer than any keyword: no settings read for them.
	if text == "" || len([]rune(text)) > orgsettings.MaxKeywordLength {
		return false, nil, nil
	}
	orgID := in.Contact.OrganizationID
	kw, err := s.keywordsOf(ctx, tx, orgID)
	if err != nil {
		return false, nil, err
	}
	optOut, ok := kw.Match(text)
	if !ok {
		return false, nil, nil
	}
	changed, err := s.contacts.SetOptOutIn(ctx, tx, orgID, in.Contact.ID,
		contacts.OptOutChange{OptOut: optOut, Source: models.OptOutKeyword, Keyword: text})
	if err != nil {
		return false, nil, err
	}
	if !optOut && !changed.Changed {
		return false, nil, nil // an opt-in word from a contact who had not opted out
	}
	confirmation := kw.OptInConfirmation
	if optOut {
		confirmation = kw.OptOutConfirmation
	}
	reply := uuid.Nil
	if confirmation != "" {
		if reply, err = s.QueueReply(ctx, tx, orgID, in.Contact.ID, in.Account.ID, Reply{Text: confirmation}); err != nil {
			return false, nil, err
		}
	}
	return true, func(ctx context.Context) {
		s.webhooks.Publish(ctx, orgID, changed.Event)
		if reply != uuid.Nil {
			s.EnqueueSend(ctx, orgID, reply)
		}
	}, nil
}

// providerOptOuts finds the batch's failures with the provider's marketing
// opt-out (131050, a status of a marketing template) and answers the work
// that opts their numbers out after the batch commits (in a transaction
// of its own: the batch's does not take contacts' locks). A lost mark is
// made again by the next such failure.
func (s *Service) providerOptOuts(orgID, accountID uuid.UUID, all []*statuses.Outcome) func(context.Context) {
	var numbers []string
	for _, o := range all {
		if o.Final != models.StatusFailed || o.ErrorCode == nil || *o.ErrorCode != outbound.CodeMarketingOptOut {
			continue
		}
		for _, st := range o.Statuses {
			if st.RecipientID != "" {
				numbers = append(numbers, st.RecipientID)
				break
			}
		}
	}
	if len(numbers) == 0 {
		return nil
	}
	return func(ctx context.Context) {
		for _, n := range numbers {
			if err := s.contacts.OptOutNumber(context.WithoutCancel(ctx), orgID, n, &accountID); err != nil {
				s.log.Error("cannot record the provider's marketing opt-out", "account_id", accountID, "error", err)
			}
		}
	}
}
