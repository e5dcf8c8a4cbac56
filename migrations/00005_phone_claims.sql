-- +goose Up
-- An account row is an organization's claim on a phone number; the claim owns
-- the number (receives its inbound webhooks) once the provider has accepted
-- the claim's token for that number (verified_at). Several organizations may
-- claim a number, so that a claim nobody verified cannot squat it, but at most
-- one claim per organization and at most one verified claim per number.
ALTER TABLE platform_accounts ADD COLUMN verified_at timestamptz;

-- Accounts that left 'pending' were activated by a working token or by
-- embedded signup: they own their number. The old global unique index
-- guarantees at most one such row per number.
UPDATE platform_accounts SET verified_at = updated_at WHERE status <> 'pending';

DROP INDEX platform_accounts_phone_number_id;
CREATE UNIQUE INDEX platform_accounts_org_phone_number_id ON platform_accounts (organization_id, phone_number_id);
CREATE UNIQUE INDEX platform_accounts_phone_number_owner ON platform_accounts (phone_number_id) WHERE verified_at IS NOT NULL;

-- +goose Down
DROP INDEX platform_accounts_phone_number_owner;
DROP INDEX platform_accounts_org_phone_number_id;
-- The global unique index comes back only when no number has two claims;
-- deleting claims (and, by cascade, their templates) to force it would lose
-- data, so otherwise the index is left non-unique and a notice says why.
-- +goose StatementBegin
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM platform_accounts GROUP BY phone_number_id HAVING count(*) > 1) THEN
        RAISE NOTICE 'several organizations claim a phone number: platform_accounts_phone_number_id is created non-unique';
        CREATE INDEX platform_accounts_phone_number_id ON platform_accounts (phone_number_id);
    ELSE
        CREATE UNIQUE INDEX platform_accounts_phone_number_id ON platform_accounts (phone_number_id);
    END IF;
END
$$;
-- +goose StatementEnd
ALTER TABLE platform_accounts DROP COLUMN verified_at;
