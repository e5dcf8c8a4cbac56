-- +goose Up
-- messaging_tier_override paces campaigns when set; otherwise the tier the
-- provider reports (messaging_limit) applies.
ALTER TABLE platform_accounts ADD COLUMN messaging_tier_override text NOT NULL DEFAULT '';

CREATE TABLE campaigns (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id       uuid REFERENCES platform_accounts (id) ON DELETE SET NULL,
    template_id      uuid REFERENCES templates (id) ON DELETE SET NULL,
    template_name    text NOT NULL DEFAULT '',
    name             text NOT NULL,
    status           text NOT NULL DEFAULT 'draft',
    variable_mapping jsonb NOT NULL DEFAULT '{}'::jsonb,
    scheduled_at     timestamptz,
    started_at       timestamptz,
    paused_at        timestamptz,
    completed_at     timestamptz,
    cancelled_at     timestamptz,
    -- run_generation numbers each start or resume; a lane of an older
    -- generation stops, so a quick pause/resume never runs two sets of lanes.
    run_generation   integer NOT NULL DEFAULT 0,
    total_recipients integer NOT NULL DEFAULT 0,
    sent_count       integer NOT NULL DEFAULT 0,
    delivered_count  integer NOT NULL DEFAULT 0,
    read_count       integer NOT NULL DEFAULT 0,
    failed_count     integer NOT NULL DEFAULT 0,
    unknown_count    integer NOT NULL DEFAULT 0,
    counted_at       timestamptz,
    created_by       uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX campaigns_org ON campaigns (organization_id, created_at DESC);
CREATE INDEX campaigns_due ON campaigns (scheduled_at) WHERE status = 'scheduled';
CREATE INDEX campaigns_running ON campaigns (status) WHERE status = 'sending';

CREATE TABLE campaign_recipients (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seq                 bigserial NOT NULL,  -- import order, which is also send order
    campaign_id         uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
    organization_id     uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    phone_number        text NOT NULL,
    name                text NOT NULL DEFAULT '',
    data                jsonb NOT NULL DEFAULT '{}'::jsonb,
    -- pending, sending, sent, delivered, read, failed, unknown
    status              text NOT NULL DEFAULT 'pending',
    platform_message_id text,
    attempts            integer NOT NULL DEFAULT 0,
    send_started_at     timestamptz,
    sent_at             timestamptz,
    delivered_at        timestamptz,
    read_at             timestamptz,
    failed_at           timestamptz,
    error_code          integer,
    error_title         text NOT NULL DEFAULT '',
    error_detail        text NOT NULL DEFAULT '',
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    UNIQUE (campaign_id, phone_number)
);
-- Claims take the next pending recipient in import order; lists filter by status.
CREATE INDEX campaign_recipients_claim ON campaign_recipients (campaign_id, status, seq);
CREATE UNIQUE INDEX campaign_recipients_platform_id ON campaign_recipients (platform_message_id) WHERE platform_message_id IS NOT NULL;
CREATE INDEX campaign_recipients_sending ON campaign_recipients (send_started_at) WHERE status = 'sending';

-- +goose Down
DROP TABLE campaign_recipients;
DROP TABLE campaigns;
ALTER TABLE platform_accounts DROP COLUMN messaging_tier_override;
