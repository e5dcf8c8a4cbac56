-- +goose Up
-- Canned responses get permissions of their own: the spec's matrix (Admin and
-- Manager manage them, Agent lists and uses them) expressed as keys, so that
-- custom roles can be given the same rights.
INSERT INTO permissions (resource, action, description) VALUES
    ('transfers', 'read', 'List agent transfers'),
    ('transfers', 'write', 'Create, pick up and resume agent transfers'),
    ('transfers', 'assign', 'Assign agent transfers to any agent, and resume anyone''s'),
    ('canned_responses', 'read', 'List, view and use canned responses'),
    ('canned_responses', 'create', 'Create canned responses'),
    ('canned_responses', 'update', 'Update canned responses'),
    ('canned_responses', 'delete', 'Delete canned responses')
ON CONFLICT DO NOTHING;

INSERT INTO role_permissions (role_id, permission_id)
SELECT r.id, p.id FROM roles r JOIN permissions p ON p.resource = 'canned_responses'
WHERE r.is_system AND (r.name IN ('Admin', 'Manager') OR (r.name = 'Agent' AND p.action = 'read'))
ON CONFLICT DO NOTHING;

-- Agent transfers: agents list, pick up and resume them; Admin and Manager
-- also assign them to anyone.
INSERT INTO role_permissions (role_id, permission_id)
SELECT r.id, p.id FROM roles r JOIN permissions p ON p.resource = 'transfers'
WHERE r.is_system AND (r.name IN ('Admin', 'Manager') OR (r.name = 'Agent' AND p.action IN ('read', 'write')))
ON CONFLICT DO NOTHING;

-- Creating and deleting teams is the admin's, and changing a team the admin's
-- or that team's manager's (spec: role matrix); the system Manager role loses
-- teams:create, teams:update and teams:delete (a Manager made manager of a
-- team manages that team).
DELETE FROM role_permissions rp USING roles r, permissions p
WHERE rp.role_id = r.id AND rp.permission_id = p.id AND r.is_system AND r.name = 'Manager'
  AND p.resource = 'teams' AND p.action IN ('create', 'update', 'delete');

CREATE TABLE teams (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id     uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name                text NOT NULL,
    description         text NOT NULL DEFAULT '',
    assignment_strategy text NOT NULL DEFAULT 'round_robin' CHECK (assignment_strategy IN ('round_robin', 'load_balanced', 'manual')),
    is_active           boolean NOT NULL DEFAULT true,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX teams_name ON teams (organization_id, lower(name));

-- A team member is a member of the organization: leaving the organization
-- (or the user's deletion) removes them from its teams.
CREATE TABLE team_members (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id  uuid NOT NULL,
    team_id          uuid NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id          uuid NOT NULL,
    role             text NOT NULL CHECK (role IN ('manager', 'agent')),
    last_assigned_at timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team_id, user_id),
    FOREIGN KEY (organization_id, user_id) REFERENCES organization_members (organization_id, user_id) ON DELETE CASCADE
);
CREATE INDEX team_members_user ON team_members (organization_id, user_id);

CREATE TABLE canned_responses (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    shortcut        text NOT NULL DEFAULT '',
    content         text NOT NULL,
    category        text NOT NULL DEFAULT 'general' CHECK (category IN ('greeting', 'support', 'sales', 'closing', 'general')),
    is_active       boolean NOT NULL DEFAULT true,
    usage_count     bigint NOT NULL DEFAULT 0,
    created_by      uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX canned_responses_name ON canned_responses (organization_id, lower(name));
CREATE UNIQUE INDEX canned_responses_shortcut ON canned_responses (organization_id, lower(shortcut)) WHERE shortcut <> '';

-- An agent transfer hands a contact's conversation from the bot to a person.
-- A contact has at most one active transfer.
CREATE TABLE agent_transfers (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    contact_id      uuid NOT NULL REFERENCES contacts (id) ON DELETE CASCADE,
    status          text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'resumed')),
    source          text NOT NULL DEFAULT 'manual',
    team_id         uuid REFERENCES teams (id) ON DELETE SET NULL,
    agent_id        uuid REFERENCES users (id) ON DELETE SET NULL,
    notes           text NOT NULL DEFAULT '',
    created_by      uuid REFERENCES users (id) ON DELETE SET NULL,
    transferred_at  timestamptz NOT NULL DEFAULT now(),
    assigned_at     timestamptz,
    resumed_at      timestamptz,
    resumed_by      uuid REFERENCES users (id) ON DELETE SET NULL,
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX agent_transfers_one_active ON agent_transfers (organization_id, contact_id) WHERE status = 'active';
-- The queues: unassigned active transfers, oldest first, per team (NULL: the general queue).
CREATE INDEX agent_transfers_queue ON agent_transfers (organization_id, team_id, transferred_at, id) WHERE status = 'active' AND agent_id IS NULL;
CREATE INDEX agent_transfers_agent ON agent_transfers (agent_id) WHERE status = 'active';
CREATE INDEX agent_transfers_list ON agent_transfers (organization_id, transferred_at DESC, id DESC);

-- +goose Down
DROP TABLE agent_transfers;
DROP TABLE canned_responses;
DROP TABLE team_members;
DROP TABLE teams;
INSERT INTO role_permissions (role_id, permission_id)
SELECT r.id, p.id FROM roles r JOIN permissions p ON p.resource = 'teams' AND p.action IN ('create', 'update', 'delete')
WHERE r.is_system AND r.name = 'Manager'
ON CONFLICT DO NOTHING;
DELETE FROM permissions WHERE resource IN ('canned_responses', 'transfers');
