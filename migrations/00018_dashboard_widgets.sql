-- +goose Up
-- Dashboard widgets: each user's own tiles, some shared with the whole
-- organization. Every widget route needs analytics:read (Admin and Manager);
-- sharing a widget with everyone needs analytics:share, so that a custom role
-- can read dashboards without publishing to the organization.
INSERT INTO permissions (resource, action, description) VALUES
    ('analytics', 'share', 'Share dashboard widgets with the whole organization')
ON CONFLICT DO NOTHING;

INSERT INTO role_permissions (role_id, permission_id)
SELECT r.id, p.id FROM roles r JOIN permissions p ON p.resource = 'analytics' AND p.action = 'share'
WHERE r.is_system AND r.name IN ('Admin', 'Manager')
ON CONFLICT DO NOTHING;

-- A widget belongs to the user who created it (a user's dashboard goes with
-- the user). data_source and metric are empty for shortcuts, which show no
-- figure; filters is an array of {field, operator, value}.
CREATE TABLE dashboard_widgets (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    created_by      uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name            text NOT NULL,
    description     text NOT NULL DEFAULT '',
    data_source     text NOT NULL DEFAULT '',
    metric          text NOT NULL DEFAULT '',
    field           text NOT NULL DEFAULT '',
    filters         jsonb NOT NULL DEFAULT '[]'::jsonb,
    display_type    text NOT NULL DEFAULT 'number' CHECK (display_type IN ('number', 'percentage', 'chart', 'table', 'shortcuts')),
    chart_type      text NOT NULL DEFAULT '',
    group_by_field  text NOT NULL DEFAULT '',
    show_change     boolean NOT NULL DEFAULT true,
    color           text NOT NULL DEFAULT '',
    size            text NOT NULL DEFAULT 'small' CHECK (size IN ('small', 'medium', 'large')),
    display_order   integer NOT NULL DEFAULT 0,
    grid_x          integer NOT NULL DEFAULT 0,
    grid_y          integer NOT NULL DEFAULT 0,
    grid_w          integer NOT NULL DEFAULT 3,
    grid_h          integer NOT NULL DEFAULT 2,
    config          jsonb NOT NULL DEFAULT '{}'::jsonb,
    is_shared       boolean NOT NULL DEFAULT false,
    is_default      boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
-- A dashboard is the caller's widgets plus the organization's shared ones.
CREATE INDEX dashboard_widgets_owner ON dashboard_widgets (organization_id, created_by, display_order);
CREATE INDEX dashboard_widgets_shared ON dashboard_widgets (organization_id, display_order) WHERE is_shared;

-- Widget figures read one organization's rows of a period (UTC days). No
-- index led by (organization_id, time) existed for messages, contacts and
-- chatbot sessions: a month's count scanned the organization's every row.
-- The messages index carries the fields a widget filters and groups on, so
-- that counts are index-only scans (docs/BENCHMARKS.md, "Widget data").
CREATE INDEX messages_org_created ON messages (organization_id, created_at) INCLUDE (status, direction, type, account_id);
CREATE INDEX contacts_org_created ON contacts (organization_id, created_at);
CREATE INDEX chatbot_sessions_org_started ON chatbot_sessions (organization_id, started_at);

-- +goose Down
DROP INDEX chatbot_sessions_org_started;
DROP INDEX contacts_org_created;
DROP INDEX messages_org_created;
DROP TABLE dashboard_widgets;
DELETE FROM permissions WHERE resource = 'analytics' AND action = 'share';
