package notify

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// frequencySpecs are the Scheduler Event frequencies as cron specs, in
// UTC, as Frappe's scheduler defines them: hourly at minute 0, daily at
// midnight, weekly at Sunday midnight, monthly at midnight of the 1st.
var frequencySpecs = map[string]string{
	"All":     "* * * * *",
	"Hourly":  "0 * * * *",
	"Daily":   "0 0 * * *",
	"Weekly":  "0 0 * * 0",
	"Monthly": "0 0 1 * *",
}

// due reports whether a notification of frequency freq (and cronFormat
// for Cron) fires at tick, a whole minute of UTC: whether its schedule's
// next time after the minute before is tick itself.
func due(freq, cronFormat string, tick time.Time) (bool, error) {
	spec, ok := frequencySpecs[freq]
	if freq == "Cron" {
		spec, ok = cronFormat, true
	}
	if !ok {
		return false, fmt.Errorf("unknown event frequency %q", freq)
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return false, fmt.Errorf("cron format %q: %w", spec, err)
	}
	tick = tick.UTC().Truncate(time.Minute)
	return sched.Next(tick.Add(-time.Second)).Equal(tick), nil
}
