package messaging

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/webhooks"
)

// ExplainClaimBatch is the plan (EXPLAIN, JSON) of the batch claim of id
// and up to n other queued sends of the organization; EXPLAIN without
// ANALYZE runs nothing.
func (s *Service) ExplainClaimBatch(ctx context.Context, orgID, id uuid.UUID, n int) (string, error) {
	if err := s.claimStatements(); err != nil {
		return "", err
	}
	var plan string
	err := s.db.WithContext(ctx).Raw("EXPLAIN (FORMAT JSON) "+s.claimBatchSQL, map[string]any{"org": orgID, "id": id, "n": n,
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
