package campaigns

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/templates"
	"wharf/models"
)

// MaxTestNumbers is how many numbers one test send reaches.
const MaxTestNumbers = 5

// TestSender sends one template message to one number, as any template
// send (messaging: stored, paced, checked by the outbound rules, opt-outs
// included). The campaigns domain does not send test messages itself: they
// are ordinary messages, not recipients, and touch no counter.
type TestSender interface {
	SendTestTemplate(ctx context.Context, orgID uuid.UUID, by TestActor, templateID uuid.UUID, number string, values map[string]string) (uuid.UUID, error)
}

// TestActor is who asked for a test send.
type TestActor struct {
	UserID   uuid.UUID
	APIKeyID *uuid.UUID
}

// TestSendInput is a test send: the numbers, and the placeholders' values
// from one of the campaign's recipients or given as they are.
type TestSendInput struct {
	PhoneNumbers []string
	RecipientID  *uuid.UUID
	Values       map[string]string
}

// TestSent is one number's outcome: the queued message, or why not.
type TestSent struct {
	PhoneNumber string
	MessageID   *uuid.UUID
	Error       string
}

// TestSend sends the campaign's message to a few numbers the user names,
// with a recipient's values or the given ones, through the same template
// checks and outbound rules as every send; the campaign's recipients and
// counters are untouched. A number the send refuses (an opted-out contact
// of a marketing template) says why; the others still go.
func (s *Service) TestSend(ctx context.Context, orgID uuid.UUID, by TestActor, campaignID uuid.UUID, in TestSendInput) ([]TestSent, error) {
	if s.tests == nil {
		return nil, apperr.Unavailablef("test sends are not available in this process")
	}
	numbers, err := testNumbers(in.PhoneNumbers)
	if err != nil {
		return nil, err
	}
	c, err := s.Get(ctx, orgID, campaignID)
	if err != nil {
		return nil, err
	}
	if c.TemplateID == nil {
		return nil, apperr.Invalidf("the campaign has no template")
	}
	t, err := s.templates.Get(ctx, orgID, *c.TemplateID)
	if err != nil {
		return nil, err
	}
	values, err := s.testValues(ctx, c, t, in)
	if err != nil {
		return nil, err
	}
	out := make([]TestSent, len(numbers))
	for i, n := range numbers {
		out[i].PhoneNumber = n
		id, err := s.tests.SendTestTemplate(ctx, orgID, by, t.ID, n, values)
		if err != nil {
			if apperr.KindOf(err) == apperr.Internal {
				return nil, err
			}
			out[i].Error = err.Error()
			continue
		}
		out[i].MessageID = &id
	}
	return out, nil
}

// testNumbers are the test send's numbers: 1 to MaxTestNumbers, each a
// valid number, none twice.
func testNumbers(in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, apperr.Invalidf("phone_numbers: give 1 to %d numbers", MaxTestNumbers)
	}
	if len(in) > MaxTestNumbers {
		return nil, apperr.Invalidf("phone_numbers: at most %d numbers per test send", MaxTestNumbers)
	}
	out := make([]string, 0, len(in))
	for _, raw := range in {
		n, err := phone.Normalize(raw)
		if err != nil {
			return nil, apperr.Invalidf("phone_numbers: %q: %v", raw, err)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// testValues are the placeholders' values: a recipient's (by the
// campaign's mapping) or the given ones; every placeholder needs one.
func (s *Service) testValues(ctx context.Context, c *models.Campaign, t *models.Template, in TestSendInput) (map[string]string, error) {
	if in.RecipientID != nil {
		var rec models.CampaignRecipient
		err := s.db.WithContext(ctx).Where("campaign_id = ?", c.ID).Take(&rec, "id = ?", *in.RecipientID).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return nil, apperr.NotFoundf("recipient not found in this campaign")
		}
		if err != nil {
			return nil, err
		}
		values, missing := s.values(c, t, &rec)
		if len(missing) > 0 {
			return nil, apperr.Invalidf("the recipient has no value for %s", strings.Join(missing, ", "))
		}
		return values, nil
	}
	values := map[string]string{}
	var missing []string
	for _, key := range templates.Keys(templates.Slots(t)) {
		v := strings.TrimSpace(in.Values[key])
		if v == "" {
			missing = append(missing, key)
			continue
		}
		values[key] = v
	}
	if len(missing) > 0 {
		return nil, apperr.Invalidf("values: give a value for %s (or a recipient_id)", strings.Join(missing, ", "))
	}
	if extra := unknownKeys(in.Values, values); len(extra) > 0 {
		return nil, apperr.Invalidf("values: the template has no placeholder %s", strings.Join(extra, ", "))
	}
	return values, nil
}

func unknownKeys(given, known map[string]string) []string {
	var out []string
	for k := range given {
		if _, ok := known[k]; !ok {
			out = append(out, fmt.Sprintf("%q", k))
		}
	}
	slices.Sort(out)
	return out
}
