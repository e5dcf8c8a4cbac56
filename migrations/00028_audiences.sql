-- +goose Up
-- Segments: named, reusable contact filters (internal/contacts, audience.go)
-- that a campaign's audience may name. The filter is kept as JSON and
-- compiled to SQL when it is counted or resolved, so a segment always
-- means its contacts of the moment.
CREATE TABLE segments (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid        NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text        NOT NULL,
    description     text        NOT NULL DEFAULT '',
    filter          jsonb       NOT NULL DEFAULT '{}'::jsonb,
    created_by      uuid        REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX segments_org_name ON segments (organization_id, lower(name));

-- A campaign's recipients may come from the organization's contacts: the
-- audience (a contact filter and fixed placeholder values) is resolved
-- into recipients once, in the transaction that starts the campaign
-- (audience_resolved_at records it).
ALTER TABLE campaigns ADD COLUMN audience jsonb;
ALTER TABLE campaigns ADD COLUMN audience_resolved_at timestamptz;

-- Replies: how many recipients answered within 72 hours of their send,
-- counted from the messages (internal/campaigns, report.go) and kept here
-- for the lists; replies_counted_at says when.
ALTER TABLE campaigns ADD COLUMN replied_count integer NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN replies_counted_at timestamptz;

-- A recipient's organization is its campaign's: the campaign's own
-- foreign key (ON DELETE CASCADE from organizations to campaigns to
-- recipients) already removes recipients with their organization. The
-- second foreign key only cost a trigger call per inserted recipient; at
-- 500,000 recipients resolved from an audience in one statement it was
-- a fifth to a third of the statement's time (BenchmarkAudienceTag500kOf1M,
-- docs/BENCHMARKS.md).
ALTER TABLE campaign_recipients DROP CONSTRAINT campaign_recipients_organization_id_fkey;

-- +goose Down
ALTER TABLE campaigns DROP COLUMN replies_counted_at;
ALTER TABLE campaigns DROP COLUMN replied_count;
ALTER TABLE campaign_recipients ADD CONSTRAINT campaign_recipients_organization_id_fkey
    FOREIGN KEY (organization_id) REFERENCES organizations (id) ON DELETE CASCADE;
ALTER TABLE campaigns DROP COLUMN audience_resolved_at;
ALTER TABLE campaigns DROP COLUMN audience;
DROP TABLE segments;
