-- +goose Up
-- Status events are applied in bulk by parallel workers (SKIP LOCKED), not
-- per contact: statuses only move messages forward, so their order does not
-- matter.
CREATE INDEX inbound_events_statuses ON inbound_events (account_id, id) WHERE processed_at IS NULL AND kind = 'statuses';

-- +goose Down
DROP INDEX inbound_events_statuses;
