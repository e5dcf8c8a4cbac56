-- +goose Up
CREATE TABLE platform_accounts (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name                 text NOT NULL,
    phone_number         text NOT NULL DEFAULT '',   -- display number reported by the provider
    phone_number_id      text NOT NULL,
    business_account_id  text NOT NULL,
    access_token_enc     bytea NOT NULL,
    pin_enc              bytea,
    webhook_verify_token text NOT NULL DEFAULT '',
    status               text NOT NULL DEFAULT 'pending',
    verified_name        text NOT NULL DEFAULT '',
    quality_rating       text NOT NULL DEFAULT '',
    messaging_limit      text NOT NULL DEFAULT '',
    platform_type        text NOT NULL DEFAULT '',
    is_coexistence       boolean NOT NULL DEFAULT false,
    last_error           text NOT NULL DEFAULT '',
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);
-- Inbound webhooks are routed by phone number id, so it is unique across tenants.
CREATE UNIQUE INDEX platform_accounts_phone_number_id ON platform_accounts (phone_number_id);
CREATE UNIQUE INDEX platform_accounts_org_name ON platform_accounts (organization_id, lower(name));
CREATE INDEX platform_accounts_verify_token ON platform_accounts (webhook_verify_token);

CREATE TABLE contacts (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id      uuid REFERENCES platform_accounts (id) ON DELETE SET NULL,
    phone_number    text NOT NULL,                  -- E.164 with the leading +
    name            text NOT NULL DEFAULT '',
    profile_name    text NOT NULL DEFAULT '',
    avatar_url      text NOT NULL DEFAULT '',
    assigned_to     uuid REFERENCES users (id) ON DELETE SET NULL,
    metadata        jsonb NOT NULL DEFAULT '{}'::jsonb,
    last_message_at timestamptz,
    -- last_inbound_at opens the 24-hour customer-service window.
    last_inbound_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (organization_id, phone_number)
);
CREATE INDEX contacts_org_recent ON contacts (organization_id, last_message_at DESC NULLS LAST, created_at DESC);

CREATE TABLE tags (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    color           text NOT NULL DEFAULT 'gray',
    description     text NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tags_org_name ON tags (organization_id, lower(name));

CREATE TABLE contact_tags (
    contact_id uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    tag_id     uuid NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (contact_id, tag_id)
);
CREATE INDEX contact_tags_tag ON contact_tags (tag_id);

CREATE TABLE templates (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id           uuid NOT NULL REFERENCES platform_accounts (id) ON DELETE CASCADE,
    provider_template_id text NOT NULL DEFAULT '',
    name                 text NOT NULL,
    language             text NOT NULL,
    category             text NOT NULL,
    status               text NOT NULL DEFAULT 'PENDING',
    parameter_format     text NOT NULL DEFAULT 'positional',
    components           jsonb NOT NULL DEFAULT '[]'::jsonb,
    sample_values        jsonb NOT NULL DEFAULT '[]'::jsonb,
    rejected_reason      text NOT NULL DEFAULT '',
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (account_id, name, language)
);
CREATE INDEX templates_org ON templates (organization_id, created_at DESC);

CREATE TABLE messages (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id     uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    contact_id          uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    account_id          uuid REFERENCES platform_accounts (id) ON DELETE SET NULL,
    platform_message_id text,
    direction           text NOT NULL,              -- incoming | outgoing
    type                text NOT NULL,
    content             jsonb NOT NULL DEFAULT '{}'::jsonb,
    status              text NOT NULL,
    error_code          integer,
    error_title         text NOT NULL DEFAULT '',
    error_detail        text NOT NULL DEFAULT '',
    template_name       text NOT NULL DEFAULT '',
    sent_by             uuid REFERENCES users (id) ON DELETE SET NULL,
    api_key_id          uuid REFERENCES api_keys (id) ON DELETE SET NULL,
    -- send_started_at marks an outbound send handed to the provider; a send
    -- found started but unconfirmed after a crash is never repeated.
    send_started_at     timestamptz,
    occurred_at         timestamptz NOT NULL,
    sent_at             timestamptz,
    delivered_at        timestamptz,
    read_at             timestamptz,
    failed_at           timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
-- A redelivered webhook cannot store a message twice.
CREATE UNIQUE INDEX messages_platform_id ON messages (account_id, platform_message_id) WHERE platform_message_id IS NOT NULL;
-- Conversation order: the provider's timestamp (whole seconds), then the
-- order in which we stored the messages.
CREATE INDEX messages_contact_time ON messages (contact_id, occurred_at, created_at, id);
CREATE INDEX messages_unconfirmed ON messages (send_started_at) WHERE status = 'pending' AND send_started_at IS NOT NULL;

-- inbound_events holds verified provider webhooks until the worker applies
-- them. It is the durable record: a lost queue task is found again by the
-- sweeper. contact_key (the contact's wa_id) serialises one contact's events.
CREATE TABLE inbound_events (
    id              bigserial PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id      uuid NOT NULL REFERENCES platform_accounts (id) ON DELETE CASCADE,
    contact_key     text NOT NULL,
    kind            text NOT NULL,
    payload         jsonb NOT NULL,
    received_at     timestamptz NOT NULL DEFAULT now(),
    processed_at    timestamptz,
    attempts        integer NOT NULL DEFAULT 0,
    last_error      text NOT NULL DEFAULT ''
);
CREATE INDEX inbound_events_pending ON inbound_events (account_id, contact_key, id) WHERE processed_at IS NULL;
CREATE INDEX inbound_events_processed ON inbound_events (processed_at) WHERE processed_at IS NOT NULL;

-- events is the outbox of outbound webhook events: written in the same
-- transaction as the change that caused them, dispatched by the worker.
CREATE TABLE events (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    event           text NOT NULL,
    data            jsonb NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    dispatched_at   timestamptz
);
CREATE INDEX events_undispatched ON events (created_at) WHERE dispatched_at IS NULL;

CREATE TABLE webhooks (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    url             text NOT NULL,
    events          jsonb NOT NULL DEFAULT '[]'::jsonb,
    headers         jsonb NOT NULL DEFAULT '{}'::jsonb,
    secret_enc      bytea,
    is_active       boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_org ON webhooks (organization_id);

CREATE TABLE webhook_deliveries (
    id              bigserial PRIMARY KEY,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    webhook_id      uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_id        uuid,
    event           text NOT NULL,
    attempt         integer NOT NULL,
    success         boolean NOT NULL,
    status_code     integer NOT NULL DEFAULT 0,
    error           text NOT NULL DEFAULT '',
    duration_ms     integer NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, id DESC);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
DROP TABLE events;
DROP TABLE inbound_events;
DROP TABLE messages;
DROP TABLE templates;
DROP TABLE contact_tags;
DROP TABLE tags;
DROP TABLE contacts;
DROP TABLE platform_accounts;
