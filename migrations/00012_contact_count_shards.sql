-- +goose Up
-- contact_counts: 64 rows per organization and account instead of 16. Each
-- created contact adds to one row chosen at random and holds that row's lock
-- until its transaction commits (a WAL flush); under concurrent template
-- sends to new numbers (32 clients, 25 connections per process), the top
-- wait in pg_stat_activity was Lock:transactionid on the contact insert,
-- queueing behind another insert of the same row. A total sums the rows, so
-- rows of 16 shards and of 64 add up alike; nothing needs rewriting.
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

-- +goose Down
-- Rows of shards 16-63 stay: totals are sums, so they still count.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION contact_counts_add(org uuid, acc uuid, delta int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM organizations WHERE id = org;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    INSERT INTO contact_counts AS c (organization_id, account_id, shard, n)
    VALUES (org, COALESCE(acc, '00000000-0000-0000-0000-000000000000'), floor(random() * 16)::smallint, delta)
    ON CONFLICT (organization_id, account_id, shard) DO UPDATE SET n = c.n + EXCLUDED.n;
END $$;
-- +goose StatementEnd
