package inbound

import (
	"context"
	"sync"
	"time"

	"gorm.io/gorm"

	"wharf/models"
)

// Group commit. Each stored webhook used to cost one INSERT and one commit
// (an fsync) of its own, so concurrent webhooks queued behind each other's
// commits. Now a request hands its rows to the group committer and waits:
// the rows of every request that arrives while earlier ones are being
// written are written together, in one multi-row INSERT and one commit, and
// each request is answered only after the commit that holds its rows. An
// answered webhook is therefore as durable as before; only the number of
// commits falls.
//
// There is no timer: a request that finds a writer free is written at
// once (no added latency when the load is light), and batches grow by
// themselves as the load rises and requests pile up behind the writers.

const (
	// maxWriters bounds the batches being written at once: enough that one
	// commit's fsync overlaps the building of the next batch, few enough
	// that requests pile up into batches instead of each taking a writer.
	maxWriters = 3
	// maxBatchRows bounds one INSERT (parameters: 7 per row, under
	// PostgreSQL's 65,535).
	maxBatchRows = 1000
	// writeTimeout bounds one batch's write; it does not follow any one
	// request's context, because the batch holds other requests' rows.
	writeTimeout = 30 * time.Second
)

// commitRequest is one webhook's rows, and where its outcome is answered.
type commitRequest struct {
	rows []models.InboundEvent
	done chan error
}

// groupCommit batches the inserts of concurrent requests.
type groupCommit struct {
	db *gorm.DB
	// committed runs after each successful write, before its requests are
	// answered (counting what is stored: a metric read right after a 200
	// includes it).
	committed func(rows []models.InboundEvent)
	// stored runs after each successful write with the rows written (their
	// ids set), outside the lock; the requests have already been answered.
	stored func(ctx context.Context, rows []models.InboundEvent)

	mu      sync.Mutex
	pending []*commitRequest
	writers int
	queued  int // requests ever handed in (tests wait on it)
}

// write stores rows together with those of concurrent callers and returns
// once they are committed (or failed).
func (g *groupCommit) write(rows []models.InboundEvent) error {
	req := &commitRequest{rows: rows, done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, req)
	g.queued++
	if g.writers < maxWriters {
		g.writers++
		go g.writeLoop()
	}
	g.mu.Unlock()
	return <-req.done
}

// writeLoop writes batches until nothing is pending.
func (g *groupCommit) writeLoop() {
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.writers--
			g.mu.Unlock()
			return
		}
		batch := g.take()
		g.mu.Unlock()
		g.writeBatch(batch)
	}
}

// take removes up to maxBatchRows rows' worth of requests from pending (at
// least one request, whatever its size). The caller holds g.mu.
func (g *groupCommit) take() []*commitRequest {
	n, rows := 0, 0
	for n < len(g.pending) && (n == 0 || rows+len(g.pending[n].rows) <= maxBatchRows) {
		rows += len(g.pending[n].rows)
		n++
	}
	batch := g.pending[:n:n]
	g.pending = g.pending[n:]
	return batch
}

// writeBatch inserts the batch's rows in one statement. When that fails
// and the batch holds several requests, each is written on its own, so a
// request that cannot be stored (its account deleted a moment ago) fails
// alone instead of taking the others' webhooks with it.
func (g *groupCommit) writeBatch(batch []*commitRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	rows := make([]models.InboundEvent, 0, len(batch))
	for _, r := range batch {
		rows = append(rows, r.rows...)
	}
	err := g.db.WithContext(ctx).Create(&rows).Error
	if err == nil && g.committed != nil {
		g.committed(rows)
	}
	if err == nil || len(batch) == 1 {
		// Give each request its rows back with their ids.
		i := 0
		for _, r := range batch {
			copy(r.rows, rows[i:i+len(r.rows)])
			i += len(r.rows)
			r.done <- err
		}
		if err == nil {
			g.stored(ctx, rows)
		}
		return
	}
	for _, r := range batch {
		err := g.db.WithContext(ctx).Create(&r.rows).Error
		if err == nil && g.committed != nil {
			g.committed(r.rows)
		}
		r.done <- err
		if err == nil {
			g.stored(ctx, r.rows)
		}
	}
}
