-- +goose Up
-- Contacts at a million per organization: trigram indexes for searching
-- names and numbers anywhere, one sort key for the list, and maintained
-- counts so that a page does not count a million rows.
-- pg_trgm and btree_gin are contrib extensions shipped with PostgreSQL; on a
-- managed server, creating them needs the provider's extension privilege.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- list_at orders contacts by last activity, those without any message last:
-- one descending key lets a page start from a position with an index range
-- scan (a row comparison), which NULLS LAST ordering cannot.
ALTER TABLE contacts ADD COLUMN list_at timestamptz
    GENERATED ALWAYS AS (COALESCE(last_message_at, '-infinity'::timestamptz)) STORED;
DROP INDEX contacts_org_recent;
CREATE INDEX contacts_org_list ON contacts (organization_id, list_at DESC, created_at DESC, id DESC);
CREATE INDEX contacts_org_account_list ON contacts (organization_id, account_id, list_at DESC, created_at DESC, id DESC);
CREATE INDEX contacts_search ON contacts USING gin (organization_id, name gin_trgm_ops, profile_name gin_trgm_ops,
    phone_number gin_trgm_ops);

-- contact_counts keeps each organization's number of contacts (per account;
-- the nil uuid for none) in 16 rows chosen at random, so that concurrent
-- inserts of one organization do not queue on one row. A total is the sum
-- of an organization's (or account's) rows.
CREATE TABLE contact_counts (
    organization_id uuid NOT NULL,
    account_id      uuid NOT NULL,
    shard           smallint NOT NULL,
    n               bigint NOT NULL,
    PRIMARY KEY (organization_id, account_id, shard)
);

-- +goose StatementBegin
CREATE FUNCTION contact_counts_add(org uuid, acc uuid, delta int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- An organization being deleted takes its contacts with it: nothing to
    -- count (its rows were deleted with it).
    PERFORM 1 FROM organizations WHERE id = org;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO contact_counts AS c (organization_id, account_id, shard, n)
    VALUES (org, COALESCE(acc, '00000000-0000-0000-0000-000000000000'), floor(random() * 16)::smallint, delta)
    ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION contact_counts_track() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM contact_counts_add(OLD.organization_id, OLD.account_id, -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM contact_counts_add(NEW.organization_id, NEW.account_id, 1);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION contact_counts_forget() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM contact_counts WHERE organization_id = OLD.id;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER contacts_count AFTER INSERT OR DELETE ON contacts FOR EACH ROW EXECUTE FUNCTION contact_counts_track();
CREATE TRIGGER contacts_count_account AFTER UPDATE OF account_id ON contacts FOR EACH ROW
    WHEN (OLD.account_id IS DISTINCT FROM NEW.account_id) EXECUTE FUNCTION contact_counts_track();
CREATE TRIGGER organizations_drop_counts AFTER DELETE ON organizations FOR EACH ROW
    EXECUTE FUNCTION contact_counts_forget();

INSERT INTO contact_counts (organization_id, account_id, shard, n)
SELECT organization_id, COALESCE(account_id, '00000000-0000-0000-0000-000000000000'), 0, count(*)
FROM contacts GROUP BY 1, 2;

-- +goose Down
DROP TRIGGER organizations_drop_counts ON organizations;
DROP TRIGGER contacts_count_account ON contacts;
DROP TRIGGER contacts_count ON contacts;
DROP FUNCTION contact_counts_track();
DROP FUNCTION contact_counts_add(uuid, uuid, int);
DROP FUNCTION contact_counts_forget();
DROP TABLE contact_counts;
DROP INDEX contacts_search;
DROP INDEX contacts_org_account_list;
DROP INDEX contacts_org_list;
ALTER TABLE contacts DROP COLUMN list_at;
CREATE INDEX contacts_org_recent ON contacts (organization_id, last_message_at DESC NULLS LAST, created_at DESC);
