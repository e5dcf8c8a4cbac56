-- +goose Up
-- Platform-native flows: forms the provider renders inside the chat. The row
-- is ours from its creation; provider_flow_id is set when it is first saved
-- to the provider (save-to-meta) or when a sync imports it. BLOCKED and
-- THROTTLED are states only the provider sets (a sync brings them here).
CREATE TABLE platform_flows (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id   uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id        uuid NOT NULL REFERENCES platform_accounts (id) ON DELETE CASCADE,
    provider_flow_id  text,
    name              text NOT NULL,
    status            text NOT NULL DEFAULT 'DRAFT' CHECK (status IN ('DRAFT', 'PUBLISHED', 'DEPRECATED', 'BLOCKED', 'THROTTLED')),
    categories        jsonb NOT NULL DEFAULT '[]',
    json_definition   jsonb NOT NULL DEFAULT '{}',
    -- What the provider said of the last uploaded flow JSON.
    validation_errors jsonb NOT NULL DEFAULT '[]',
    -- The name, categories or definition changed since the last save to the
    -- provider: publishing would publish something else than what is shown.
    needs_save        boolean NOT NULL DEFAULT true,
    saved_at          timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
-- A sync matches by provider id within the account.
CREATE UNIQUE INDEX platform_flows_provider ON platform_flows (account_id, provider_flow_id) WHERE provider_flow_id IS NOT NULL;
CREATE INDEX platform_flows_list ON platform_flows (organization_id, created_at DESC, id);

-- +goose Down
DROP TABLE platform_flows;
