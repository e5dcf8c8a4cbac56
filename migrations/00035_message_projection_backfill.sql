-- +goose Up
-- Outgoing Platform Messages created before migration 00031 project their
-- core messages too: their statuses now reach them only through the
-- projector (message.changed), which a message records only when it is
-- projected. Messages that no document names stay as they are.
UPDATE messages m SET projected = true
FROM docframe_documents d
WHERE d.doctype = 'Platform Message' AND d.organization_id = m.organization_id
  AND d.data->>'core_message_id' = m.id::text AND NOT m.projected;

-- +goose Down
-- Nothing to undo: 00031's column keeps its meaning.
SELECT 1;
