package platformsim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"mime"
	"net/http"
	"strconv"
)

type media struct {
	id       string
	waba     string
	phoneID  string
	mimeType string
	sha256   string
	filename string
	data     []byte
}

func (m *media) wabaID() string   { return m.waba }
func (m *media) nodeType() string { return "WhatsAppBusinessMedia" }

func (m *media) fields(base string) map[string]any {
	return map[string]any{
		"messaging_product": "whatsapp",
		"url":               base + "/_sim/media/" + m.id + "/download",
		"mime_type":         m.mimeType,
		"sha256":            m.sha256,
		"file_size":         len(m.data),
		"id":                m.id,
	}
}

// addMediaLocked stores bytes as a media object of ph's account.
func (s *Simulator) addMediaLocked(ph *phone, mimeType, filename string, data []byte) *media {
	sum := sha256.Sum256(data)
	m := &media{id: s.newIDLocked(), waba: ph.waba.id, phoneID: ph.id, mimeType: mimeType,
		sha256: hex.EncodeToString(sum[:]), filename: filename, data: data}
	s.objects[m.id] = m
	return m
}

// handleUploadMedia serves POST /{version}/{phone_number_id}/media
// (multipart: file, type, messaging_product).
func (s *Simulator) handleUploadMedia(w http.ResponseWriter, r *http.Request) {
	var (
		formErr  *apiError
		data     []byte
		mimeType string
		filename string
	)
	if err := r.ParseMultipartForm(maxRequestBody); err != nil {
		formErr = errInvalid("the body must be multipart/form-data: %v", err)
	} else {
		defer r.MultipartForm.RemoveAll()
		mimeType = r.FormValue("type")
		f, hdr, err := r.FormFile("file")
		switch {
		case r.FormValue("messaging_product") != "whatsapp":
			formErr = errInvalid("messaging_product must be \"whatsapp\"")
		case err != nil:
			formErr = errMissing("file")
		default:
			data, err = io.ReadAll(f)
			f.Close()
			if err != nil {
				formErr = errInvalid("could not read the file: %v", err)
			}
			filename = hdr.Filename
			if mimeType == "" {
				mimeType = hdr.Header.Get("Content-Type")
			}
			if mimeType == "" {
				formErr = errMissing("type")
			} else if _, _, err := mime.ParseMediaType(mimeType); err != nil {
				formErr = errParamValue("type %q is not a MIME type", mimeType)
			}
		}
	}
	s.mu.Lock()
	ph, aerr := objectAs[*phone](s, r, r.PathValue("id"), "media")
	if aerr == nil {
		aerr = formErr
	}
	var m *media
	if aerr == nil {
		m = s.addMediaLocked(ph, mimeType, filename, data)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": m.id})
}

// handleDownloadMedia serves GET /_sim/media/{id}/download, the URL that
// GET /{media_id} hands out. Like the provider's media URLs it needs the
// bearer token.
func (s *Simulator) handleDownloadMedia(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	m, aerr := objectAs[*media](s, r, r.PathValue("id"), "download")
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	w.Header().Set("Content-Type", m.mimeType)
	w.Header().Set("Content-Length", strconv.Itoa(len(m.data)))
	_, _ = w.Write(m.data)
}

// sampleMedia returns plausible bytes for an incoming media message of the
// given type, so that a backend sniffing content is not surprised.
func sampleMedia(kind, mimeType string) []byte {
	switch kind {
	case "image":
		var buf bytes.Buffer
		img := image.NewRGBA(image.Rect(0, 0, 2, 2))
		img.Set(0, 0, color.RGBA{R: 200, A: 255})
		_ = jpeg.Encode(&buf, img, nil)
		return buf.Bytes()
	case "video":
		// An ISO BMFF ftyp box: enough for content sniffers to say video/mp4.
		return append([]byte{0, 0, 0, 0x18}, []byte("ftypmp42\x00\x00\x00\x00mp42isom")...)
	case "audio":
		return append([]byte("OggS\x00\x02"), make([]byte, 22)...)
	default:
		if mimeType == "application/pdf" || mimeType == "" {
			return []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
		}
		return []byte("simulated document\n")
	}
}
