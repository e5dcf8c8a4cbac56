package messaging

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
	"wharf/platform"
)

// MaxUpload is the largest file POST /api/media takes (a document).
const MaxUpload = 100 << 20

// uploadRule is what the provider accepts for sending one media type.
type uploadRule struct {
	maxBytes int64
	types    []string
}

// UploadRules are the provider's limits for media sent by upload: the link
// rules (MediaRules) and stickers, static WebP up to 100 KB or animated up
// to 500 KB (the static limit is applied in checkUpload).
var UploadRules = map[string]uploadRule{
	"image":    {MediaRules["image"].maxBytes, MediaRules["image"].types},
	"video":    {MediaRules["video"].maxBytes, MediaRules["video"].types},
	"audio":    {MediaRules["audio"].maxBytes, append(slices.Clone(MediaRules["audio"].types), "audio/amr", "audio/mp4")},
	"document": {MediaRules["document"].maxBytes, append(slices.Clone(MediaRules["document"].types), "text/plain")},
	"sticker":  {500 << 10, []string{"image/webp"}},
}

const staticStickerMax = 100 << 10

// UploadInput is a file to keep for sending. File is read from its start;
// Size is its length in bytes.
type UploadInput struct {
	Kind     string // image, video, audio, document, sticker; "" to derive from the type
	Filename string
	MimeType string // as the client declared it; "" or octet-stream: the sniffed one
	File     io.ReadSeeker
	Size     int64
	By       *uuid.UUID
}

// KindOf is the message type a media type is sent as.
func KindOf(mimeType string) string {
	switch mt := baseType(mimeType); {
	case mt == "image/webp":
		return "sticker"
	case strings.HasPrefix(mt, "image/"):
		return "image"
	case strings.HasPrefix(mt, "video/"):
		return "video"
	case strings.HasPrefix(mt, "audio/"):
		return "audio"
	}
	return "document"
}

// Upload checks a file against the provider's limits for its type and
// keeps it: the size first (TooLarge), then the declared type (Invalid when
// the provider takes no such type for the kind, or when the content sniffs
// as something else). Nothing is stored for a refused file.
func (s *Service) Upload(ctx context.Context, orgID uuid.UUID, in UploadInput) (*models.MediaUpload, error) {
	if s.store == nil {
		return nil, errors.New("messaging: no file store configured")
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(in.File, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	head = head[:n]
	sniffed := baseType(http.DetectContentType(head))
	declared := baseType(in.MimeType)
	if declared == "" || declared == "application/octet-stream" {
		declared = sniffed
	}
	kind := in.Kind
	if kind == "" {
		kind = KindOf(declared)
	}
	rule, ok := UploadRules[kind]
	if !ok {
		return nil, apperr.Invalidf("type must be image, video, audio, document or sticker")
	}
	if in.Size == 0 {
		return nil, apperr.Invalidf("the file is empty")
	}
	limit := rule.maxBytes
	if kind == "sticker" && !animatedWebP(head) {
		limit = staticStickerMax
	}
	if in.Size > limit {
		return nil, apperr.TooLargef("the file is %s: the provider takes %s files of at most %s", sizeText(in.Size), kind, sizeText(limit))
	}
	if !slices.Contains(rule.types, declared) {
		return nil, apperr.Invalidf("%s is not accepted for %s messages (accepted: %s)", declared, kind, strings.Join(rule.types, ", "))
	}
	if !SniffMatches(declared, sniffed) {
		return nil, apperr.Invalidf("the file was declared %s but its content is %s", declared, sniffed)
	}
	if _, err := in.File.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	id := uuid.New()
	key := "uploads/" + orgID.String() + "/" + id.String() + extensionOf(declared)
	h := sha256.New()
	written, err := s.store.Put(ctx, key, io.TeeReader(in.File, h))
	if err != nil {
		return nil, err
	}
	u := models.MediaUpload{ID: id, OrganizationID: orgID, UploadedBy: in.By, Kind: kind, MimeType: declared,
		Filename: SafeFilename(in.Filename), Size: written, SHA256: hex.EncodeToString(h.Sum(nil)), StorageKey: key, CreatedAt: s.now()}
	if err := s.db.WithContext(ctx).Create(&u).Error; err != nil {
		_ = s.store.Delete(context.WithoutCancel(ctx), key)
		return nil, err
	}
	return &u, nil
}

// animatedWebP reports whether a WebP file's header says it is animated
// (an extended VP8X header with the animation flag).
func animatedWebP(head []byte) bool {
	return len(head) > 20 && string(head[0:4]) == "RIFF" && string(head[8:16]) == "WEBPVP8X" && head[20]&0x02 != 0
}

func sizeText(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%d KB", (n+1023)>>10)
	}
	return humanBytes(n)
}

// UploadedInput sends an uploaded file to a contact.
type UploadedInput struct {
	ContactID uuid.UUID
	MediaID   uuid.UUID
	Kind      string // the message type asked for: must be the upload's
	Caption   string
	Filename  string // documents: the name the customer sees; default the upload's
}

// SendUploaded sends a file uploaded with Upload as a media message of the
// upload's kind. The file goes to the provider's media endpoint from the
// sending account (POST /{phone_number_id}/media), and the message names
// the provider's media id: the provider never fetches from us, so no public
// link to our storage exists and PUBLIC_URL need not be reachable from the
// internet. Provider media ids belong to one phone number and expire, so
// the upload is made for each send. The message keeps the stored file: GET
// /api/messages/{id}/media serves it like received media.
func (s *Service) SendUploaded(ctx context.Context, orgID uuid.UUID, actor Actor, in UploadedInput) (*Sent, error) {
	u, err := tenant.Get[models.MediaUpload](ctx, s.db, orgID, in.MediaID, "media not found")
	if err != nil {
		return nil, err
	}
	if in.Kind != "" && in.Kind != u.Kind {
		return nil, apperr.Invalidf("media %s was uploaded as %s, not %s", u.ID, u.Kind, in.Kind)
	}
	if len([]rune(in.Caption)) > 1024 {
		return nil, apperr.Invalidf("caption must be at most 1024 characters")
	}
	if in.Caption != "" && (u.Kind == "audio" || u.Kind == "sticker") {
		return nil, apperr.Invalidf("%s messages cannot have a caption", u.Kind)
	}
	c, err := s.windowContact(ctx, orgID, in.ContactID)
	if err != nil {
		return nil, err
	}
	a, err := s.accounts.Sender(ctx, orgID, "", c.AccountID)
	if err != nil {
		return nil, err
	}
	filename := ""
	if u.Kind == "document" {
		filename = SafeFilename(in.Filename)
		if filename == "" {
			filename = u.Filename
		}
	}
	rc, err := s.store.Open(ctx, u.StorageKey)
	if err != nil {
		return nil, err
	}
	providerID, err := s.provider.UploadMedia(ctx, a.Creds(), uploadName(u, filename), u.MimeType, rc)
	rc.Close()
	if err != nil {
		var pe *platform.Error
		if errors.As(err, &pe) && pe.Class == platform.Permanent {
			return nil, apperr.Invalidf("the provider refused the file (code %d: %s)", pe.Code, providerText(pe))
		}
		return nil, apperr.Upstreamf("the provider's media upload failed: %v", err)
	}
	content := map[string]any{"media_id": u.ID.String(), "mime_type": u.MimeType}
	if in.Caption != "" {
		content["caption"] = in.Caption
	}
	if filename != "" {
		content["filename"] = filename
	}
	stored := models.MediaStored
	return s.sendFrom(ctx, orgID, actor, c, a, prepared{typ: u.Kind, content: content,
		media: &models.Message{MediaStatus: &stored, MediaKey: u.StorageKey, MediaMimeType: u.MimeType, MediaSize: u.Size, MediaFilename: filename},
		build: func(to string) platform.Message {
			m := platform.NewMessage(to, u.Kind)
			media := &platform.Media{ID: providerID, Caption: in.Caption, Filename: filename}
			switch u.Kind {
			case "image":
				m.Image = media
			case "video":
				m.Video = media
			case "audio":
				m.Audio = media
			case "sticker":
				m.Sticker = media
			default:
				m.Document = media
			}
			return m
		}})
}

// uploadName is the file name given to the provider.
func uploadName(u *models.MediaUpload, filename string) string {
	if filename != "" {
		return filename
	}
	if u.Filename != "" {
		return u.Filename
	}
	return u.ID.String() + extensionOf(u.MimeType)
}
