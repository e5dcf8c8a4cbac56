package testenv

import (
	"errors"
	"testing"

	"github.com/hibiken/asynq"

	"wharf/jobs"
)

// Queue is an asynq client and inspector on a Redis database of the test's
// own: domain tests give Enqueuer to the service under test and read what it
// enqueued with Inspector.
type Queue struct {
	Enqueuer  *jobs.Enqueuer
	Inspector *asynq.Inspector
}

// NewQueue connects to this test's Redis database (RedisURL) until the test
// ends.
func NewQueue(t testing.TB) *Queue {
	t.Helper()
	opt, err := asynq.ParseRedisURI(RedisURL(t))
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	client, insp := asynq.NewClient(opt), asynq.NewInspector(opt)
	t.Cleanup(func() { _ = client.Close(); _ = insp.Close() })
	return &Queue{Enqueuer: jobs.NewEnqueuer(client, insp), Inspector: insp}
}

// Tasks returns the pending and scheduled tasks of every queue.
func (q *Queue) Tasks(t testing.TB) []*asynq.TaskInfo {
	t.Helper()
	queues, err := q.Inspector.Queues()
	if err != nil {
		t.Fatalf("testenv: list queues: %v", err)
	}
	var out []*asynq.TaskInfo
	for _, queue := range queues {
		for _, list := range []func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){q.Inspector.ListPendingTasks, q.Inspector.ListScheduledTasks} {
			tasks, err := list(queue, asynq.PageSize(1000))
			if err != nil && !errors.Is(err, asynq.ErrQueueNotFound) {
				t.Fatalf("testenv: list tasks of %s: %v", queue, err)
			}
			out = append(out, tasks...)
		}
	}
	return out
}

// TaskTypes counts the pending and scheduled tasks by type.
func (q *Queue) TaskTypes(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, ti := range q.Tasks(t) {
		out[ti.Type]++
	}
	return out
}
