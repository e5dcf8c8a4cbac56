-- +goose Up
-- Voice calls: one call log per provider call (wacid) and account, and the
-- transfers that put a call in front of agents. The callbridge process that
-- answered a call owns its media and is its one writer while it lives;
-- the rows are what every api replica reads, and what the calls consumer
-- finishes when the owner is gone.
CREATE TABLE call_logs (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id    uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id         uuid REFERENCES platform_accounts (id) ON DELETE SET NULL,
    -- The account's name when the call started (the spec's platform_account).
    platform_account   text NOT NULL,
    contact_id         uuid REFERENCES contacts (id) ON DELETE SET NULL,
    platform_call_id   text NOT NULL,
    caller_phone       text NOT NULL DEFAULT '',
    direction          text NOT NULL CHECK (direction IN ('incoming', 'outgoing')),
    status             text NOT NULL CHECK (status IN ('ringing', 'answered', 'completed', 'missed', 'rejected',
                           'failed', 'transferring', 'initiating', 'accepted', 'on_hold', 'connected')),
    duration           integer NOT NULL DEFAULT 0,
    ivr_flow_id        uuid,
    ivr_path           jsonb NOT NULL DEFAULT '[]',
    agent_id           uuid REFERENCES users (id) ON DELETE SET NULL,
    started_at         timestamptz NOT NULL DEFAULT now(),
    answered_at        timestamptz,
    ended_at           timestamptz,
    -- caller, agent or system (a timeout, a lost callbridge).
    disconnected_by    text NOT NULL DEFAULT '',
    -- When the current hold began (null when not on hold): hold time is
    -- added to the connected transfer at resume or at the end.
    hold_started_at    timestamptz,
    recording_key      text NOT NULL DEFAULT '',
    recording_duration integer NOT NULL DEFAULT 0,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
-- A redelivered connect webhook finds the call it created.
CREATE UNIQUE INDEX call_logs_platform_call ON call_logs (organization_id, platform_call_id);
CREATE INDEX call_logs_list ON call_logs (organization_id, created_at DESC, id);
-- The callbridges' orphan sweep reads the calls not yet ended, every 10 s.
CREATE INDEX call_logs_open ON call_logs (updated_at) WHERE ended_at IS NULL;

CREATE TABLE call_transfers (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id     uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    call_log_id         uuid NOT NULL REFERENCES call_logs (id) ON DELETE CASCADE,
    platform_call_id    text NOT NULL,
    caller_phone        text NOT NULL DEFAULT '',
    contact_id          uuid REFERENCES contacts (id) ON DELETE SET NULL,
    platform_account    text NOT NULL,
    status              text NOT NULL CHECK (status IN ('waiting', 'connected', 'completed', 'abandoned', 'no_answer')),
    team_id             uuid REFERENCES teams (id) ON DELETE SET NULL,
    agent_id            uuid REFERENCES users (id) ON DELETE SET NULL,
    initiating_agent_id uuid REFERENCES users (id) ON DELETE SET NULL,
    transferred_at      timestamptz NOT NULL DEFAULT now(),
    connected_at        timestamptz,
    ended_at            timestamptz,
    hold_duration       integer NOT NULL DEFAULT 0,
    talk_duration       integer NOT NULL DEFAULT 0,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
-- At most one open transfer per call: a second connect or a racing transfer
-- cannot open another.
CREATE UNIQUE INDEX call_transfers_open ON call_transfers (call_log_id) WHERE status IN ('waiting', 'connected');
CREATE INDEX call_transfers_list ON call_transfers (organization_id, created_at DESC, id);
CREATE INDEX call_transfers_call ON call_transfers (call_log_id, created_at);

-- +goose Down
DROP TABLE call_transfers;
DROP TABLE call_logs;
