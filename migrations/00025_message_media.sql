-- +goose Up
-- Media of messages kept in our own storage (internal/storage): what a
-- customer sent (fetched once from the provider by the media:fetch job) and
-- what an agent uploaded to send (POST /api/media). media_status is NULL for
-- messages without media; pending until the fetch stored the file, stored,
-- or unavailable once the fetch gave up (too big, wrong type, the provider
-- failing past the last retry).
ALTER TABLE messages
    ADD COLUMN media_status    text,
    ADD COLUMN media_key       text   NOT NULL DEFAULT '',
    ADD COLUMN media_mime_type text   NOT NULL DEFAULT '',
    ADD COLUMN media_size      bigint NOT NULL DEFAULT 0,
    ADD COLUMN media_filename  text   NOT NULL DEFAULT '',
    ADD COLUMN media_error     text   NOT NULL DEFAULT '',
    ADD CONSTRAINT messages_media_status_check
        CHECK (media_status IN ('pending', 'stored', 'unavailable'));
-- The media sweep (every 5 minutes, every tenant) reads only pending media.
CREATE INDEX messages_media_pending ON messages (created_at) WHERE media_status = 'pending';

-- Files uploaded for sending. A row exists only once its file is stored:
-- a refused upload leaves neither row nor file.
CREATE TABLE media_uploads (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
    uploaded_by     uuid,
    kind            text        NOT NULL,
    mime_type       text        NOT NULL,
    filename        text        NOT NULL DEFAULT '',
    size            bigint      NOT NULL,
    sha256          text        NOT NULL,
    storage_key     text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX media_uploads_org ON media_uploads (organization_id, created_at DESC);

-- +goose Down
DROP TABLE media_uploads;
DROP INDEX messages_media_pending;
ALTER TABLE messages
    DROP CONSTRAINT messages_media_status_check,
    DROP COLUMN media_status,
    DROP COLUMN media_key,
    DROP COLUMN media_mime_type,
    DROP COLUMN media_size,
    DROP COLUMN media_filename,
    DROP COLUMN media_error;
