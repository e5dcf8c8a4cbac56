-- +goose Up
-- A message that a framework document projects (an Outgoing Platform
-- Message, internal/wharfapp): each change of the row (the provider's
-- acceptance, a refusal, the sweeper's failure of an unknown send) records
-- a message.changed event in the events outbox in the change's
-- transaction, and the projector applies the row to the document from it
-- (docs/ARCHITECTURE.md, "Framework documents are a projection"). Other
-- messages pay nothing: the flag is false.
ALTER TABLE messages ADD COLUMN projected boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE messages DROP COLUMN projected;
