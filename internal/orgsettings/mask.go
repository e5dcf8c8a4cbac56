package orgsettings

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/infra/phone"
)

// Masker hides contacts' phone numbers and names when the organization asks
// for it (mask_phone_numbers). Every answer that shows a contact's number or
// name (contacts, template sends, campaign recipients) goes through one; the
// zero Masker shows everything.
type Masker struct {
	hide bool
}

// Hides reports whether the organization masks numbers, for answers
// rendered outside this package (the resource API's documents).
func (m Masker) Hides() bool { return m.hide }

// Phone renders a phone number, masked when the organization wants it.
func (m Masker) Phone(s string) string {
	if m.hide {
		return phone.Mask(s)
	}
	return s
}

// Name renders a contact's name, masked when the organization wants it.
func (m Masker) Name(s string) string {
	if m.hide {
		return phone.MaskName(s)
	}
	return s
}

// Masks reports whether the organization masks numbers: then a search may
// match a phone number only whole (phone.NumberLike).
func (m Masker) Masks() bool { return m.hide }

// Masker returns the organization's masker, from its current settings
// (through the cache when there is one: exact, see WithMaskerCache).
func (s *Service) Masker(ctx context.Context, orgID uuid.UUID) (Masker, error) {
	load := func() (Masker, error) {
		_, st, err := s.Get(ctx, orgID)
		return Masker{hide: st.MaskPhoneNumbers}, err
	}
	if s.maskers == nil {
		return load()
	}
	return s.maskers.Get(ctx, orgID, []string{versionKey(orgID)}, load)
}

// Timezone answers the organization's timezone name (the chatbot's
// business hours, campaigns' recurrences and the dashboard overview's days
// are in it).
func (s *Service) Timezone(ctx context.Context, orgID uuid.UUID) (string, error) {
	_, st, err := s.Get(ctx, orgID)
	return st.Timezone, err
}
