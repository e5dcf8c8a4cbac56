package messaging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/storage"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
)

// receivedTypes are the incoming message types whose media we keep, with
// the provider's size limit of each: a file the provider would not have
// accepted is not stored either (stickers: the animated limit, the larger).
var receivedTypes = map[string]int64{
	"image":    5 << 20,
	"video":    16 << 20,
	"audio":    16 << 20,
	"document": 100 << 20,
	"sticker":  500 << 10,
}

// hasMedia reports whether an incoming message of this type and content
// refers to provider media to fetch.
func hasMedia(typ string, content map[string]any) bool {
	_, kept := receivedTypes[typ]
	id, _ := content["id"].(string)
	return kept && id != ""
}

// errPermanent marks a fetch that no retry can make succeed.
var errPermanent = errors.New("permanent")

// FetchMedia copies a received message's media from the provider into the
// store: GET /{media-id} for its URL, then the file with the account's
// token, at most the type's limit, and only when what arrives is what the
// webhook declared (sniffed). It is the media:fetch job and idempotent: a
// message whose media is not pending is left alone. A refusal (too large,
// wrong type, unknown media) marks the media unavailable at once; any
// other failure is returned for asynq to retry, and on the last attempt
// (last) marks it unavailable too.
func (s *Service) FetchMedia(ctx context.Context, orgID, messageID uuid.UUID, last bool) error {
	m, err := s.Get(ctx, orgID, messageID)
	if apperr.Is(err, apperr.NotFound) {
		return fmt.Errorf("media fetch: %w: %w", err, asynq.SkipRetry) // deleted with its contact
	}
	if err != nil {
		return err
	}
	if m.MediaStatus == nil || *m.MediaStatus != models.MediaPending {
		return nil
	}
	err = s.fetchMedia(ctx, m)
	if err == nil {
		return nil
	}
	if errors.Is(err, errPermanent) || last {
		s.log.Info("received media unavailable", "message_id", m.ID, "error", err)
		return s.setMediaUnavailable(ctx, m.ID, err)
	}
	return err
}

func (s *Service) setMediaUnavailable(ctx context.Context, id uuid.UUID, cause error) error {
	msg := strings.TrimPrefix(cause.Error(), errPermanent.Error()+": ")
	err := s.db.WithContext(context.WithoutCancel(ctx)).Model(&models.Message{}).
		Where("id = ? AND media_status = ?", id, models.MediaPending).
		Updates(map[string]any{"media_status": models.MediaUnavailable, "media_error": apperr.Clip(msg, 300), "updated_at": s.now()}).Error
	if err != nil {
		return err
	}
	if errors.Is(cause, errPermanent) {
		return fmt.Errorf("%w: %w", cause, asynq.SkipRetry)
	}
	return cause
}

func (s *Service) fetchMedia(ctx context.Context, m *models.Message) error {
	if s.store == nil {
		return errors.New("no file store configured")
	}
	limit := receivedTypes[m.Type]
	mediaID, _ := m.Content.V["id"].(string)
	declared, _ := m.Content.V["mime_type"].(string)
	declared = baseType(declared)
	if m.AccountID == nil || mediaID == "" || declared == "" {
		return fmt.Errorf("%w: the message names no media id, account or mime type", errPermanent)
	}
	a, err := s.accounts.Get(ctx, m.OrganizationID, *m.AccountID)
	if apperr.Is(err, apperr.NotFound) {
		return fmt.Errorf("%w: %w", errPermanent, err)
	}
	if err != nil {
		return err
	}
	info, err := s.provider.Media(ctx, a.Creds(), mediaID)
	if err != nil {
		return providerFailure(err)
	}
	if info.FileSize > limit {
		return fmt.Errorf("%w: the file is %d bytes, over the provider's %d-byte limit for %s", errPermanent, info.FileSize, limit, m.Type)
	}
	tmp, err := os.CreateTemp("", "wharf-media-*")
	if err != nil {
		return err
	}
	defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
	n, err := s.provider.DownloadMedia(ctx, a.Creds(), info.URL, tmp, limit)
	if errors.Is(err, platform.ErrMediaTooLarge) {
		return fmt.Errorf("%w: the file is over the provider's %d-byte limit for %s", errPermanent, limit, m.Type)
	}
	if err != nil {
		return providerFailure(err)
	}
	head := make([]byte, 512)
	k, _ := tmp.ReadAt(head, 0)
	if sniffed := http.DetectContentType(head[:k]); !SniffMatches(declared, sniffed) {
		return fmt.Errorf("%w: declared %s but the file is %s", errPermanent, declared, baseType(sniffed))
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	key := mediaKey(m.OrganizationID, m.ID, declared)
	if _, err := s.store.Put(ctx, key, tmp); err != nil {
		return err
	}
	filename, _ := m.Content.V["filename"].(string)
	return s.db.WithContext(ctx).Model(&models.Message{}).Where("id = ? AND media_status = ?", m.ID, models.MediaPending).
		Updates(map[string]any{"media_status": models.MediaStored, "media_key": key, "media_mime_type": declared,
			"media_size": n, "media_filename": SafeFilename(filename), "updated_at": s.now()}).Error
}

// providerFailure makes the provider's permanent refusals (unknown media,
// a revoked token) permanent; the rest is retried.
func providerFailure(err error) error {
	var pe *platform.Error
	if errors.As(err, &pe) && pe.Class == platform.Permanent {
		return fmt.Errorf("%w: the provider refused the media (code %d)", errPermanent, pe.Code)
	}
	return err
}

// mediaKey is where a message's media is kept: by organization and message,
// with an extension of its type (the local store serves by extension).
func mediaKey(orgID, messageID uuid.UUID, mimeType string) string {
	return "media/" + orgID.String() + "/" + messageID.String() + extensionOf(mimeType)
}

func extensionOf(mimeType string) string {
	switch mimeType {
	case "image/jpeg":
		return ".jpg"
	case "application/pdf":
		return ".pdf"
	case "audio/ogg", "audio/opus":
		return ".ogg"
	case "audio/mpeg", "audio/mp3":
		return ".mp3"
	}
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		return exts[0]
	}
	return ".bin"
}

func baseType(t string) string {
	mt, _, err := mime.ParseMediaType(t)
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// sniffable are the types http.DetectContentType recognises: a file
// declared as one of them must sniff as it.
var sniffable = map[string]string{
	"image/jpeg": "image/jpeg", "image/png": "image/png", "image/webp": "image/webp", "image/gif": "image/gif",
	"application/pdf": "application/pdf", "video/mp4": "video/mp4", "video/3gpp": "video/mp4",
	"audio/ogg": "application/ogg", "audio/opus": "application/ogg", "audio/mpeg": "audio/mpeg", "audio/mp3": "audio/mpeg",
	"audio/wav": "audio/wave", "application/zip": "application/zip",
	// Office Open XML files are zip archives.
	"application/vnd.openxmlformats-officedocument.wordprocessingml.document":   "application/zip",
	"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":         "application/zip",
	"application/vnd.openxmlformats-officedocument.presentationml.presentation": "application/zip",
}

// SniffMatches reports whether the sniffed type of a file (as
// http.DetectContentType says) fits its declared type. A declared type the
// sniffer recognises must sniff as itself. Other declared types (AAC, AMR,
// legacy Office, text) must at least not sniff as something the sniffer
// does recognise: a "document" that is in fact HTML or an executable image
// is refused.
func SniffMatches(declared, sniffed string) bool {
	declared, sniffed = baseType(declared), baseType(sniffed)
	if want, ok := sniffable[declared]; ok {
		return sniffed == want
	}
	switch sniffed {
	case "application/octet-stream":
		return true
	case "text/plain":
		return strings.HasPrefix(declared, "text/") && declared != "text/html"
	}
	return false
}

// SafeFilename keeps a file name fit for a Content-Disposition header and
// a download folder: its last path element, without control characters,
// quotes or separators, at most 200 bytes; "" when nothing is left.
func SafeFilename(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		switch {
		case r < 0x20 || r == 0x7f, r == '"', r == '/', r == ';', r == '%':
			return -1
		}
		return r
	}, name)
	name = strings.TrimSpace(strings.Trim(name, "."))
	for len(name) > 200 {
		_, size := lastRune(name)
		name = name[:len(name)-size]
	}
	if name == "" || name == "." {
		return ""
	}
	return name
}

func lastRune(s string) (rune, int) {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i]&0xC0 != 0x80 {
			return []rune(s[i:])[0], len(s) - i
		}
	}
	return 0, 1
}

// MediaFile is a message's stored media, open for reading.
type MediaFile struct {
	Body     io.ReadCloser
	MimeType string
	Size     int64
	Filename string
}

// OpenMedia opens a message's stored media, the message found in the
// organization (404 otherwise). Media not (or not yet) stored is 404 too,
// with a message saying which.
func (s *Service) OpenMedia(ctx context.Context, orgID, messageID uuid.UUID) (*MediaFile, error) {
	m, err := s.Get(ctx, orgID, messageID)
	if err != nil {
		return nil, err
	}
	switch {
	case m.MediaStatus == nil:
		return nil, apperr.NotFoundf("this message has no media")
	case *m.MediaStatus == models.MediaPending:
		return nil, apperr.NotFoundf("this message's media is not stored yet")
	case *m.MediaStatus == models.MediaUnavailable:
		return nil, apperr.NotFoundf("this message's media is unavailable")
	}
	if s.store == nil {
		return nil, errors.New("messaging: no file store configured")
	}
	rc, err := s.store.Open(ctx, m.MediaKey)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apperr.NotFoundf("this message's media is no longer stored")
	}
	if err != nil {
		return nil, err
	}
	return &MediaFile{Body: rc, MimeType: m.MediaMimeType, Size: m.MediaSize, Filename: m.MediaFilename}, nil
}

// enqueueFetch asks the worker to fetch a received message's media.
func (s *Service) enqueueFetch(ctx context.Context, orgID, messageID uuid.UUID) {
	if s.enq == nil {
		return
	}
	_, err := s.enq.Enqueue(ctx, jobs.MediaFetch{OrganizationID: orgID, MessageID: messageID})
	if err != nil && !errors.Is(err, jobs.ErrDuplicate) {
		s.log.Warn("cannot enqueue a media fetch", "message_id", messageID, "error", err)
	}
}

// SweepMedia re-enqueues the fetches of received media still pending ten
// minutes after the message was stored (and not older than two days: the
// provider keeps media for a limited time). A fetch whose task still
// exists (retrying with backoff) is a duplicate and left alone.
func (s *Service) SweepMedia(ctx context.Context) (int, error) {
	var rows []models.Message
	err := s.db.WithContext(ctx).Select("id", "organization_id").
		Where("media_status = ? AND direction = ? AND created_at < ? AND created_at > ?", models.MediaPending,
			models.DirectionIncoming, s.now().Add(-10*time.Minute), s.now().Add(-48*time.Hour)).
		Order("created_at").Limit(1000).Find(&rows).Error
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range rows {
		_, err := s.enq.Enqueue(ctx, jobs.MediaFetch{OrganizationID: m.OrganizationID, MessageID: m.ID})
		switch {
		case err == nil:
			n++
		case !errors.Is(err, jobs.ErrDuplicate):
			return n, err
		}
	}
	return n, nil
}
