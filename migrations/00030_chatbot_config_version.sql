-- +goose Up
-- The version of an organization's chatbot configuration (settings, keyword
-- rules, flows): every change, by the API or by any other writer, takes a
-- new value from one sequence in the transaction that makes it. The
-- evaluation reads it with the contact's state and keeps the configuration
-- in memory while it is unchanged (internal/chatbot, config.go), so the very
-- next message after a change sees the change. A sequence, not a counter: a
-- value is never given twice.
CREATE SEQUENCE chatbot_config_version;
ALTER TABLE organizations ADD COLUMN chatbot_version bigint NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION chatbot_config_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- When an organization is deleted its rows go with it: the update finds
    -- no organization and does nothing.
    UPDATE organizations SET chatbot_version = nextval('chatbot_config_version')
    WHERE id = CASE WHEN TG_OP = 'DELETE' THEN OLD.organization_id ELSE NEW.organization_id END;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER chatbot_settings_version AFTER INSERT OR UPDATE OR DELETE ON chatbot_settings
    FOR EACH ROW EXECUTE FUNCTION chatbot_config_changed();
CREATE TRIGGER chatbot_keyword_rules_version AFTER INSERT OR UPDATE OR DELETE ON chatbot_keyword_rules
    FOR EACH ROW EXECUTE FUNCTION chatbot_config_changed();
CREATE TRIGGER chatbot_flows_version AFTER INSERT OR UPDATE OR DELETE ON chatbot_flows
    FOR EACH ROW EXECUTE FUNCTION chatbot_config_changed();

-- +goose Down
DROP TRIGGER chatbot_flows_version ON chatbot_flows;
DROP TRIGGER chatbot_keyword_rules_version ON chatbot_keyword_rules;
DROP TRIGGER chatbot_settings_version ON chatbot_settings;
DROP FUNCTION chatbot_config_changed();
ALTER TABLE organizations DROP COLUMN chatbot_version;
DROP SEQUENCE chatbot_config_version;
