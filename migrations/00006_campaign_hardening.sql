-- +goose Up
-- pause_reason says why the system paused a campaign (an account or template
-- problem the admin must fix before resuming); empty for a pause by hand.
ALTER TABLE campaigns ADD COLUMN pause_reason text NOT NULL DEFAULT '';
-- Maintained by the recount with the other counters, so that a progress
-- stream reads one row instead of counting every recipient each second.
ALTER TABLE campaigns ADD COLUMN pending_count integer NOT NULL DEFAULT 0;
ALTER TABLE campaigns ADD COLUMN sending_count integer NOT NULL DEFAULT 0;
-- claim_id names the claim that moved a recipient to sending. A lane whose
-- claim statement committed but whose answer was lost (the database went
-- away) finds its recipients again by this id and sends them, instead of
-- leaving them sending until the sweep calls them unknown.
ALTER TABLE campaign_recipients ADD COLUMN claim_id uuid;

-- +goose Down
ALTER TABLE campaign_recipients DROP COLUMN claim_id;
ALTER TABLE campaigns DROP COLUMN sending_count;
ALTER TABLE campaigns DROP COLUMN pending_count;
ALTER TABLE campaigns DROP COLUMN pause_reason;
