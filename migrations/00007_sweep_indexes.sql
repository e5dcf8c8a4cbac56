-- +goose NO TRANSACTION
-- Indexes for the periodic sweeps, which otherwise scan every tenant's rows:
-- built CONCURRENTLY so that adding them to a live system does not block
-- writes to messages and events; each is dropped first in case an earlier,
-- interrupted build left it invalid.

-- +goose Up
-- messaging.SweepUnconfirmed (every minute): queued sends whose task was
-- lost, i.e. pending outgoing messages never handed to the provider.
DROP INDEX CONCURRENTLY IF EXISTS messages_queued;
CREATE INDEX CONCURRENTLY messages_queued ON messages (created_at)
    WHERE status = 'pending' AND direction = 'outgoing' AND send_started_at IS NULL;
-- webhooks.SweepUndispatched (every 30 s) deletes events dispatched more
-- than a week ago.
DROP INDEX CONCURRENTLY IF EXISTS events_dispatched;
CREATE INDEX CONCURRENTLY events_dispatched ON events (dispatched_at) WHERE dispatched_at IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS events_dispatched;
DROP INDEX CONCURRENTLY IF EXISTS messages_queued;
