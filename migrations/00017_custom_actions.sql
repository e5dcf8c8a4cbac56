-- +goose Up
-- Custom actions are buttons an organization adds to the conversation view:
-- a webhook the service calls, a URL the browser opens, or a script the
-- browser runs. The spec names no permission for them; keys of their own let
-- custom roles be given exactly the rights the system roles have: Admin and
-- Manager manage and run them, Agent lists and runs them.
INSERT INTO permissions (resource, action, description) VALUES
    ('custom_actions', 'read', 'List and view custom actions'),
    ('custom_actions', 'execute', 'Run custom actions for a contact'),
    ('custom_actions', 'create', 'Create custom actions'),
    ('custom_actions', 'update', 'Update custom actions'),
    ('custom_actions', 'delete', 'Delete custom actions')
ON CONFLICT DO NOTHING;

INSERT INTO role_permissions (role_id, permission_id)
SELECT r.id, p.id FROM roles r JOIN permissions p ON p.resource = 'custom_actions'
WHERE r.is_system AND (r.name IN ('Admin', 'Manager') OR (r.name = 'Agent' AND p.action IN ('read', 'execute')))
ON CONFLICT DO NOTHING;

CREATE TABLE custom_actions (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    icon            text NOT NULL DEFAULT 'zap' CHECK (icon IN ('ticket', 'user', 'bar-chart', 'link', 'phone', 'mail',
                        'file-text', 'external-link', 'zap', 'globe', 'code')),
    action_type     text NOT NULL CHECK (action_type IN ('webhook', 'url', 'javascript')),
    config          jsonb NOT NULL DEFAULT '{}',
    is_active       boolean NOT NULL DEFAULT true,
    display_order   integer NOT NULL DEFAULT 0,
    created_by      uuid REFERENCES users (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- Names are unique per organization, case-insensitive: a button's label
-- must say which one it is. The index also serves the list's order.
CREATE UNIQUE INDEX custom_actions_name ON custom_actions (organization_id, lower(name));

-- +goose Down
DROP TABLE custom_actions;
DELETE FROM permissions WHERE resource = 'custom_actions';
