package metrics

import "github.com/prometheus/client_golang/prometheus"

// callMetrics are the callbridge's families, registered by WatchCalls: only
// the callbridge process has them.
type callMetrics struct {
	active  prometheus.Gauge
	started *prometheus.CounterVec
	ended   *prometheus.CounterVec
}

// WatchCalls registers the callbridge's families: wharf_calls_active,
// wharf_calls_started_total{direction}, wharf_calls_ended_total{by}.
func (s *Set) WatchCalls() {
	if s == nil {
		return
	}
	s.calls = &callMetrics{
		active: prometheus.NewGauge(prometheus.GaugeOpts{Name: "wharf_calls_active",
			Help: "Calls this callbridge instance carries now."}),
		started: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wharf_calls_started_total",
			Help: "Calls this callbridge answered or placed, by direction."}, []string{"direction"}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "wharf_calls_ended_total",
			Help: "Calls this callbridge ended, by who ended them: caller, agent or system (timeouts, shutdown)."}, []string{"by"}),
	}
	s.reg.MustRegister(s.calls.active, s.calls.started, s.calls.ended)
}

// CallsActive sets how many calls the instance carries.
func (s *Set) CallsActive(n int) {
	if s != nil && s.calls != nil {
		s.calls.active.Set(float64(n))
	}
}

// CallStarted counts an answered or placed call.
func (s *Set) CallStarted(direction string) {
	if s != nil && s.calls != nil {
		s.calls.started.WithLabelValues(direction).Inc()
	}
}

// CallEnded counts an ended call by who ended it.
func (s *Set) CallEnded(by string) {
	if s != nil && s.calls != nil {
		s.calls.ended.WithLabelValues(by).Inc()
	}
}
