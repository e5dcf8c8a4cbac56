-- +goose NO TRANSACTION
-- The API template send path under concurrency (docs/BENCHMARKS.md, "API
-- template sends"):
--
-- messages_queued_org: a batch claim looks for its organization's queued
-- template sends, oldest first. On messages_queued (created_at, every
-- organization) it walked the queued sends of every other organization
-- before its own; with the organization first it reads only its own. The
-- sweep of lost sends (every organization, every type) keeps
-- messages_queued; this index holds template sends only, so that the
-- sweep's plan cannot pick it (TestSweepsUseTheirIndexes).
--
-- contact_counts: a new contact adds to one of 64 count rows of its
-- organization and account, and holds that row's lock until its
-- transaction commits. A random shard made concurrent sends to new numbers
-- wait on each other (with 32 at once, a third of them found their shard
-- taken); the shard is now the backend's pid modulo 64: connections in a
-- pool have consecutive pids, so concurrent transactions almost never share
-- a row.

-- +goose Up
DROP INDEX CONCURRENTLY IF EXISTS messages_queued_org;
CREATE INDEX CONCURRENTLY messages_queued_org ON messages (organization_id, created_at)
    WHERE status = 'pending' AND direction = 'outgoing' AND send_started_at IS NULL AND type = 'template';

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contact_counts_track_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Rows of an organization being deleted are not counted (its counts go
    -- with it), as in contact_counts_add.
    IF TG_OP = 'INSERT' THEN
        INSERT INTO contact_counts AS c (organization_id, account_id, shard, n)
        SELECT r.organization_id, COALESCE(r.account_id, '00000000-0000-0000-0000-000000000000'), (pg_backend_pid() % 64)::smallint, count(*)
        FROM new_rows r WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = r.organization_id)
        GROUP BY 1, 2
        ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSE
        INSERT INTO contact_counts AS c (organization_id, account_id, shard, n)
        SELECT r.organization_id, COALESCE(r.account_id, '00000000-0000-0000-0000-000000000000'), (pg_backend_pid() % 64)::smallint, -count(*)
        FROM old_rows r WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = r.organization_id)
        GROUP BY 1, 2
        ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contact_counts_add(org uuid, acc uuid, delta int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- An organization being deleted takes its contacts with it: nothing to
    -- count (its rows were deleted with it).
    PERFORM 1 FROM organizations WHERE id = org;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO contact_counts AS c (organization_id, account_id, shard, n)
    VALUES (org, COALESCE(acc, '00000000-0000-0000-0000-000000000000'), (pg_backend_pid() % 64)::smallint, delta)
    ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
END $$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contact_counts_add(org uuid, acc uuid, delta int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    -- An organization being deleted takes its contacts with it: nothing to
    -- count (its rows were deleted with it).
    PERFORM 1 FROM organizations WHERE id = org;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO contact_counts AS c (organization_id, account_id, shard, n)
    VALUES (org, COALESCE(acc, '00000000-0000-0000-0000-000000000000'), floor(random() * 64)::smallint, delta)
    ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contact_counts_track_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO contact_counts AS c (organization_id, account_id, shard, n)
        SELECT r.organization_id, COALESCE(r.account_id, '00000000-0000-0000-0000-000000000000'), floor(random() * 64)::smallint, count(*)
        FROM new_rows r WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = r.organization_id)
        GROUP BY 1, 2
        ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    ELSE
        INSERT INTO contact_counts AS c (organization_id, account_id, shard, n)
        SELECT r.organization_id, COALESCE(r.account_id, '00000000-0000-0000-0000-000000000000'), floor(random() * 64)::smallint, -count(*)
        FROM old_rows r WHERE EXISTS (SELECT 1 FROM organizations o WHERE o.id = r.organization_id)
        GROUP BY 1, 2
        ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
DROP INDEX CONCURRENTLY IF EXISTS messages_queued_org;
