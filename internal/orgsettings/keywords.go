package orgsettings

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
)

// Opt-out and opt-in keywords (docs/CAMPAIGNS.md, Opt-outs). An incoming
// message whose whole text, trimmed, is one of them (case-insensitive)
// opts its contact out of marketing, or back in.

// DefaultOptOutKeywords are the opt-out words of an organization that set
// none: STOP and UNSUBSCRIBE, and STOP in the languages most of our
// organizations write in (German and Scandinavian STOPP; Spanish BAJA;
// Spanish and Portuguese CANCELAR and PARAR; French ARRÊT, with and without
// its accent, as people type it on phones).
var DefaultOptOutKeywords = []string{"STOP", "UNSUBSCRIBE", "STOPP", "BAJA", "CANCELAR", "PARAR", "ARRET", "ARRÊT"}

// DefaultOptInKeywords are the opt-in words of an organization that set
// none: START, and Spanish ALTA and Spanish/Portuguese INICIAR.
var DefaultOptInKeywords = []string{"START", "ALTA", "INICIAR"}

// Keyword limits.
const (
	MaxKeywords         = 20   // per list
	MaxKeywordLength    = 30   // characters
	MaxConfirmationText = 1024 // characters
)

// Keywords are an organization's opt-out and opt-in words, and the texts
// that confirm each ("" sends none).
type Keywords struct {
	OptOut             []string
	OptIn              []string
	OptOutConfirmation string
	OptInConfirmation  string
}

// KeywordsOf is the keywords part of the effective settings.
func KeywordsOf(st Settings) Keywords {
	return Keywords{OptOut: st.OptOutKeywords, OptIn: st.OptInKeywords, OptOutConfirmation: st.OptOutConfirmation,
		OptInConfirmation: st.OptInConfirmation}
}

// Match tells whether text is a keyword, and which: optOut is true for an
// opt-out keyword, false for an opt-in one.
func (k Keywords) Match(text string) (optOut, matched bool) {
	text = strings.TrimSpace(text)
	if text == "" || len(text) > 4*MaxKeywordLength {
		return false, false
	}
	for _, w := range k.OptOut {
		if strings.EqualFold(w, text) {
			return true, true
		}
	}
	for _, w := range k.OptIn {
		if strings.EqualFold(w, text) {
			return false, true
		}
	}
	return false, false
}

// Keywords answers the organization's keywords, from the cache when the
// service keeps one (WithKeywordCache: exact across processes), else read
// through db. A miss loads through db, the caller's transaction (the
// incoming message's), not a second connection of the pool, which the
// caller's locks could leave it waiting for; at READ COMMITTED that reads
// what is committed, and no caller's transaction writes settings.
func (s *Service) Keywords(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (Keywords, error) {
	load := func() (Keywords, error) { return KeywordsIn(ctx, db, orgID) }
	if s.keywords == nil {
		return load()
	}
	return s.keywords.Get(ctx, orgID, []string{versionKey(orgID)}, load)
}

// KeywordsIn reads the organization's keywords through db.
func KeywordsIn(ctx context.Context, db *gorm.DB, orgID uuid.UUID) (Keywords, error) {
	_, st, err := loadOrg(ctx, db, orgID)
	if err != nil {
		return Keywords{}, err
	}
	return KeywordsOf(st.resolve(false)), nil
}

// cleanKeywords validates a list of keywords: each trimmed and non-empty,
// at most MaxKeywordLength characters, no word twice (whatever its case),
// at most MaxKeywords of them and, for the opt-out list, at least one (an
// organization cannot leave its contacts without a way out).
func cleanKeywords(field string, words []string, atLeastOne bool) ([]string, error) {
	if len(words) > MaxKeywords {
		return nil, apperr.Invalidf("%s must have at most %d keywords", field, MaxKeywords)
	}
	if atLeastOne && len(words) == 0 {
		return nil, apperr.Invalidf("%s must have at least one keyword", field)
	}
	out := make([]string, 0, len(words))
	for i, w := range words {
		w = strings.TrimSpace(w)
		switch {
		case w == "":
			return nil, apperr.Invalidf("%s[%d] is empty", field, i)
		case len([]rune(w)) > MaxKeywordLength:
			return nil, apperr.Invalidf("%s[%d] must be at most %d characters", field, i, MaxKeywordLength)
		}
		for _, prev := range out {
			if strings.EqualFold(prev, w) {
				return nil, apperr.Invalidf("%s has %q twice", field, w)
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// checkKeywords validates the keyword part of an update into patch, against
// the stored settings for the lists it does not change (a word cannot both
// opt out and opt in).
func checkKeywords(u Update, cur Settings, patch *stored) error {
	optOut, optIn := cur.OptOutKeywords, cur.OptInKeywords
	if u.OptOutKeywords != nil {
		w, err := cleanKeywords("opt_out_keywords", *u.OptOutKeywords, true)
		if err != nil {
			return err
		}
		optOut, patch.OptOutKeywords = w, &w
	}
	if u.OptInKeywords != nil {
		w, err := cleanKeywords("opt_in_keywords", *u.OptInKeywords, false)
		if err != nil {
			return err
		}
		optIn, patch.OptInKeywords = w, &w
	}
	for _, out := range optOut {
		for _, in := range optIn {
			if strings.EqualFold(out, in) {
				return apperr.Invalidf("%q cannot be both an opt-out and an opt-in keyword", in)
			}
		}
	}
	for _, f := range []struct {
		name string
		v    *string
		dst  **string
	}{{"opt_out_confirmation", u.OptOutConfirmation, &patch.OptOutConfirmation}, {"opt_in_confirmation", u.OptInConfirmation, &patch.OptInConfirmation}} {
		if f.v == nil {
			continue
		}
		text := strings.TrimSpace(*f.v)
		if len([]rune(text)) > MaxConfirmationText {
			return apperr.Invalidf("%s must be at most %d characters", f.name, MaxConfirmationText)
		}
		*f.dst = &text
	}
	return nil
}
