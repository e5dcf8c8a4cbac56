-- +goose Up
-- How many times a queued send was claimed (internal/messaging: each claim
-- may reach the provider; a rate-limit wait gives its claim back). A
-- transient error fails the message once it reaches
-- jobs.MessageSendAttempts, whichever task claimed it: a batch-mate given
-- back after a transient error gets a new task each time, whose retries
-- start from zero, so only the row can bound its tries.
ALTER TABLE messages ADD COLUMN send_attempts integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE messages DROP COLUMN send_attempts;
