-- +goose NO TRANSACTION
-- An export of contacts reads them in a total order, (created_at, id), one
-- cursor batch at a time (internal/dataops/export.go). The index on
-- (organization_id, created_at) gave the order of created_at only; contacts
-- written together (an import, one statement) share created_at, so the
-- first batch waited for a sort of the organization's every contact: 1.3 to
-- 1.5 s before the first byte of a 1,000,000-contact export
-- (docs/BENCHMARKS.md, "Contact export, round 2"). With id in the key the
-- cursor walks the index in the export's order and the first rows come at
-- once. It replaces the old index (a prefix of it): the widgets' counts by
-- creation time still read it alone, and a contact's insert touches as many
-- indexes as before.

-- +goose Up
CREATE INDEX CONCURRENTLY IF NOT EXISTS contacts_org_created_id ON contacts (organization_id, created_at, id);
DROP INDEX CONCURRENTLY IF EXISTS contacts_org_created;
ALTER INDEX contacts_org_created_id RENAME TO contacts_org_created;

-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS contacts_org_created_only ON contacts (organization_id, created_at);
DROP INDEX CONCURRENTLY IF EXISTS contacts_org_created;
ALTER INDEX contacts_org_created_only RENAME TO contacts_org_created;
