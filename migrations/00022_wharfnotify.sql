-- +goose Up
-- Notifications of the messaging integration (internal/wharfnotify). The
-- notifications themselves are documents (DocType Platform Notification);
-- this table is their send ledger: one row per (notification, document,
-- event) or (notification, tick, document, object), written in the
-- document's transaction (DocType events) or by the scheduled run, keyed so
-- that a repeated event or a retried job adds nothing. A row moves
-- pending -> sending -> sent | failed by compare-and-set, or pending ->
-- skipped (condition false, notification gone); a row left sending by a dead
-- worker becomes unknown and is never sent again.
CREATE TABLE wharfnotify_sends (
    id                uuid PRIMARY KEY,
    organization_id   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    dedupe_key        text NOT NULL,
    notification      text NOT NULL,
    reference_doctype text NOT NULL,
    reference_name    text NOT NULL,
    event             text NOT NULL,
    tick              timestamptz,
    -- The document as it was at the event: the condition runs over it.
    snapshot          jsonb,
    -- What to send, once the condition held (null until then).
    request           jsonb,
    status            text NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'sending', 'sent', 'skipped', 'failed', 'unknown')),
    message_name      text NOT NULL DEFAULT '',
    error             text NOT NULL DEFAULT '',
    property_pending  boolean NOT NULL DEFAULT false,
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL,
    UNIQUE (organization_id, dedupe_key)
);

-- The sweep: rows whose task was lost, rows left sending.
CREATE INDEX wharfnotify_sends_open ON wharfnotify_sends (created_at) WHERE status IN ('pending', 'sending');
-- After the commit: the pending rows of one document.
CREATE INDEX wharfnotify_sends_doc ON wharfnotify_sends (organization_id, reference_doctype, reference_name)
    WHERE status = 'pending';

-- +goose Down
DROP TABLE wharfnotify_sends;
