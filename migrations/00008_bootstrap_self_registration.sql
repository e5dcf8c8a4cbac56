-- +goose Up
-- Self-registration became a per-organization setting that is open unless
-- set. The bootstrap organization is created closed from now on; one created
-- before this migration (the oldest organization) is closed here too, unless
-- someone already chose a value, so that upgrading does not leave the
-- operator's own organization open to anyone who learns its id. Admins can
-- open it again with self_registration_enabled in the settings.
UPDATE organizations
SET settings = settings || '{"self_registration_enabled": false}'::jsonb
WHERE id = (SELECT id FROM organizations ORDER BY created_at, id LIMIT 1)
  AND NOT settings ? 'self_registration_enabled';

-- +goose Down
-- Nothing to undo: code that predates the setting ignores the key.
SELECT 1;
