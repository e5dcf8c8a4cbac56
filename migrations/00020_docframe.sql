-- +goose Up
-- The document framework (internal/docframe): per-organization document
-- types, their documents as JSONB, and naming-series counters. Access to
-- documents is decided per DocType by role name (the DocType's own
-- permission rows), not by permission keys, so no permissions are added.

-- A DocType is itself a document: definition holds it whole as answered
-- (fields, permissions...); the columns beside it repeat what queries and
-- lists filter on.
CREATE TABLE docframe_doctypes (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    name            text NOT NULL,
    module          text NOT NULL DEFAULT '',
    custom          boolean NOT NULL DEFAULT true,
    is_submittable  boolean NOT NULL DEFAULT false,
    istable         boolean NOT NULL DEFAULT false,
    autoname        text NOT NULL DEFAULT 'hash',
    title_field     text NOT NULL DEFAULT '',
    search_fields   text NOT NULL DEFAULT '',
    definition      jsonb NOT NULL,
    owner           text NOT NULL DEFAULT '',
    modified_by     text NOT NULL DEFAULT '',
    creation        timestamptz NOT NULL DEFAULT now(),
    modified        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, name)
);

-- Documents of every DocType of every organization. Child-table rows live in
-- their parent's data (see docs/FRAMEWORK.md); Password values live sealed
-- in secrets, never in data. Indexes on fields (unique: 1, search_index: 1)
-- are created per organization and DocType as partial expression indexes
-- when the DocType is saved.
CREATE TABLE docframe_documents (
    organization_id uuid NOT NULL,
    doctype         text NOT NULL,
    name            text NOT NULL,
    docstatus       smallint NOT NULL DEFAULT 0 CHECK (docstatus IN (0, 1, 2)),
    owner           text NOT NULL,
    modified_by     text NOT NULL,
    creation        timestamptz NOT NULL,
    modified        timestamptz NOT NULL,
    data            jsonb NOT NULL DEFAULT '{}',
    secrets         jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (organization_id, doctype, name),
    FOREIGN KEY (organization_id, doctype) REFERENCES docframe_doctypes (organization_id, name) ON DELETE CASCADE
);
-- The default list order (modified desc) and its paging.
CREATE INDEX docframe_documents_modified ON docframe_documents (organization_id, doctype, modified DESC, name DESC);

-- Naming series: one counter per organization and expanded prefix
-- (INV-2026-), taken with INSERT ... ON CONFLICT DO UPDATE ... RETURNING.
CREATE TABLE docframe_series (
    organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    prefix          text NOT NULL,
    current         bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (organization_id, prefix)
);

-- +goose Down
DROP TABLE docframe_series;
DROP TABLE docframe_documents;
DROP TABLE docframe_doctypes;
