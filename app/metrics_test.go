package app_test

import (
	"context"
	"testing"
	"time"

	"wharf/app"
	"wharf/internal/apptest"
	"wharf/internal/infra/metrics/metricstest"
	"wharf/jobs"
)

// The worker serves /metrics next to /healthz on HEALTH_ADDR: its job runs
// by task type and outcome, asynq's queue metrics, the runtime's and the
// process's.
func TestWorkerServesJobAndQueueMetrics(t *testing.T) {
	e := apptest.New(t, map[string]string{"HEALTH_ADDR": "127.0.0.1:0"})
	admin := e.Admin()
	var key struct {
		Key string `json:"key"`
	}
	e.Do("POST", "/api/api-keys", map[string]any{"name": "k"}, admin.Auth()).Expect(t, 201).Into(t, &key)
	e.Do("GET", "/api/me", nil, apptest.APIKey(key.Key)).Expect(t, 200) // enqueues an apikey:touch job

	w := e.StartWorker()
	if w.HealthAddr == "" {
		t.Fatal("HEALTH_ADDR set but no listener")
	}
	url := "http://" + w.HealthAddr
	touched := map[string]string{"task_type": jobs.TypeAPIKeyTouch, "outcome": "success"}
	var f metricstest.Families
	apptest.Eventually(t, 10*time.Second, "the touch job in the metrics", func() bool {
		f = metricstest.Scrape(t, url+"/metrics")
		return f.Value("wharf_jobs_processed_total", touched) == 1
	})
	if f.Value("wharf_job_duration_seconds", touched) != 1 {
		t.Errorf("no duration of the touch job:\n%s", f.Text)
	}
	for _, name := range []string{"asynq_queue_size", "asynq_queue_latency_seconds", "asynq_tasks_enqueued_total",
		"go_goroutines", "process_cpu_seconds_total"} {
		if !f.Has(name) {
			t.Errorf("no %s on the worker's /metrics", name)
		}
	}
	queues := f.LabelValues("asynq_queue_size", "queue")
	if len(queues) == 0 || f.Value("asynq_tasks_processed_total", map[string]string{"queue": jobs.QueueLow}) < 1 {
		t.Errorf("asynq queue metrics %v do not show the low queue's processed task:\n%s", queues, f.Text)
	}
	if err := app.Probe(context.Background(), url+"/healthz"); err != nil {
		t.Fatalf("/healthz next to /metrics: %v", err)
	}
}

// The scheduler serves /metrics next to /healthz on HEALTH_ADDR: whether it
// leads, and the ticks it fired per entry.
func TestSchedulerServesLeaderAndTickMetrics(t *testing.T) {
	e := apptest.New(t, map[string]string{"HEALTH_ADDR": "127.0.0.1:0"})
	s := e.StartScheduler()
	url := "http://" + s.HealthAddr
	apptest.Eventually(t, 10*time.Second, "leadership and a fired tick in the metrics", func() bool {
		f := metricstest.Scrape(t, url+"/metrics")
		return f.Value("wharf_scheduler_leader", nil) == 1 &&
			f.Value("wharf_scheduler_ticks_total", map[string]string{"entry": "start due campaigns", "outcome": "enqueued"}) >= 1
	})
	if err := app.Probe(context.Background(), url+"/healthz"); err != nil {
		t.Fatalf("/healthz next to /metrics: %v", err)
	}
}
