-- +goose Up
-- Private notes on a contact: written by the organization's users for each
-- other, never sent to the customer (they live apart from messages).
-- Deleted with the contact; a note outlives its author's account (the
-- author is then NULL).
CREATE TABLE contact_notes (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    contact_id      uuid        NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    author_id       uuid        REFERENCES users (id) ON DELETE SET NULL,
    body            text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX contact_notes_contact ON contact_notes (contact_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE contact_notes;
