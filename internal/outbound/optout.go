package outbound

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"wharf/models"
)

// Marketing opt-outs (docs/CAMPAIGNS.md, Opt-outs): enforced here, where
// every message leaves, so that no kind of send (a campaign, an API
// template send, the framework's, a notification) can forget them.

// ErrOptedOut refuses a marketing template to a contact who opted out of
// marketing (Refused).
var ErrOptedOut = errors.New("the contact opted out of marketing messages: marketing templates are not sent to it " +
	"(utility and authentication templates and replies still are)")

// errRuleUnavailable: a rule could not decide (its store failed); the send
// is Failed, not Refused, so that the caller retries it.
var errRuleUnavailable = errors.New("a send rule could not be checked")

// CodeMarketingOptOut is the provider's error for a marketing template to
// a number that opted out of the business's marketing messages.
const CodeMarketingOptOut = 131050

// OptOuts are the contacts' marketing opt-outs (contacts.Service).
type OptOuts interface {
	// MarketingOptedOut tells whether the contact with this number (digits,
	// as in platform.Message.To) opted out of marketing.
	MarketingOptedOut(ctx context.Context, orgID uuid.UUID, digits string) (bool, error)
	// OptOutNumber opts the number out because the provider said it opted
	// out (131050).
	OptOutNumber(ctx context.Context, orgID uuid.UUID, digits string, accountID *uuid.UUID) error
}

// marketingOptOut is the Rule that keeps marketing templates from contacts
// who opted out. Other sends pass without a read.
type marketingOptOut struct{ store OptOuts }

func (r marketingOptOut) Check(ctx context.Context, m *Message) error {
	if !m.Marketing {
		return nil
	}
	out := false
	if m.OptedOut != nil {
		out = *m.OptedOut
	} else if r.store != nil {
		var err error
		if out, err = r.store.MarketingOptedOut(ctx, m.Account.OrganizationID, m.Message.To); err != nil {
			return fmt.Errorf("%w: read the contact's opt-out: %w", errRuleUnavailable, err)
		}
	}
	if out {
		return ErrOptedOut
	}
	return nil
}

// providerOptOut opts the recipient out after the provider answered 131050.
func (s *Sender) providerOptOut(ctx context.Context, a *models.PlatformAccount, digits string) {
	if s.d.OptOuts == nil {
		return
	}
	if err := s.d.OptOuts.OptOutNumber(context.WithoutCancel(ctx), a.OrganizationID, digits, &a.ID); err != nil {
		s.d.Log.Error("cannot record the provider's marketing opt-out", "account_id", a.ID, "error", err)
	}
}
