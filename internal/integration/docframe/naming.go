package docframe

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Naming (Frappe's autoname):
//   - "hash" (the default): ten random hex characters;
//   - "field:<fieldname>": the value of that field;
//   - "naming_series:": the document's naming_series field when the DocType
//     has one and it is set, else the DocType's naming_series property;
//   - a series pattern itself ("INV-.YYYY.-.#####");
//   - "prompt": the name the client gives.
//
// A series pattern is split on dots: YYYY, YY, MM and DD become the date's
// parts, a run of # the counter (zero-padded to its length), anything else
// is literal. The counter belongs to the expanded text before it (the
// prefix: INV-2026-), per organization, and is taken atomically in the
// document's transaction.

const maxNameLen = 140

// hashName is ten hex characters of seed's hash (deterministic names), or
// of random bytes when seed is empty.
func hashName(seed string) string {
	if seed == "" {
		b := make([]byte, 5)
		_, _ = rand.Read(b)
		return hex.EncodeToString(b)
	}
	sum := sha256.Sum256([]byte(seed))
	return hex.EncodeToString(sum[:5])
}

// isSeriesPattern reports whether autoname is a pattern rather than a
// naming rule.
func isSeriesPattern(autoname string) bool {
	return strings.Contains(autoname, "#") || (strings.Contains(autoname, ".") && !strings.Contains(autoname, ":"))
}

func validateAutoname(dt *DocType) error {
	a := dt.Autoname
	switch {
	case a == "hash" || a == "prompt":
		return nil
	case strings.HasPrefix(a, "field:"):
		fn := strings.TrimSpace(strings.TrimPrefix(a, "field:"))
		f, ok := fieldByName(dt, fn)
		if !ok || (f.kind() != kindText && f.kind() != kindInt) {
			return Validationf("autoname %s must name a text or Int field of the DocType", show(a))
		}
		dt.Autoname = "field:" + fn
		return nil
	case a == "naming_series:":
		if f, ok := fieldByName(dt, "naming_series"); ok && f.Fieldtype == TypeSelect {
			for _, o := range f.selectOptions() {
				if o != "" {
					if _, _, _, err := parseSeries(o); err != nil {
						return err
					}
				}
			}
			return nil
		}
		if dt.NamingSeries == "" {
			return Validationf("autoname naming_series: needs a naming_series (such as INV-.YYYY.-.#####), or a Select field naming_series with the series as options")
		}
		_, _, _, err := parseSeries(dt.NamingSeries)
		return err
	case isSeriesPattern(a):
		_, _, _, err := parseSeries(a)
		return err
	}
	return Validationf("autoname %s must be hash, prompt, field:<fieldname>, naming_series: or a series such as INV-.YYYY.-.#####", show(a))
}

// seriesPart is one dot-separated part of a pattern.
type seriesPart struct {
	literal string
	date    string // YYYY, YY, MM, DD
	counter int    // width of the # run
}

// parseSeries splits a pattern into the parts before the counter, the
// counter's width, and the parts after it. A pattern without a counter gets
// one of five digits at its end, as Frappe does.
func parseSeries(pattern string) (before []seriesPart, width int, after []seriesPart, err error) {
	if pattern == "" || len(pattern) > 100 || strings.Contains(pattern, "/") {
		return nil, 0, nil, Validationf("naming series %s must be 1 to 100 characters without /", show(pattern))
	}
	for _, p := range strings.Split(pattern, ".") {
		var part seriesPart
		switch {
		case p == "":
			continue
		case p == "YYYY" || p == "YY" || p == "MM" || p == "DD":
			part.date = p
		case strings.Trim(p, "#") == "":
			if width > 0 {
				return nil, 0, nil, Validationf("naming series %s has more than one counter (#)", show(pattern))
			}
			width = len(p)
			continue
		case strings.Contains(p, "#"):
			return nil, 0, nil, Validationf("naming series %s: put the counter (#####) in a part of its own, between dots", show(pattern))
		default:
			part.literal = p
		}
		if width > 0 {
			after = append(after, part)
		} else {
			before = append(before, part)
		}
	}
	if width == 0 {
		width = 5
	}
	if width > 18 {
		return nil, 0, nil, Validationf("naming series %s: the counter has at most 18 digits", show(pattern))
	}
	return before, width, after, nil
}

func expandParts(parts []seriesPart, now time.Time) string {
	var b strings.Builder
	for _, p := range parts {
		switch p.date {
		case "YYYY":
			b.WriteString(now.Format("2006"))
		case "YY":
			b.WriteString(now.Format("06"))
		case "MM":
			b.WriteString(now.Format("01"))
		case "DD":
			b.WriteString(now.Format("02"))
		default:
			b.WriteString(p.literal)
		}
	}
	return b.String()
}

// nextInSeries takes the next name of a series in tx.
func nextInSeries(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, pattern string, now time.Time) (string, error) {
	before, width, after, err := parseSeries(pattern)
	if err != nil {
		return "", err
	}
	prefix := expandParts(before, now)
	var current int64
	err = tx.WithContext(ctx).Raw(`INSERT INTO docframe_series (organization_id, prefix, current) VALUES (?, ?, 1)
		ON CONFLICT (organization_id, prefix) DO UPDATE SET current = docframe_series.current + 1
		RETURNING current`, orgID, prefix).Scan(&current).Error
	if err != nil {
		return "", err
	}
	num := strconv.FormatInt(current, 10)
	if len(num) < width {
		num = strings.Repeat("0", width-len(num)) + num
	}
	return prefix + num + expandParts(after, now), nil
}

// newName names a new document of m: its rule, applied to the document as
// the before_insert hooks left it.
func (s *Service) newName(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, m *meta, d *Doc, given string) (string, error) {
	a := m.Autoname
	var name string
	switch {
	case a == "hash":
		name = hashName("")
	case a == "prompt":
		if given == "" {
			return "", mandatoryf("%s is named by the client: name is required", m.Name)
		}
		name = given
	case strings.HasPrefix(a, "field:"):
		fn := strings.TrimPrefix(a, "field:")
		v := d.Fields[fn]
		if v == nil || fmt.Sprint(v) == "" {
			f := m.byName[fn]
			return "", mandatoryf("Value missing for %s: %s (it names the document)", m.Name, f.label())
		}
		name = strings.TrimSpace(fmt.Sprint(v))
	default:
		pattern := a
		if a == "naming_series:" {
			pattern = m.NamingSeries
			if _, ok := m.byName["naming_series"]; ok {
				if v, _ := d.Fields["naming_series"].(string); v != "" {
					pattern = v
				}
			}
			if pattern == "" {
				return "", mandatoryf("Value missing for %s: naming_series", m.Name)
			}
		}
		var err error
		if name, err = nextInSeries(ctx, tx, orgID, pattern, s.now()); err != nil {
			return "", err
		}
	}
	return name, checkName(name)
}

// checkName keeps names usable as one path segment.
func checkName(name string) error {
	if name == "" || len(name) > maxNameLen || strings.Contains(name, "/") || strings.IndexFunc(name, unicode.IsControl) >= 0 ||
		strings.TrimSpace(name) != name {
		return Validationf("name %s must be 1 to %d characters, without / or control characters or surrounding spaces", show(name), maxNameLen)
	}
	return nil
}
