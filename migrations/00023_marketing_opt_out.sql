-- +goose Up
-- Marketing opt-outs (docs/CAMPAIGNS.md, Opt-outs): a contact who sent an
-- opt-out keyword, whose number the provider refused with 131050, or whom a
-- user opted out is not sent marketing templates. The columns record the
-- last change: when, how (opt_out_source: keyword, provider, user) and, for
-- a user's change, who.
ALTER TABLE contacts
    ADD COLUMN marketing_opt_out  boolean NOT NULL DEFAULT false,
    ADD COLUMN opted_out_at       timestamptz,
    ADD COLUMN opt_out_source     text NOT NULL DEFAULT '',
    ADD COLUMN opt_out_changed_at timestamptz,
    ADD COLUMN opt_out_changed_by uuid REFERENCES users (id) ON DELETE SET NULL;

-- A campaign counts the recipients it skipped (an opted-out contact of a
-- marketing template) apart from those that failed.
ALTER TABLE campaigns ADD COLUMN skipped_count integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE campaigns DROP COLUMN skipped_count;
ALTER TABLE contacts DROP COLUMN marketing_opt_out, DROP COLUMN opted_out_at, DROP COLUMN opt_out_source,
    DROP COLUMN opt_out_changed_at, DROP COLUMN opt_out_changed_by;
