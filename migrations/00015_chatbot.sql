-- +goose Up
-- The chatbot of an organization: its settings, keyword rules, AI contexts,
-- conversation flows, the sessions of contacts in a flow, and the inbox of
-- incoming messages it evaluates (one row per message: evaluated once).

CREATE TABLE chatbot_settings (
    organization_id         uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
    chatbot_enabled         boolean NOT NULL DEFAULT false,
    ai_enabled              boolean NOT NULL DEFAULT false,
    ai_provider             text NOT NULL DEFAULT 'openai',
    ai_model                text NOT NULL DEFAULT '',
    ai_temperature          double precision NOT NULL DEFAULT 0.7,
    ai_max_tokens           integer NOT NULL DEFAULT 500,
    ai_api_key_enc          bytea,
    ai_base_url             text NOT NULL DEFAULT '',
    ai_history_messages     integer NOT NULL DEFAULT 10,
    system_prompt           text NOT NULL DEFAULT '',
    greeting_message        text NOT NULL DEFAULT '',
    greeting_buttons        jsonb NOT NULL DEFAULT '[]',
    greeting_list_button    text NOT NULL DEFAULT '',
    fallback_message        text NOT NULL DEFAULT '',
    fallback_buttons        jsonb NOT NULL DEFAULT '[]',
    fallback_list_button    text NOT NULL DEFAULT '',
    transfer_keywords       jsonb NOT NULL DEFAULT '[]',
    transfer_message        text NOT NULL DEFAULT '',
    business_hours_enabled  boolean NOT NULL DEFAULT false,
    business_hours          jsonb NOT NULL DEFAULT '[]',
    out_of_hours_message    text NOT NULL DEFAULT '',
    session_timeout_minutes integer NOT NULL DEFAULT 30,
    updated_at              timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE chatbot_keyword_rules (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    keywords        jsonb NOT NULL DEFAULT '[]',
    match_type      text NOT NULL CHECK (match_type IN ('exact', 'contains', 'starts_with', 'regex')),
    response_type   text NOT NULL DEFAULT 'text' CHECK (response_type IN ('text')),
    response        text NOT NULL,
    priority        integer NOT NULL DEFAULT 0,
    enabled         boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chatbot_keyword_rules_org ON chatbot_keyword_rules (organization_id, priority DESC, created_at, id);

CREATE TABLE chatbot_ai_contexts (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id  uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name             text NOT NULL,
    trigger_keywords jsonb NOT NULL DEFAULT '[]',
    context_type     text NOT NULL CHECK (context_type IN ('static', 'api')),
    content          text NOT NULL,
    priority         integer NOT NULL DEFAULT 0,
    enabled          boolean NOT NULL DEFAULT true,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chatbot_ai_contexts_org ON chatbot_ai_contexts (organization_id, priority DESC, created_at, id);

CREATE TABLE chatbot_flows (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id    uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name               text NOT NULL,
    trigger_keywords   jsonb NOT NULL DEFAULT '[]',
    initial_message    text NOT NULL DEFAULT '',
    completion_message text NOT NULL DEFAULT '',
    enabled            boolean NOT NULL DEFAULT true,
    panel_config       jsonb NOT NULL DEFAULT '{}',
    steps              jsonb NOT NULL DEFAULT '[]',
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX chatbot_flows_name ON chatbot_flows (organization_id, lower(name));

-- A contact's walk through a flow. ended_at is set when the flow completes,
-- transfers, or the contact was silent past the timeout; the latest session
-- stays readable (session-data) after it ended.
CREATE TABLE chatbot_sessions (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    contact_id      uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    flow_id         uuid REFERENCES chatbot_flows (id) ON DELETE SET NULL,
    flow_name       text NOT NULL DEFAULT '',
    current_step    integer NOT NULL DEFAULT 0,
    variables       jsonb NOT NULL DEFAULT '{}',
    panel_config    jsonb NOT NULL DEFAULT '{}',
    started_at      timestamptz NOT NULL DEFAULT now(),
    last_activity   timestamptz NOT NULL DEFAULT now(),
    ended_at        timestamptz,
    end_reason      text NOT NULL DEFAULT ''
);
CREATE UNIQUE INDEX chatbot_sessions_one_active ON chatbot_sessions (contact_id) WHERE ended_at IS NULL;
CREATE INDEX chatbot_sessions_contact ON chatbot_sessions (contact_id, started_at DESC);
CREATE INDEX chatbot_sessions_active ON chatbot_sessions (organization_id, last_activity DESC) WHERE ended_at IS NULL;

-- Incoming messages waiting for (or done with) the chatbot: written in the
-- inbound transaction that stored the message, evaluated in arrival order
-- per contact by the chatbot:evaluate job, each exactly once.
CREATE TABLE chatbot_inbox (
    message_id      uuid PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    contact_id      uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    seq             bigserial,
    received_at     timestamptz NOT NULL DEFAULT now(),
    evaluated_at    timestamptz,
    outcome         text NOT NULL DEFAULT ''
);
CREATE INDEX chatbot_inbox_pending ON chatbot_inbox (contact_id, seq) WHERE evaluated_at IS NULL;
CREATE INDEX chatbot_inbox_evaluated ON chatbot_inbox (evaluated_at) WHERE evaluated_at IS NOT NULL;

-- +goose Down
DROP TABLE chatbot_inbox;
DROP TABLE chatbot_sessions;
DROP TABLE chatbot_flows;
DROP TABLE chatbot_ai_contexts;
DROP TABLE chatbot_keyword_rules;
DROP TABLE chatbot_settings;
