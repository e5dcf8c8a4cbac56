-- +goose Up
-- Product catalogs and their products, mirrored to the provider: a row is
-- written only after the provider accepted the change, and a sync (matched
-- by provider id) repairs whatever a failure between the two left behind.
-- The spec names no permission for them; these follow canned responses:
-- Admin and Manager manage catalogs, Agent reads them (to share products in
-- a conversation).
INSERT INTO permissions (resource, action, description) VALUES
    ('catalogs', 'read', 'List and view product catalogs and their products'),
    ('catalogs', 'create', 'Create catalogs and products (at the provider too), sync catalogs from the provider'),
    ('catalogs', 'update', 'Update products (at the provider too)'),
    ('catalogs', 'delete', 'Delete catalogs and products (at the provider too)')
ON CONFLICT DO NOTHING;

INSERT INTO role_permissions (role_id, permission_id)
SELECT r.id, p.id FROM roles r JOIN permissions p ON p.resource = 'catalogs'
WHERE r.is_system AND (r.name IN ('Admin', 'Manager') OR (r.name = 'Agent' AND p.action = 'read'))
ON CONFLICT DO NOTHING;

CREATE TABLE catalogs (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id     uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    account_id          uuid NOT NULL REFERENCES platform_accounts (id) ON DELETE CASCADE,
    provider_catalog_id text NOT NULL CHECK (provider_catalog_id <> ''),
    name                text NOT NULL CHECK (name <> ''),
    -- false once a sync no longer finds the catalog at the provider; a later
    -- sync that finds it again sets it back.
    is_active           boolean NOT NULL DEFAULT true,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
-- One row per provider catalog and account: creates and concurrent syncs
-- upsert on it, so none is ever stored twice.
CREATE UNIQUE INDEX catalogs_provider ON catalogs (account_id, provider_catalog_id);
CREATE INDEX catalogs_list ON catalogs (organization_id, name, id);

CREATE TABLE products (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    organization_id     uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    catalog_id          uuid NOT NULL REFERENCES catalogs (id) ON DELETE CASCADE,
    provider_product_id text NOT NULL CHECK (provider_product_id <> ''),
    name                text NOT NULL CHECK (name <> ''),
    description         text NOT NULL DEFAULT '',
    -- In the currency's smallest unit (cents for USD).
    price               bigint NOT NULL CHECK (price > 0),
    currency            char(3) NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
    url                 text NOT NULL DEFAULT '',
    image_url           text NOT NULL DEFAULT '',
    retailer_id         text NOT NULL DEFAULT '',
    is_active           boolean NOT NULL DEFAULT true,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX products_provider ON products (catalog_id, provider_product_id);
CREATE INDEX products_list ON products (catalog_id, name, id);

-- +goose Down
DROP TABLE products;
DROP TABLE catalogs;
DELETE FROM permissions WHERE resource = 'catalogs';
