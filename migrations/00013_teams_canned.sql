-- +goose Up
-- Canned responses get permissions of their own: the spec's matrix (Admin and
-- Manager manage them, Agent lists and uses them) expressed as keys, so that
-- custom roles can be given the same rights.
INSERT INTO permissions (resource, action, description) VALUES
    ('canned_responses', 'read', 'List, view and use canned responses'),
    ('canned_responses', 'create', 'Create canned responses'),
    ('canned_responses', 'update', 'Update canned responses'),
    ('canned_responses', 'delete', 'Delete canned responses')
ON CONFLICT DO NOTHING;

INSERT INTO role_permissions (role_id, permission_id)
SELECT r.id, p.id FROM roles r JOIN permissions p ON p.resource = 'canned_responses'
WHERE r.is_system AND (r.name IN ('Admin', 'Manager') OR (r.name = 'Agent' AND p.action = 'read'))
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

-- +goose Down
DROP TABLE canned_responses;
DROP TABLE team_members;
DROP TABLE teams;
INSERT INTO role_permissions (role_id, permission_id)
SELECT r.id, p.id FROM roles r JOIN permissions p ON p.resource = 'teams' AND p.action IN ('create', 'update', 'delete')
WHERE r.is_system AND r.name = 'Manager'
ON CONFLICT DO NOTHING;
DELETE FROM permissions WHERE resource = 'canned_responses';
