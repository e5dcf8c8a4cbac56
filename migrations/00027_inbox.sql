-- +goose Up
-- The inbox reads a conversation list (issue 22): each contact's unread
-- count and a preview of its last message are columns kept where messages
-- are stored (internal/messaging: incoming.go and send.go, in the statement
-- or transaction that stores the message), so a page of a million contacts
-- reads them with its rows instead of a subquery per row.
--   unread_count: incoming messages since the conversation was last marked
--     read (PUT /api/contacts/{id}/read resets it); starts at 0 for existing
--     contacts (nothing before this migration counted as unread).
--   last_message_preview: the last message's text cut to 100 characters, or
--     its kind in brackets ("[image] caption", "[location]").
--   last_message_direction: incoming or outgoing ('' without messages).
-- Adding columns with constant defaults rewrites nothing.
ALTER TABLE contacts ADD COLUMN unread_count integer NOT NULL DEFAULT 0,
    ADD COLUMN last_message_preview text NOT NULL DEFAULT '',
    ADD COLUMN last_message_direction text NOT NULL DEFAULT '';

-- The preview of existing conversations from their last message (one pass
-- over messages; the same rule as messaging.Preview, in SQL).
UPDATE contacts c SET last_message_preview = p.preview, last_message_direction = p.direction
FROM (
    SELECT DISTINCT ON (contact_id) contact_id, direction,
        left(CASE
            WHEN type = 'text' THEN coalesce(content->>'text', '')
            WHEN type = 'template' THEN coalesce(content->>'text', '[template]')
            ELSE btrim('[' || type || '] ' || coalesce(content->>'caption', content->>'body', content->>'title', ''))
        END, 100) AS preview
    FROM messages ORDER BY contact_id, occurred_at DESC, created_at DESC, id DESC
) p
WHERE p.contact_id = c.id;

-- Filters of the list (internal/contacts, list.go), each walking an index in
-- the list's order: unread conversations (a partial index: few at a time),
-- and one assignee's or the unassigned ones (assigned=me|<user>|none; a
-- btree finds IS NULL too). has_transfer uses agent_transfers_one_active.
CREATE INDEX contacts_org_unread ON contacts (organization_id, list_at DESC, created_at DESC, id DESC) WHERE unread_count > 0;
CREATE INDEX contacts_org_assigned ON contacts (organization_id, assigned_to, list_at DESC, created_at DESC, id DESC);

-- +goose Down
DROP INDEX contacts_org_assigned;
DROP INDEX contacts_org_unread;
ALTER TABLE contacts DROP COLUMN last_message_direction, DROP COLUMN last_message_preview, DROP COLUMN unread_count;
