package messagesapi

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/messaging"
)

// serveMedia answers GET /api/messages/{id}/media: the message's stored
// file, for a reader of the organization's messages. The browser must not
// guess the type (nosniff) nor render what could run script in our origin:
// only images, audio, video and PDF are inline, everything else is an
// attachment, and a sandbox CSP covers what is rendered.
func (h *Handlers) serveMedia(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if !h.visibleMessage(c, id) {
		return
	}
	f, err := h.messaging.OpenMedia(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	defer f.Body.Close()
	name := f.Filename
	if name == "" {
		name = "message-" + id.String() + extension(f.MimeType)
	}
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", f.MimeType)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hdr.Set("Cache-Control", "private, max-age=3600")
	hdr.Set("Content-Disposition", disposition(f.MimeType, name))
	if rs, ok := f.Body.(io.ReadSeeker); ok {
		http.ServeContent(c.Writer, c.Request, "", time.Time{}, rs)
		return
	}
	hdr.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	c.Status(http.StatusOK)
	_, _ = io.Copy(c.Writer, f.Body)
}

// Inline reports whether a media type is shown in the browser rather than
// downloaded: images (not SVG, which runs script), audio, video and PDF.
func Inline(mimeType string) bool {
	switch {
	case mimeType == "image/svg+xml":
		return false
	case strings.HasPrefix(mimeType, "image/"), strings.HasPrefix(mimeType, "audio/"), strings.HasPrefix(mimeType, "video/"):
		return true
	}
	return mimeType == "application/pdf"
}

func disposition(mimeType, filename string) string {
	kind := "attachment"
	if Inline(mimeType) {
		kind = "inline"
	}
	if v := mime.FormatMediaType(kind, map[string]string{"filename": messaging.SafeFilename(filename)}); v != "" {
		return v
	}
	return kind
}

func extension(mimeType string) string {
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		return exts[0]
	}
	return ""
}

// upload answers POST /api/media: multipart `file` and optional `type`.
func (h *Handlers) upload(c *gin.Context) {
	// Room for the largest file plus the multipart framing; anything bigger
	// is cut off here, before it is buffered.
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, messaging.MaxUpload+64<<10)
	fh, err := c.FormFile("file")
	if err != nil {
		var maxBytes *http.MaxBytesError
		if errors.As(err, &maxBytes) {
			web.Fail(c, apperr.TooLargef("the file is larger than the largest media the provider takes (100 MB)"))
			return
		}
		web.Fail(c, apperr.Invalidf("file is required (multipart/form-data field 'file')"))
		return
	}
	f, err := fh.Open()
	if err != nil {
		web.Fail(c, err)
		return
	}
	defer f.Close()
	p := web.Principal(c)
	var by *uuid.UUID
	if p.UserID != uuid.Nil {
		by = &p.UserID
	}
	u, err := h.messaging.Upload(c.Request.Context(), p.OrgID, messaging.UploadInput{Kind: c.PostForm("type"),
		Filename: fh.Filename, MimeType: fh.Header.Get("Content-Type"), File: f, Size: fh.Size, By: by})
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, uploadResp{ID: u.ID, Type: u.Kind, MimeType: u.MimeType, Filename: u.Filename, Size: u.Size,
		SHA256: u.SHA256, CreatedAt: web.UTC(u.CreatedAt)})
}

func mediaPath(id fmt.Stringer) string { return "/api/messages/" + id.String() + "/media" }
