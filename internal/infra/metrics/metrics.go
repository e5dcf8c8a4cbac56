// Package metrics owns Wharf's Prometheus metrics: one Set per process,
// created in app/ and passed to the HTTP shell, the worker, the scheduler
// and the domains at construction. The domains call one method per fact
// (CampaignSends, InboundApplied...) and never see a Prometheus type, so
// the names, labels and buckets live here, in one place, and
// docs/ARCHITECTURE.md ("Metrics") lists them.
//
// A Set has its own registry rather than Prometheus's global default one:
// two Sets (an api and a worker in one test binary) never collide, and
// /metrics shows exactly what the process registered. Every family is
// registered in every process; a labelled family appears in the output only
// once the process recorded something in it, so each process shows what it
// does. A nil *Set records nothing, which keeps domain tests free of
// metrics wiring.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/hibiken/asynq"
	asynqmetrics "github.com/hibiken/asynq/x/metrics"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// JobOutcome is how one run of a job ended.
type JobOutcome string

// Job outcomes. A rate-limit wait is neither a failure nor a retry: the job
// asked to run again later and keeps its retry budget.
const (
	JobSuccess JobOutcome = "success"
	JobRetry   JobOutcome = "retry"   // failed; asynq runs it again
	JobFailure JobOutcome = "failure" // failed for good: no retry left, or not retryable
	JobWait    JobOutcome = "wait"    // waiting for a rate limit (jobs.RateLimited)
)

// TickOutcome is what became of one scheduler tick of the leader.
type TickOutcome string

// Tick outcomes.
const (
	TickEnqueued  TickOutcome = "enqueued"
	TickDuplicate TickOutcome = "duplicate" // the tick's job existed already (a leadership hand-over)
	TickError     TickOutcome = "error"
)

// SendOutcome is how a campaign recipient's send was settled by a lane or
// the sweep.
type SendOutcome string

// Send outcomes.
const (
	SendSent     SendOutcome = "sent"     // the provider accepted it
	SendFailed   SendOutcome = "failed"   // it certainly failed
	SendUnknown  SendOutcome = "unknown"  // nobody knows (a broken connection, a dead worker); not resent
	SendReleased SendOutcome = "released" // given back to pending: throttled, provider trouble, stopped lane
	SendSkipped  SendOutcome = "skipped"  // not sent on purpose: a marketing template to a contact who opted out
)

// WaitReason is why a campaign lane handed its worker slot back to wait.
type WaitReason string

// Wait reasons.
const (
	WaitPace             WaitReason = "pace"              // the messaging tier's pace allows no send yet
	WaitProviderThrottle WaitReason = "provider_throttle" // the provider throttled the account
	WaitProviderError    WaitReason = "provider_error"    // transient provider trouble; the recipient is retried
	WaitSlotHandover     WaitReason = "slot_handover"     // other campaigns' lanes starved for a worker slot
)

// DeliveryOutcome is the outcome of one outbound webhook delivery attempt.
type DeliveryOutcome string

// Delivery outcomes.
const (
	DeliverySuccess DeliveryOutcome = "success"
	DeliveryRetry   DeliveryOutcome = "retry"   // failed; another attempt is scheduled
	DeliveryDropped DeliveryOutcome = "dropped" // the last attempt failed; the event is dropped for that webhook
)

// Route label of requests that matched no route (404 and 405 answers):
// the raw path would let any client create series at will.
const unmatched = "unmatched"

// Set is one process's registry and Wharf's collectors in it.
type Set struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	jobs        *prometheus.CounterVec
	jobDuration *prometheus.HistogramVec

	schedulerTicks *prometheus.CounterVec

	campaignSends       *prometheus.CounterVec
	campaignWaits       *prometheus.CounterVec
	campaignWaitSeconds *prometheus.CounterVec

	outboundSends       *prometheus.CounterVec
	outboundPaced       *prometheus.CounterVec
	outboundPaceSeconds *prometheus.CounterVec

	inboundStored  *prometheus.CounterVec
	inboundApplied *prometheus.CounterVec
	inboundLag     *prometheus.HistogramVec

	webhookDeliveries *prometheus.CounterVec
	webhookDuration   *prometheus.HistogramVec

	calls *callMetrics // nil but in the callbridge
}

// New builds a Set with the Go runtime and process collectors and every
// Wharf family registered.
func New() *Set {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	// Histogram buckets, in seconds.
	var (
		httpBuckets = prometheus.DefBuckets // 5 ms to 10 s
		// Jobs run from milliseconds (a touch) to minutes (a campaign lane).
		jobBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}
		// Inbound lag runs from milliseconds (an idle worker) to minutes (a
		// backlog, or a task lost and found by the sweep every 30 s).
		lagBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 900}
		// Outbound webhook deliveries time out after 10 s.
		deliveryBuckets = []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}
	)
	s := &Set{
		reg: prometheus.NewRegistry(),
		httpRequests: counter("wharf_http_requests_total",
			"HTTP requests answered by the api, by route template (unmatched for none), method and status code.",
			"route", "method", "code"),
		httpDuration: histogram("wharf_http_request_duration_seconds",
			"Time from receiving an api request to its answer, by route template and method.", httpBuckets,
			"route", "method"),
		jobs: counter("wharf_jobs_processed_total",
			"Job runs by task type and outcome: success, retry (failed, will run again), failure (failed for good), "+
				"wait (waiting for a rate limit: neither a failure nor a retry).",
			"task_type", "outcome"),
		jobDuration: histogram("wharf_job_duration_seconds",
			"Time one job run took, by task type and outcome.", jobBuckets, "task_type", "outcome"),
		schedulerTicks: counter("wharf_scheduler_ticks_total",
			"Scheduler ticks fired while leader, by entry and outcome: enqueued, duplicate (the tick's job existed), error.",
			"entry", "outcome"),
		campaignSends: counter("wharf_campaign_sends_total",
			"Campaign recipients settled, by outcome: sent, failed, unknown (not resent), released (back to pending).",
			"outcome"),
		campaignWaits: counter("wharf_campaign_waits_total",
			"Times a campaign lane handed its worker slot back to wait, by reason: pace, provider_throttle, provider_error, slot_handover.",
			"reason"),
		campaignWaitSeconds: counter("wharf_campaign_wait_seconds_total",
			"Seconds campaign lanes asked to wait, by reason.", "reason"),
		outboundSends: counter("wharf_outbound_sends_total",
			"Sends to the provider (internal/outbound), by priority (reply, api, campaign) and outcome: accepted, unknown, paced, "+
				"throttled, transient, account_fault, template_fault, rejected, refused, failed.",
			"priority", "outcome"),
		outboundPaced: counter("wharf_outbound_paced_total",
			"Times an account's messaging-tier budget had no token for a send of the priority.", "priority"),
		outboundPaceSeconds: counter("wharf_outbound_pace_wait_seconds_total",
			"Seconds until the next token, summed over the times the budget had none, by priority.", "priority"),
		inboundStored: counter("wharf_inbound_events_stored_total",
			"Verified provider webhook events stored by the api, by event type.", "event_type"),
		inboundApplied: counter("wharf_inbound_events_applied_total",
			"Provider webhook events applied by the worker (committed), by event type.", "event_type"),
		inboundLag: histogram("wharf_inbound_event_lag_seconds",
			"Time from storing a provider webhook event to its applied commit, by event type.", lagBuckets, "event_type"),
		webhookDeliveries: counter("wharf_webhook_deliveries_total",
			"Outbound webhook delivery attempts, by outcome: success, retry (another attempt is scheduled), dropped (last attempt failed).",
			"outcome"),
		webhookDuration: histogram("wharf_webhook_delivery_duration_seconds",
			"Time one outbound webhook delivery attempt took, by outcome.", deliveryBuckets, "outcome"),
	}
	s.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		s.httpRequests, s.httpDuration, s.jobs, s.jobDuration, s.schedulerTicks,
		s.campaignSends, s.campaignWaits, s.campaignWaitSeconds,
		s.outboundSends, s.outboundPaced, s.outboundPaceSeconds,
		s.inboundStored, s.inboundApplied, s.inboundLag,
		s.webhookDeliveries, s.webhookDuration,
	)
	return s
}

// Handler serves the registry in the Prometheus text format.
func (s *Set) Handler() http.Handler {
	return promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg})
}

// WatchQueues adds asynq's queue metrics (asynq_queue_size,
// asynq_queue_latency_seconds, asynq_tasks_enqueued_total by state...),
// read through the inspector at every scrape. The worker registers it:
// the figures are the same from every replica (they are Redis's), so
// dashboards take max(), not sum(), over instances.
func (s *Set) WatchQueues(inspector *asynq.Inspector) {
	if s == nil {
		return
	}
	s.reg.MustRegister(asynqmetrics.NewQueueMetricsCollector(inspector))
}

// WatchLeader adds wharf_scheduler_leader, 1 while isLeader reports true;
// it is read at every scrape, so it cannot drift from the lease.
func (s *Set) WatchLeader(isLeader func() bool) {
	if s == nil {
		return
	}
	s.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "wharf_scheduler_leader",
		Help: "1 while this scheduler holds the leader lease (only the leader fires ticks), else 0."},
		func() float64 {
			if isLeader() {
				return 1
			}
			return 0
		}))
}

// HTTPRequest records an answered api request. route is the route template
// (gin's FullPath), "" for a request that matched none.
func (s *Set) HTTPRequest(route, method string, code int, d time.Duration) {
	if s == nil {
		return
	}
	if route == "" {
		route = unmatched
	}
	method = knownMethod(method)
	s.httpRequests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	s.httpDuration.WithLabelValues(route, method).Observe(d.Seconds())
}

// knownMethod keeps the method label to the standard methods: any other
// (a client may send anything) is OTHER.
func knownMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}

// Job records one run of a job.
func (s *Set) Job(taskType string, o JobOutcome, d time.Duration) {
	if s == nil {
		return
	}
	s.jobs.WithLabelValues(taskType, string(o)).Inc()
	s.jobDuration.WithLabelValues(taskType, string(o)).Observe(d.Seconds())
}

// SchedulerTick records a tick the leader fired.
func (s *Set) SchedulerTick(entry string, o TickOutcome) {
	if s == nil {
		return
	}
	s.schedulerTicks.WithLabelValues(entry, string(o)).Inc()
}

// CampaignSends records n campaign recipients settled with outcome o.
func (s *Set) CampaignSends(o SendOutcome, n int) {
	if s == nil || n <= 0 {
		return
	}
	s.campaignSends.WithLabelValues(string(o)).Add(float64(n))
}

// CampaignWait records a lane that hands its slot back for d.
func (s *Set) CampaignWait(r WaitReason, d time.Duration) {
	if s == nil {
		return
	}
	s.campaignWaits.WithLabelValues(string(r)).Inc()
	s.campaignWaitSeconds.WithLabelValues(string(r)).Add(d.Seconds())
}

// OutboundSend records one send's outcome (internal/outbound).
func (s *Set) OutboundSend(priority, outcome string) {
	if s == nil {
		return
	}
	s.outboundSends.WithLabelValues(priority, outcome).Inc()
}

// OutboundPaced records a send of the priority that found no token in its
// account's budget, the next one due after d.
func (s *Set) OutboundPaced(priority string, d time.Duration) {
	if s == nil {
		return
	}
	s.outboundPaced.WithLabelValues(priority).Inc()
	s.outboundPaceSeconds.WithLabelValues(priority).Add(d.Seconds())
}

// InboundStored records a provider webhook event stored by the api.
func (s *Set) InboundStored(eventType string) {
	if s == nil {
		return
	}
	s.inboundStored.WithLabelValues(eventType).Inc()
}

// InboundApplied records a stored event whose application committed, and
// its lag since receivedAt.
func (s *Set) InboundApplied(eventType string, receivedAt time.Time) {
	if s == nil {
		return
	}
	s.inboundApplied.WithLabelValues(eventType).Inc()
	s.inboundLag.WithLabelValues(eventType).Observe(max(time.Since(receivedAt), 0).Seconds())
}

// WebhookDelivery records one outbound webhook delivery attempt.
func (s *Set) WebhookDelivery(o DeliveryOutcome, d time.Duration) {
	if s == nil {
		return
	}
	s.webhookDeliveries.WithLabelValues(string(o)).Inc()
	s.webhookDuration.WithLabelValues(string(o)).Observe(d.Seconds())
}
