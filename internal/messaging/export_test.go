package messaging

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/webhooks"
)

// ExplainClaimBatch is the plan (EXPLAIN, JSON) of the batch claim of id,
// with, and other queued sends of the organization up to QueuedBatch;
// EXPLAIN without ANALYZE runs nothing.
func (s *Service) ExplainClaimBatch(ctx context.Context, orgID, id uuid.UUID, with []uuid.UUID) (string, error) {
	if err := s.claimStatements(); err != nil {
		return "", err
	}
	with = dedupeWith(id, with)
	var plan string
	err := s.db.WithContext(ctx).Raw("EXPLAIN (FORMAT JSON) "+s.claimBatchSQL, map[string]any{"org": orgID, "id": id,
		"with": uuidArray(with), "n": max(0, QueuedBatch-1-len(with)),
		"outgoing": webhooks.EventMessageOutgoing, "sent": webhooks.EventMessageSent}).Row().Scan(&plan)
	return plan, err
}

// ExplainClaim is the plan (EXPLAIN, JSON) of the claim of one message.
func (s *Service) ExplainClaim(ctx context.Context, orgID, id uuid.UUID) (string, error) {
	if err := s.claimStatements(); err != nil {
		return "", err
	}
	var plan string
	err := s.db.WithContext(ctx).Raw("EXPLAIN (FORMAT JSON) "+s.claimSQL, id, orgID, webhooks.EventMessageOutgoing,
		webhooks.EventMessageSent).Row().Scan(&plan)
	return plan, err
}

// HoldGroups keeps queued sends by number waiting (no group is written)
// until the function it answers is called, which writes the gathered
// groups; Waiting tells how many sends wait meanwhile.
func (s *Service) HoldGroups() (release func()) {
	s.groups.mu.Lock()
	held := groupWriters - s.groups.writers
	s.groups.writers = groupWriters
	s.groups.mu.Unlock()
	return func() {
		s.groups.mu.Lock()
		s.groups.writers -= held
		start := groupWriters - s.groups.writers
		s.groups.writers = groupWriters
		s.groups.mu.Unlock()
		for range start {
			go s.writeGroups()
		}
	}
}

// Waiting is how many sends wait for a group.
func (s *Service) Waiting() int {
	s.groups.mu.Lock()
	defer s.groups.mu.Unlock()
	return len(s.groups.waiting)
}
