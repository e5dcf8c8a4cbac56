// Package filesapi serves stored files at the signed URLs the local store
// hands out (storage.Local.SignedURL): a call recording's link, for one.
// The route takes no credentials: the expiry and the signature in the
// query are the credential, checked before anything is read from disk.
//
// With S3 configured, signed URLs point at the bucket and this route
// answers 404 to everything.
package filesapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/storage"
)

// Handlers serves the file route.
type Handlers struct {
	// local is nil when files are not on local disk (S3), or when the
	// store cannot verify signatures.
	local *storage.Local
}

// New builds the handlers over the process's store; only a local store
// is served.
func New(store storage.Store) *Handlers {
	local, _ := store.(*storage.Local)
	return &Handlers{local: local}
}

type fileQuery struct {
	Expires   string `query:"expires" description:"Unix time (seconds) the link expires at, as signed."`
	Signature string `query:"signature" description:"Hex HMAC-SHA256 of the key, a newline and expires."`
}

// Routes lists the file route. It reads no field of h, so a nil *Handlers
// lists the table too (documentation, OpenAPI).
func (h *Handlers) Routes() []web.Route {
	return []web.Route{
		{Method: "GET", Path: "/api/files/*key", Access: web.Public(), Handler: h.serve, Query: fileQuery{},
			Summary: "Serve a stored file from a signed link (no credentials): its bytes with its content type " +
				"(audio/ogg, audio/wav, else application/octet-stream) and range requests; a changed or expired link is 403",
			Produces: "application/octet-stream", Errors: []int{http.StatusForbidden}},
	}
}

// serve checks the link, then serves the file. Expired and tampered links
// are both 403 (the link grants nothing either way), with messages that
// tell them apart; 404 only once the link is valid, so that a guess
// learns nothing about which keys exist.
func (h *Handlers) serve(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	notFound := apperr.NotFoundf("file not found")
	if h.local == nil {
		web.Fail(c, notFound)
		return
	}
	key := strings.TrimPrefix(c.Param("key"), "/")
	expires := c.Query("expires")
	now := time.Now()
	switch err := h.local.Verify(key, expires, c.Query("signature"), now); {
	case errors.Is(err, storage.ErrExpired):
		web.Fail(c, apperr.Forbiddenf("this link has expired: ask for a new one"))
		return
	case errors.Is(err, storage.ErrBadSignature):
		web.Fail(c, apperr.Forbiddenf("invalid link: the signature does not match its path and expiry"))
		return
	case errors.Is(err, storage.ErrNoSigning):
		web.Fail(c, notFound)
		return
	case err != nil:
		web.Fail(c, err)
		return
	}
	rc, err := h.local.Open(c.Request.Context(), key)
	if errors.Is(err, storage.ErrNotFound) {
		web.Fail(c, notFound)
		return
	}
	if err != nil {
		web.Fail(c, err)
		return
	}
	defer rc.Close()
	// Local.Open returns an *os.File: seekable for range requests (audio
	// players seek) and with a size for Content-Length.
	f, ok := rc.(http.File)
	if !ok {
		web.Fail(c, fmt.Errorf("filesapi: %T cannot be served", rc))
		return
	}
	st, err := f.Stat()
	if err != nil {
		web.Fail(c, err)
		return
	}
	exp, _ := strconv.ParseInt(expires, 10, 64) // verified above
	maxAge := max(0, int64(time.Unix(exp, 0).Sub(now)/time.Second))
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", storage.ContentType(key))
	hdr.Set("Cache-Control", fmt.Sprintf("private, max-age=%d", maxAge))
	hdr.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(c.Writer, c.Request, "", st.ModTime(), f)
}
