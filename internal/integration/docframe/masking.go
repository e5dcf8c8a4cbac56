package docframe

import (
	"strings"

	"wharf/internal/infra/paging"
	"wharf/internal/infra/phone"
)

// The masking rule of lists. When the caller's organization masks numbers
// (mask_phone_numbers), a guarded DocType's masked fields (Guard.Phones and
// Guard.Names) read masked, and a list must not tell what the mask hides
// either: which documents a fragment, a pattern or a range selects, or the
// order of the values, would give the masked digits back a few at a time.
// So a list compares them only as the core API's searches compare numbers
// (internal/contacts SearchCondition): whole.
//
//   - A number field (to, mobile_number) is compared with =, !=, in and
//     not in against whole phone numbers, normalised as the core normalises
//     them (phone.Normalize: "+1 (555) 018-0001" is +15550180001, which is
//     how the integration stores numbers), and with is set / is not set.
//     like, not like, >, >=, <, <= and between are refused.
//   - A name field (recipient_name), masked only when it looks like a
//     number, is compared with =, !=, in and not in as it is (a whole
//     value), is set / is not set, and like / not like unless the pattern's
//     own characters are only digits and phone punctuation (phone.NumberLike:
//     such a pattern can only match inside a name that is a number; any
//     other character can never match one). Ranges are refused.
//   - Neither orders a list, and search_term matches a number field only
//     with a whole number, a name field only with a term that is not
//     NumberLike (the core's contact search, exactly).
//   - One request compares masked fields with at most MaxMaskedNumbers
//     whole numbers (filters, or_filters and search_term together): an in
//     list of a thousand candidates would try a thousand numbers per request
//     where the core's search tries one.
//
// A refusal is a ValidationError (417) that depends on the request only,
// never on what is stored, so it reveals nothing either. Without masking
// nothing of this applies.

// MaxMaskedNumbers is the most whole numbers one list compares masked
// fields with.
const MaxMaskedNumbers = 10

// maskedf is the refusal of a comparison a masked field does not admit.
func maskedf(field, why string) *Error {
	return Validationf("%s is masked (mask_phone_numbers): %s", field, why)
}

// wholeOnly is what a number field admits, for the refusals' messages.
const wholeOnly = "only =, !=, in and not in with whole phone numbers, and is set / is not set, can be used on it"

// maskedFilter checks one filter (op normalised by condition) on a masked
// field of kind k: it answers the value to compare, with whole numbers
// normalised, and how many whole numbers it compares; or the refusal.
func maskedFilter(c column, k maskKind, op string, value any) (any, int, error) {
	switch op {
	case "is", "is not":
		return value, 0, nil // whether a value is set is no digit
	case "=", "!=":
		if k == maskName {
			return value, looksLikePhone(value), nil
		}
		n, err := wholeNumber(c.name, value)
		return n, 1, err
	case "in", "not in":
		items, err := listValues(value)
		if err != nil {
			return value, 0, nil // compare refuses it in its own words
		}
		out := make([]any, len(items))
		count := 0
		for i, it := range items {
			if k == maskName {
				out[i] = it
				count += looksLikePhone(it)
				continue
			}
			if out[i], err = wholeNumber(c.name, it); err != nil {
				return nil, 0, err
			}
			count++
		}
		return out, count, nil
	case "like", "not like":
		if k == maskName {
			s, ok := scalarText(value)
			if !ok || !phone.NumberLike(likeLiterals(s)) {
				return value, 0, nil
			}
			return nil, 0, maskedf(c.name, "a "+op+" pattern made only of digits and phone punctuation ("+show(s)+
				") would reveal a masked name a few digits at a time; compare the whole name with =")
		}
	}
	if k == maskName {
		return nil, 0, maskedf(c.name, op+" would reveal masked names a few digits at a time; compare whole names with = or in")
	}
	return nil, 0, maskedf(c.name, op+" would reveal masked digits; "+wholeOnly)
}

// wholeNumber is v as a whole phone number, normalised (E.164).
func wholeNumber(field string, v any) (string, error) {
	s, _ := scalarText(v)
	n, err := phone.Normalize(s)
	if err != nil {
		return "", maskedf(field, "it is compared only with a whole phone number in international format (+15551234567), and "+
			show(s)+" is not one ("+wholeOnly+")")
	}
	return n, nil
}

// looksLikePhone counts v as a whole number compared with a name (1) when
// it could equal a name that is masked.
func looksLikePhone(v any) int {
	if s, ok := scalarText(v); ok && phone.LooksLikePhone(s) {
		return 1
	}
	return 0
}

// likeLiterals are the characters a like pattern must match as they are:
// the pattern without its wildcards (% and _), escapes (\x) read as x.
func likeLiterals(pattern string) string {
	var b strings.Builder
	escaped := false
	for _, r := range pattern {
		switch {
		case escaped:
			b.WriteRune(r)
			escaped = false
		case r == '\\':
			escaped = true
		case r == '%' || r == '_':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// searchCondition is search_term's condition: the term anywhere in the
// name, the title field and the search fields (case-insensitive), except
// that a masked number field matches only the whole number the term is
// (when it is NumberLike and a valid number) and a masked name field only
// a term that is not NumberLike.
func (src *source) searchCondition(term string) cond {
	like := paging.Contains(term)
	out := cond{sql: "name ILIKE ?", args: []any{like}}
	numberLike := phone.NumberLike(term)
	whole := ""
	if numberLike {
		whole, _ = phone.Normalize(term)
	}
	for _, c := range src.search {
		switch src.masked[c.name] {
		case maskNumber:
			if whole == "" {
				continue
			}
			out.sql += " OR " + c.expr + " = ?"
			out.args = append(out.args, whole)
			out.numbers = 1
		case maskName:
			if numberLike {
				continue
			}
			fallthrough
		default:
			out.sql += " OR " + c.text + " ILIKE ?"
			out.args = append(out.args, like)
		}
	}
	out.sql = "(" + out.sql + ")"
	return out
}
