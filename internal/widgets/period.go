package widgets

import (
	"time"

	"wharf/internal/infra/apperr"
)

// MaxPeriodDays bounds a widget's period (a leap year): a figure is one
// statement over the period and the one before it.
const MaxPeriodDays = 366

const dateLayout = "2006-01-02"

// Period is a range of whole UTC days, both ends included.
type Period struct{ From, To time.Time }

// Days is the number of days in the period.
func (p Period) Days() int { return int(p.To.Sub(p.From).Hours()/24) + 1 }

// end is the first instant after the period.
func (p Period) end() time.Time { return p.To.AddDate(0, 0, 1) }

// Previous is the period of the same length that ends the day before From.
func (p Period) Previous() Period {
	return Period{From: p.From.AddDate(0, 0, -p.Days()), To: p.From.AddDate(0, 0, -1)}
}

// ParsePeriod reads from and to (YYYY-MM-DD, UTC days, inclusive). The
// default is the current month so far: from the 1st to today, so that the
// previous period (as many days just before) compares like with like; a
// missing from is the 1st of to's month, a missing to is today.
func ParsePeriod(from, to string, now time.Time) (Period, error) {
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var p Period
	var err error
	if to == "" {
		p.To = today
	} else if p.To, err = time.Parse(dateLayout, to); err != nil {
		return p, apperr.Invalidf("to must be a date YYYY-MM-DD, not %q", to)
	}
	if from == "" {
		p.From = time.Date(p.To.Year(), p.To.Month(), 1, 0, 0, 0, 0, time.UTC)
	} else if p.From, err = time.Parse(dateLayout, from); err != nil {
		return p, apperr.Invalidf("from must be a date YYYY-MM-DD, not %q", from)
	}
	if p.From.After(p.To) {
		return p, apperr.Invalidf("from (%s) is after to (%s)", p.From.Format(dateLayout), p.To.Format(dateLayout))
	}
	if p.Days() > MaxPeriodDays {
		return p, apperr.Invalidf("the period is longer than %d days", MaxPeriodDays)
	}
	return p, nil
}
