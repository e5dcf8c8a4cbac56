-- +goose Up
CREATE TABLE organizations (
    id                      uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                    text NOT NULL,
    slug                    text NOT NULL UNIQUE,
    -- settings holds the optional organization settings; unset keys fall back
    -- to server defaults when read.
    settings                jsonb NOT NULL DEFAULT '{}'::jsonb,
    provider_app_secret_enc bytea,
    created_at              timestamptz NOT NULL DEFAULT now(),
    updated_at              timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE permissions (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    resource    text NOT NULL,
    action      text NOT NULL,
    description text NOT NULL DEFAULT '',
    UNIQUE (resource, action)
);

INSERT INTO permissions (resource, action, description) VALUES
    ('users', 'read', 'List and view users'),
    ('users', 'create', 'Create users'),
    ('users', 'update', 'Update users'),
    ('users', 'delete', 'Delete users'),
    ('roles', 'read', 'List and view roles'),
    ('roles', 'create', 'Create roles'),
    ('roles', 'update', 'Update roles'),
    ('roles', 'delete', 'Delete roles'),
    ('teams', 'read', 'List and view teams'),
    ('teams', 'create', 'Create teams'),
    ('teams', 'update', 'Update teams'),
    ('teams', 'delete', 'Delete teams'),
    ('contacts', 'read', 'List and view contacts'),
    ('contacts', 'create', 'Create contacts'),
    ('contacts', 'update', 'Update contacts'),
    ('contacts', 'delete', 'Delete contacts'),
    ('contacts', 'export', 'Export contacts'),
    ('contacts', 'import', 'Import contacts'),
    ('tags', 'export', 'Export tags'),
    ('tags', 'import', 'Import tags'),
    ('messages', 'read', 'Read messages'),
    ('messages', 'create', 'Send messages'),
    ('templates', 'read', 'List and view templates'),
    ('templates', 'create', 'Create templates'),
    ('templates', 'update', 'Update templates'),
    ('templates', 'delete', 'Delete templates'),
    ('campaigns', 'read', 'List and view campaigns'),
    ('campaigns', 'create', 'Create campaigns'),
    ('campaigns', 'update', 'Update and run campaigns'),
    ('campaigns', 'delete', 'Delete campaigns'),
    ('chatbot', 'read', 'View chatbot configuration'),
    ('chatbot', 'update', 'Change chatbot configuration'),
    ('flows', 'read', 'List and view flows'),
    ('flows', 'create', 'Create flows'),
    ('flows', 'update', 'Update flows'),
    ('flows', 'delete', 'Delete flows'),
    ('settings', 'read', 'View organization settings'),
    ('settings', 'update', 'Change organization settings'),
    ('accounts', 'read', 'List and view platform accounts'),
    ('accounts', 'create', 'Connect platform accounts'),
    ('accounts', 'update', 'Update platform accounts'),
    ('accounts', 'delete', 'Delete platform accounts'),
    ('accounts', 'write', 'Onboard accounts through embedded signup'),
    ('webhooks', 'read', 'List and view outbound webhooks'),
    ('webhooks', 'create', 'Create outbound webhooks'),
    ('webhooks', 'update', 'Update outbound webhooks'),
    ('webhooks', 'delete', 'Delete outbound webhooks'),
    ('api_keys', 'read', 'List API keys'),
    ('api_keys', 'create', 'Create API keys'),
    ('api_keys', 'delete', 'Revoke API keys'),
    ('analytics', 'read', 'View analytics'),
    ('organizations', 'read', 'List organizations'),
    ('organizations', 'write', 'Create organizations and manage organization assets'),
    ('call_logs', 'read', 'View call logs'),
    ('call_transfers', 'read', 'View call transfers'),
    ('call_transfers', 'write', 'Accept and manage call transfers'),
    ('outgoing_calls', 'read', 'View outgoing calls'),
    ('outgoing_calls', 'write', 'Place outgoing calls');

CREATE TABLE roles (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    description     text NOT NULL DEFAULT '',
    is_system       boolean NOT NULL DEFAULT false,
    is_default      boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (organization_id, name)
);
-- At most one default role per organization.
CREATE UNIQUE INDEX roles_one_default ON roles (organization_id) WHERE is_default;

CREATE TABLE role_permissions (
    role_id       uuid NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    permission_id uuid NOT NULL REFERENCES permissions (id) ON DELETE CASCADE,
    PRIMARY KEY (role_id, permission_id)
);

CREATE TABLE users (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    -- the organization that created the user; membership elsewhere makes the
    -- user a cross-organization member there.
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    email           text NOT NULL,
    password_hash   text NOT NULL,
    full_name       text NOT NULL DEFAULT '',
    is_active       boolean NOT NULL DEFAULT true,
    is_available    boolean NOT NULL DEFAULT true,
    is_super_admin  boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE organization_members (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    role_id         uuid NOT NULL REFERENCES roles (id),
    is_default      boolean NOT NULL DEFAULT false,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (organization_id, user_id)
);
CREATE INDEX organization_members_user ON organization_members (user_id);
CREATE INDEX organization_members_role ON organization_members (role_id);

CREATE TABLE refresh_tokens (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    token_hash      bytea NOT NULL UNIQUE,
    -- family_id links the tokens of one login; reuse of a rotated token
    -- revokes the whole family.
    family_id       uuid NOT NULL,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    expires_at      timestamptz NOT NULL,
    used_at         timestamptz,
    revoked_at      timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);
CREATE INDEX refresh_tokens_user ON refresh_tokens (user_id);
CREATE INDEX refresh_tokens_expires ON refresh_tokens (expires_at);

CREATE TABLE api_keys (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    user_id         uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name            text NOT NULL,
    key_hash        bytea NOT NULL UNIQUE,
    key_prefix      text NOT NULL,
    expires_at      timestamptz,
    last_used_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_org ON api_keys (organization_id);

-- +goose Down
DROP TABLE api_keys;
DROP TABLE refresh_tokens;
DROP TABLE organization_members;
DROP TABLE users;
DROP TABLE role_permissions;
DROP TABLE roles;
DROP TABLE permissions;
DROP TABLE organizations;
