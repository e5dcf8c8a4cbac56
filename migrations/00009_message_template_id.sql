-- +goose Up
-- The template of a queued template send gets a typed column: it was only a
-- value in content (kept there too, for the API's output), read back by the
-- worker as text. It is not a foreign key: deleting a template must not
-- touch the messages table (which would need an index on this column to do
-- it without a scan); a queued send whose template is gone fails as before.
ALTER TABLE messages ADD COLUMN template_id uuid;

-- Backfill from content. Compared as text, so that a malformed value is
-- left alone instead of failing the migration.
UPDATE messages m SET template_id = t.id
FROM templates t
WHERE m.type = 'template' AND m.direction = 'outgoing' AND m.content ? 'template_id'
  AND t.organization_id = m.organization_id AND t.id::text = lower(m.content->>'template_id');

-- +goose Down
ALTER TABLE messages DROP COLUMN template_id;
