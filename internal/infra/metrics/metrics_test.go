package metrics

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	dto "github.com/prometheus/client_model/go"

	"wharf/internal/testenv"
)

// recordAll records one fact of every kind, so that every family has a
// series.
func recordAll(s *Set) {
	s.HTTPRequest("/api/contacts/:id", "GET", 404, 3*time.Millisecond)
	s.Job("campaign:lane", JobWait, time.Millisecond)
	s.SchedulerTick("campaign sweep", TickEnqueued)
	s.CampaignSends(SendSent, 3)
	s.CampaignWait(WaitPace, 1500*time.Millisecond)
	s.InboundStored("messages")
	s.InboundApplied("messages", time.Now().Add(-2*time.Second))
	s.WebhookDelivery(DeliveryRetry, 20*time.Millisecond)
	s.WatchLeader(func() bool { return true })
	s.WatchCalls()
	s.CallsActive(2)
	s.CallStarted("incoming")
	s.CallEnded("caller")
}

func gather(t *testing.T, s *Set) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// Each method records into its family with the documented labels, names
// follow the conventions (wharf_ prefix, _total counters, _seconds
// durations), and a family without facts is absent rather than zero.
func TestFamiliesNamesAndLabels(t *testing.T) {
	s := New()
	if fams := gather(t, s); fams["wharf_http_requests_total"] != nil || fams["go_goroutines"] == nil || fams["process_cpu_seconds_total"] == nil {
		t.Fatal("a fresh Set must show the runtime and process, and no Wharf series")
	}
	recordAll(s)
	fams := gather(t, s)
	want := map[string]struct {
		typ    dto.MetricType
		labels map[string]string
		value  float64 // counter value, gauge value or histogram sample count
	}{
		"wharf_http_requests_total":               {dto.MetricType_COUNTER, map[string]string{"route": "/api/contacts/:id", "method": "GET", "code": "404"}, 1},
		"wharf_http_request_duration_seconds":     {dto.MetricType_HISTOGRAM, map[string]string{"route": "/api/contacts/:id", "method": "GET"}, 1},
		"wharf_jobs_processed_total":              {dto.MetricType_COUNTER, map[string]string{"task_type": "campaign:lane", "outcome": "wait"}, 1},
		"wharf_job_duration_seconds":              {dto.MetricType_HISTOGRAM, map[string]string{"task_type": "campaign:lane", "outcome": "wait"}, 1},
		"wharf_scheduler_ticks_total":             {dto.MetricType_COUNTER, map[string]string{"entry": "campaign sweep", "outcome": "enqueued"}, 1},
		"wharf_scheduler_leader":                  {dto.MetricType_GAUGE, map[string]string{}, 1},
		"wharf_campaign_sends_total":              {dto.MetricType_COUNTER, map[string]string{"outcome": "sent"}, 3},
		"wharf_campaign_waits_total":              {dto.MetricType_COUNTER, map[string]string{"reason": "pace"}, 1},
		"wharf_campaign_wait_seconds_total":       {dto.MetricType_COUNTER, map[string]string{"reason": "pace"}, 1.5},
		"wharf_inbound_events_stored_total":       {dto.MetricType_COUNTER, map[string]string{"event_type": "messages"}, 1},
		"wharf_inbound_events_applied_total":      {dto.MetricType_COUNTER, map[string]string{"event_type": "messages"}, 1},
		"wharf_inbound_event_lag_seconds":         {dto.MetricType_HISTOGRAM, map[string]string{"event_type": "messages"}, 1},
		"wharf_webhook_deliveries_total":          {dto.MetricType_COUNTER, map[string]string{"outcome": "retry"}, 1},
		"wharf_webhook_delivery_duration_seconds": {dto.MetricType_HISTOGRAM, map[string]string{"outcome": "retry"}, 1},
		"wharf_calls_active":                      {dto.MetricType_GAUGE, map[string]string{}, 2},
		"wharf_calls_started_total":               {dto.MetricType_COUNTER, map[string]string{"direction": "incoming"}, 1},
		"wharf_calls_ended_total":                 {dto.MetricType_COUNTER, map[string]string{"by": "caller"}, 1},
	}
	for name, w := range want {
		f := fams[name]
		if f == nil || len(f.GetMetric()) != 1 {
			t.Errorf("%s: %v", name, f)
			continue
		}
		m := f.GetMetric()[0]
		var v float64
		switch f.GetType() {
		case dto.MetricType_COUNTER:
			v = m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			v = m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			v = float64(m.GetHistogram().GetSampleCount())
		}
		if f.GetType() != w.typ || !maps.Equal(labels(m), w.labels) || v != w.value {
			t.Errorf("%s: %s %v = %v, want %s %v = %v", name, f.GetType(), labels(m), v, w.typ, w.labels, w.value)
		}
		switch {
		case !strings.HasPrefix(name, "wharf_"):
			t.Errorf("%s: no wharf_ prefix", name)
		case f.GetType() == dto.MetricType_COUNTER && !strings.HasSuffix(name, "_total"):
			t.Errorf("%s: a counter without _total", name)
		case f.GetType() == dto.MetricType_HISTOGRAM && !strings.HasSuffix(name, "_seconds"):
			t.Errorf("%s: a duration not in _seconds", name)
		}
	}
	for name := range fams {
		if _, ok := want[name]; !ok && strings.HasPrefix(name, "wharf_") {
			t.Errorf("%s is not covered by this test", name)
		}
	}
	lag := fams["wharf_inbound_event_lag_seconds"].GetMetric()[0].GetHistogram().GetSampleSum()
	if lag < 2 || lag > 10 {
		t.Errorf("lag of an event stored 2 s ago: %v s", lag)
	}
}

// Labels stay bounded whatever clients send: a request that matched no
// route is "unmatched" (never its raw path) and a made-up method is OTHER.
func TestHTTPLabelsAreBounded(t *testing.T) {
	s := New()
	s.HTTPRequest("", "BREW", 405, time.Millisecond)
	s.HTTPRequest("", "GET", 404, time.Millisecond)
	var got []string
	for _, m := range gather(t, s)["wharf_http_requests_total"].GetMetric() {
		l := labels(m)
		got = append(got, l["route"]+" "+l["method"]+" "+l["code"])
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"unmatched GET 404", "unmatched OTHER 405"}) {
		t.Fatalf("series %v", got)
	}
}

// A nil Set records nothing and does not panic: domain tests build
// services without metrics.
func TestNilSetRecordsNothing(t *testing.T) {
	var s *Set
	recordAll(s)
	s.WatchQueues(nil)
}

// The dashboard is importable (a Prometheus datasource variable that every
// panel uses) and queries only metrics that the processes expose.
func TestDashboardQueriesExposedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../../deploy/grafana/wharf.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title      string `json:"title"`
		UID        string `json:"uid"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query string `json:"query"`
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource struct {
				Type string `json:"type"`
				UID  string `json:"uid"`
			} `json:"datasource"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("deploy/grafana/wharf.json: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Templating.List) == 0 || d.Templating.List[0].Name != "datasource" ||
		d.Templating.List[0].Type != "datasource" || d.Templating.List[0].Query != "prometheus" {
		t.Fatalf("the dashboard needs a title, a uid and a Prometheus datasource variable: %+v", d.Templating)
	}

	// Every family a process can expose: Wharf's, the runtime's, and
	// asynq's queue metrics (which need a queue in Redis to show).
	s := New()
	recordAll(s)
	url := testenv.RedisURL(t)
	rdb := testenv.Redis(t, url)
	rc := asynq.RedisClientOpt{Addr: rdb.Options().Addr, DB: rdb.Options().DB}
	client := asynq.NewClient(rc)
	defer client.Close()
	if _, err := client.Enqueue(asynq.NewTask("test:probe", nil)); err != nil {
		t.Fatal(err)
	}
	insp := asynq.NewInspector(rc)
	defer insp.Close()
	s.WatchQueues(insp)
	exposed := map[string]bool{}
	for name, f := range gather(t, s) {
		exposed[name] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				exposed[name+suffix] = true
			}
		}
	}
	metric := regexp.MustCompile(`\b(?:wharf|asynq|go|process)_[a-z_]+\b`)
	queried := map[string]bool{}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %+v, %d queries", p.Title, p.Datasource, len(p.Targets))
		}
		for _, target := range p.Targets {
			for _, name := range metric.FindAllString(target.Expr, -1) {
				queried[name] = true
				if !exposed[name] {
					t.Errorf("panel %q queries %s, which no process exposes", p.Title, name)
				}
			}
		}
	}
	// The main figures of every area are on it.
	for _, name := range []string{"wharf_http_requests_total", "wharf_http_request_duration_seconds_bucket", "wharf_jobs_processed_total",
		"wharf_job_duration_seconds_bucket", "asynq_queue_size", "asynq_queue_latency_seconds", "wharf_campaign_sends_total",
		"wharf_inbound_event_lag_seconds_bucket", "wharf_webhook_deliveries_total", "wharf_calls_active", "wharf_calls_started_total",
		"wharf_calls_ended_total"} {
		if !queried[name] {
			t.Errorf("the dashboard does not show %s", name)
		}
	}
}
