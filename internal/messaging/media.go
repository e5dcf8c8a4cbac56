package messaging

import (
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/safehttp"
	"wharf/platform"
)

// mediaRule is what the platform accepts for one media type.
type mediaRule struct {
	maxBytes int64
	types    []string
	label    string
}

// MediaRules are the spec's media limits.
var MediaRules = map[string]mediaRule{
	"image": {5 << 20, []string{"image/jpeg", "image/png"}, "JPEG or PNG up to 5 MB"},
	"video": {16 << 20, []string{"video/mp4", "video/3gpp"}, "MP4 or 3GPP up to 16 MB"},
	"audio": {16 << 20, []string{"audio/aac", "audio/mpeg", "audio/mp3", "audio/ogg", "audio/opus"}, "AAC, MP3 or OGG up to 16 MB"},
	"document": {100 << 20, []string{
		"application/pdf", "application/msword", "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"application/vnd.ms-excel", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
		"application/vnd.ms-powerpoint", "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	}, "PDF, DOC(X), XLS(X) or PPT(X) up to 100 MB"},
}

// MediaInput is the body of POST /api/messages/media.
type MediaInput struct {
	ContactID uuid.UUID
	Type      string
	URL       string
	Caption   string
}

// SendMedia sends media by link after checking, through the SSRF-safe
// client, that the link answers with an allowed type and size. The contact
// is looked up (in the caller's organization) and its service window
// checked first: no request goes to the link for a send that cannot
// happen, nor on behalf of a caller naming another tenant's contact.
func (s *Service) SendMedia(ctx context.Context, orgID uuid.UUID, actor Actor, in MediaInput) (*Sent, error) {
	rule, ok := MediaRules[in.Type]
	if !ok {
		return nil, apperr.Invalidf("type must be image, video, audio or document")
	}
	if err := s.policy.ValidateURL(in.URL); err != nil {
		return nil, apperr.Invalidf("media_url: %s", safehttp.Public(err))
	}
	if len([]rune(in.Caption)) > 1024 {
		return nil, apperr.Invalidf("caption must be at most 1024 characters")
	}
	if in.Caption != "" && in.Type == "audio" {
		return nil, apperr.Invalidf("audio messages cannot have a caption")
	}
	c, err := s.windowContact(ctx, orgID, in.ContactID)
	if err != nil {
		return nil, err
	}
	if err := s.checkMedia(ctx, in.URL, rule); err != nil {
		return nil, err
	}
	filename := ""
	if in.Type == "document" {
		if u, err := url.Parse(in.URL); err == nil {
			filename = u.Path[strings.LastIndex(u.Path, "/")+1:]
		}
	}
	content := map[string]any{"media_url": in.URL, "caption": in.Caption}
	if filename != "" {
		content["filename"] = filename
	}
	return s.sendTo(ctx, orgID, actor, c, prepared{typ: in.Type, content: content,
		build: func(to string) platform.Message {
			m := platform.NewMessage(to, in.Type)
			media := &platform.Media{Link: in.URL, Caption: in.Caption, Filename: filename}
			switch in.Type {
			case "image":
				m.Image = media
			case "video":
				m.Video = media
			case "audio":
				m.Audio = media
			default:
				m.Document = media
			}
			return m
		}})
}

// checkMedia asks the link for its type and size (HEAD, or a GET read up to
// the limit when the server does not say), and refuses what the platform
// would refuse.
func (s *Service) checkMedia(ctx context.Context, link string, rule mediaRule) error {
	head, err := http.NewRequestWithContext(ctx, http.MethodHead, link, nil)
	if err != nil {
		return apperr.Invalidf("media_url is not a valid URL")
	}
	res, err := s.media.Do(head)
	if err != nil {
		return s.unreachable(err)
	}
	res.Body.Close()
	size := res.ContentLength
	ctype := res.Header.Get("Content-Type")
	if res.StatusCode == http.StatusMethodNotAllowed || res.StatusCode == http.StatusNotImplemented || size < 0 {
		get, _ := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
		res, err = s.media.Do(get)
		if err != nil {
			return s.unreachable(err)
		}
		defer res.Body.Close()
		ctype = res.Header.Get("Content-Type")
		if size = res.ContentLength; size < 0 && res.StatusCode/100 == 2 {
			size, _ = io.Copy(io.Discard, io.LimitReader(res.Body, rule.maxBytes+1))
		}
	}
	if res.StatusCode/100 != 2 {
		return apperr.Invalidf("media_url answered %s", res.Status)
	}
	mt, _, _ := mime.ParseMediaType(ctype)
	if !slices.Contains(rule.types, strings.ToLower(mt)) {
		return apperr.Invalidf("media type %q is not accepted for this message type: %s", mt, rule.label)
	}
	if size > rule.maxBytes {
		return apperr.Invalidf("media is %s, over the limit: %s", humanBytes(size), rule.label)
	}
	return nil
}

// unreachable answers a failed media check with a fixed phrase: the error
// names the address the host resolved to, which only the log may see.
func (s *Service) unreachable(err error) error {
	s.log.Info("media link check failed", "error", err)
	return apperr.Invalidf("media_url: %s", safehttp.Public(err))
}

func humanBytes(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

func httpURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an http(s) URL")
	}
	return nil
}
