-- +goose Up
-- A campaign that a framework document projects (a Platform Bulk Message,
-- internal/wharfbulk): each change of its recipients (a chunk's settled
-- sends, provider statuses) and each recount records a campaign.changed
-- event in the events outbox in the change's transaction, and the
-- projector brings the bulk message and its Platform Messages up to date
-- from it (docs/ARCHITECTURE.md, "Framework documents are a projection").
-- Other campaigns pay nothing: the flag is false.
ALTER TABLE campaigns ADD COLUMN projected boolean NOT NULL DEFAULT false;
-- The bulk messages launched before: their documents follow them from now on.
UPDATE campaigns c SET projected = true
FROM docframe_documents d
WHERE d.doctype = 'Platform Bulk Message' AND d.organization_id = c.organization_id AND d.data->>'campaign' = c.id::text;

-- +goose Down
ALTER TABLE campaigns DROP COLUMN projected;
