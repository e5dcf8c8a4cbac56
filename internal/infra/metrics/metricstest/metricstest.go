// Package metricstest reads a /metrics endpoint for tests: the tests scrape
// the listeners production serves instead of reaching into collectors.
package metricstest

import (
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Families is one scrape: the metric families by name, and the raw text.
type Families struct {
	ByName map[string]*dto.MetricFamily
	Text   string
}

// Scrape GETs url (a /metrics endpoint) and parses the text format; it
// fails the test unless the answer is a 200 in that format.
func Scrape(t testing.TB, url string) Families {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("scrape %s: %v", url, err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("scrape %s: %s: %s", url, res.Status, b)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
	if err != nil {
		t.Fatalf("scrape %s: %v\n%s", url, err, b)
	}
	return Families{ByName: fams, Text: string(b)}
}

// Has reports whether the family exists (it has at least one series).
func (f Families) Has(name string) bool {
	fam, ok := f.ByName[name]
	return ok && len(fam.GetMetric()) > 0
}

// Value sums the series of the family whose labels include labels: counter
// and gauge values, a histogram's sample count.
func (f Families) Value(name string, labels map[string]string) float64 {
	fam, ok := f.ByName[name]
	if !ok {
		return 0
	}
	var sum float64
	for _, m := range fam.GetMetric() {
		if !matches(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		case m.Untyped != nil:
			sum += m.Untyped.GetValue()
		}
	}
	return sum
}

// LabelValues lists the values the label takes in the family.
func (f Families) LabelValues(name, label string) []string {
	var out []string
	for _, m := range f.ByName[name].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == label {
				out = append(out, l.GetValue())
			}
		}
	}
	return out
}

func matches(m *dto.Metric, want map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}
