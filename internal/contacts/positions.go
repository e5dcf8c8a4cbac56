package contacts

import (
	"context"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/paging"
	"wharf/models"
)

// Deep pages. OFFSET walks past every row before a page: at a million
// contacts a page in the middle reads half a million index entries. Instead,
// this process remembers the sort key of every positionStride-th row of a
// large list (a snapshot, rebuilt when older than positionsMaxAge), and a
// deep page starts from the remembered key at or before its offset: an
// index range scan plus at most positionStride-1 skipped rows.
//
// A snapshot is up to positionsMaxAge old, so after many changes a deep
// page may start a few rows early or late; OFFSET pages shift the same way
// when rows move while someone pages.
const (
	positionStride  = 50
	positionsMaxAge = 30 * time.Second
	maxSnapshots    = 256 // lists remembered per process
)

// sortKey is a row's place in listOrder.
type sortKey struct {
	LastMessageAt *time.Time
	CreatedAt     time.Time
	ID            uuid.UUID
}

type listKey struct {
	org, account uuid.UUID // account: uuid.Nil for all of the organization's contacts
}

type snapshot struct {
	ready   chan struct{} // closed when keys (or err) are set
	builtAt time.Time
	keys    []sortKey
	err     error
}

// positions holds this process's snapshots.
type positions struct {
	mu    sync.Mutex
	lists map[listKey]*snapshot
}

func newPositions() *positions { return &positions{lists: map[listKey]*snapshot{}} }

// deepPage reads a page that starts past shallowRows.
func (s *Service) deepPage(ctx context.Context, orgID uuid.UUID, accountID *uuid.UUID, pg paging.Params) ([]models.Contact, error) {
	key := listKey{org: orgID}
	if accountID != nil {
		key.account = *accountID
	}
	keys, err := s.snapshot(ctx, key)
	if err != nil {
		return nil, err
	}
	q := s.db.WithContext(ctx).Where("organization_id = ?", orgID)
	if accountID != nil {
		q = q.Where("account_id = ?", *accountID)
	}
	skip := pg.Offset()
	if len(keys) > 0 {
		i := min(skip/positionStride, len(keys)-1)
		k := keys[i]
		skip -= i * positionStride
		q = q.Where("(list_at, created_at, id) <= (COALESCE(CAST(? AS timestamptz), '-infinity'), ?, ?)", k.LastMessageAt, k.CreatedAt, k.ID)
	}
	var rows []models.Contact
	err = q.Order(listOrder).Limit(pg.Limit).Offset(skip).Find(&rows).Error
	return rows, err
}

// snapshot returns the remembered keys of a list, building them when
// missing or old; concurrent callers share one build.
func (s *Service) snapshot(ctx context.Context, key listKey) ([]sortKey, error) {
	p := s.positions
	p.mu.Lock()
	snap := p.lists[key]
	if snap != nil {
		select {
		case <-snap.ready:
			if snap.err != nil || time.Since(snap.builtAt) > positionsMaxAge {
				snap = nil
			}
		default: // being built: wait for it below
		}
	}
	build := snap == nil
	if build {
		if len(p.lists) >= maxSnapshots {
			p.evictOldestLocked()
		}
		snap = &snapshot{ready: make(chan struct{})}
		p.lists[key] = snap
	}
	p.mu.Unlock()
	if build {
		snap.keys, snap.err = s.buildSnapshot(context.WithoutCancel(ctx), key)
		snap.builtAt = time.Now()
		close(snap.ready)
	}
	select {
	case <-snap.ready:
		return snap.keys, snap.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (p *positions) evictOldestLocked() {
	var oldest listKey
	var at time.Time
	for k, s := range p.lists {
		select {
		case <-s.ready:
			if at.IsZero() || s.builtAt.Before(at) {
				oldest, at = k, s.builtAt
			}
		default:
		}
	}
	delete(p.lists, oldest)
}

// buildSnapshot reads the sort key of every positionStride-th row with one
// index-only walk of the list.
func (s *Service) buildSnapshot(ctx context.Context, key listKey) ([]sortKey, error) {
	where, args := "organization_id = ?", []any{key.org}
	if key.account != uuid.Nil {
		where, args = where+" AND account_id = ?", append(args, key.account)
	}
	var keys []sortKey
	err := s.db.WithContext(ctx).Raw(`SELECT last_message_at, created_at, id FROM (
		SELECT last_message_at, created_at, id, row_number() OVER (ORDER BY `+listOrder+`) AS rn
		FROM contacts WHERE `+where+`) t
		WHERE rn % `+strconv.Itoa(positionStride)+` = 1 ORDER BY rn`, args...).Scan(&keys).Error
	return keys, err
}

var planRows = regexp.MustCompile(`rows=(\d+)`)

// estimateRows reads the row estimate of a plan's top node.
func estimateRows(plan []string) int64 {
	if len(plan) == 0 {
		return 0
	}
	m := planRows.FindStringSubmatch(plan[0])
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}
