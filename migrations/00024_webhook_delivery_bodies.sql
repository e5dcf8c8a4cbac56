-- +goose Up
-- The delivery log keeps what was sent and what came back, so that an admin
-- can see why an endpoint refused an event (the console's webhook page), and
-- marks the attempts a person asked for (POST .../redeliver). Bodies are
-- clipped when written (internal/webhooks: 16 KB sent, 4 KB answered); the
-- log keeps the last 100 attempts of a webhook.
ALTER TABLE webhook_deliveries
    ADD COLUMN request_body  text    NOT NULL DEFAULT '',
    ADD COLUMN response_body text    NOT NULL DEFAULT '',
    ADD COLUMN redelivery    boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE webhook_deliveries
    DROP COLUMN request_body,
    DROP COLUMN response_body,
    DROP COLUMN redelivery;
