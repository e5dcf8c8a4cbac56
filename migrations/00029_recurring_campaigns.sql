-- +goose Up
-- Recurring campaigns (internal/campaigns, recurrence.go). A series is a
-- campaign with a recurrence (a cron expression in the organization's
-- timezone, an end, a grace): it sends nothing itself. Each occurrence
-- creates a run, a normal campaign with series_id and occurrence_at, which
-- resolves the series' audience afresh when it starts. The unique index is
-- what makes an occurrence fire once, whatever fires it twice (a second
-- scheduler, a retried job).
ALTER TABLE campaigns ADD COLUMN recurrence jsonb;
ALTER TABLE campaigns ADD COLUMN next_run_at timestamptz;
ALTER TABLE campaigns ADD COLUMN runs integer NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN skipped_occurrences integer NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN last_skipped_at timestamptz;
-- A run outlives its series (its recipients and counters are history).
ALTER TABLE campaigns ADD COLUMN series_id uuid REFERENCES campaigns (id) ON DELETE SET NULL;
ALTER TABLE campaigns ADD COLUMN occurrence_at timestamptz;
CREATE UNIQUE INDEX campaigns_series_occurrence ON campaigns (series_id, occurrence_at) WHERE series_id IS NOT NULL;
-- The scheduler's question every second: which series are due.
CREATE INDEX campaigns_recurring_due ON campaigns (next_run_at) WHERE status = 'recurring';

-- +goose Down
DROP INDEX campaigns_recurring_due;
DROP INDEX campaigns_series_occurrence;
ALTER TABLE campaigns DROP COLUMN occurrence_at;
ALTER TABLE campaigns DROP COLUMN series_id;
ALTER TABLE campaigns DROP COLUMN last_skipped_at;
ALTER TABLE campaigns DROP COLUMN skipped_occurrences;
ALTER TABLE campaigns DROP COLUMN runs;
ALTER TABLE campaigns DROP COLUMN next_run_at;
ALTER TABLE campaigns DROP COLUMN recurrence;
