package api_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

const pdfBytes = "%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"

// mediaEnv is a system with a connected account, a contact that wrote an
// hour ago, another organization's admin, and users without the messages
// permissions.
type mediaEnv struct {
	*apptest.SimEnv
	admin, other, noRead, noCreate apptest.Session
	orgID, contactID               string
}

func newMediaEnv(t *testing.T) *mediaEnv {
	e := apptest.NewWithSim(t, nil, nil)
	admin := e.Admin()
	accountID := e.ConnectAccount(admin.Auth(), "main")
	var c struct{ ID string }
	e.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550002222", "name": "Ann", "account_id": accountID},
		admin.Auth()).Expect(t, 201).Into(t, &c)
	if err := e.DB.Model(&models.Contact{}).Where("id = ?", c.ID).Update("last_inbound_at", time.Now().Add(-time.Hour)).Error; err != nil {
		t.Fatal(err)
	}
	e.Do("POST", "/api/roles", map[string]any{"name": "Contacts only", "permissions": []string{"contacts:read"}}, admin.Auth()).Expect(t, 201)
	e.Do("POST", "/api/roles", map[string]any{"name": "Readers", "permissions": []string{"contacts:read", "messages:read"}}, admin.Auth()).Expect(t, 201)
	var orgB struct{ ID string }
	e.Do("POST", "/api/organizations", map[string]string{"name": "Org B"}, admin.Auth()).Expect(t, 201).Into(t, &orgB)
	var other apptest.Session
	e.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, admin.Auth()).Expect(t, 200).Into(t, &other)
	return &mediaEnv{SimEnv: e, admin: e.Admin(), other: other, orgID: admin.User.OrganizationID, contactID: c.ID,
		noRead: e.CreateUser(admin.Auth(), "noread@x.com", "Contacts only"), noCreate: e.CreateUser(admin.Auth(), "reader@x.com", "Readers")}
}

// upload posts one file with a declared part Content-Type.
func (e *mediaEnv) upload(t *testing.T, fields map[string]string, name, ctype string, data []byte, auth apptest.Auth) *apptest.Resp {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	h.Set("Content-Type", ctype)
	w, _ := mw.CreatePart(h)
	_, _ = w.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", e.Server.URL+"/api/media", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	auth(req)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := &apptest.Resp{Status: res.StatusCode, Header: res.Header}
	out.Body, _ = readAll(res)
	var env struct {
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(out.Body, &env) == nil {
		out.Outcome, out.Message, out.Data = env.Status, env.Message, env.Data
	}
	return out
}

func readAll(res *http.Response) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(res.Body)
	return b.Bytes(), err
}

// storedFiles counts the files under the store's directory dir.
func (e *mediaEnv) storedFiles(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.Walk(filepath.Join(e.Cfg.StorageDir, dir), func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// storedMessage stores an incoming message of the contact with media in
// the given state (and the file, when stored).
func (e *mediaEnv) storedMessage(t *testing.T, typ, status, mimeType, filename string, data []byte) string {
	t.Helper()
	id := uuid.New()
	key := "media/" + e.orgID + "/" + id.String() + ".bin"
	m := models.Message{ID: id, OrganizationID: uuid.MustParse(e.orgID), ContactID: uuid.MustParse(e.contactID),
		Direction: models.DirectionIncoming, Type: typ, Status: models.StatusDelivered, OccurredAt: time.Now(),
		MediaStatus: &status, MediaKey: key, MediaMimeType: mimeType, MediaSize: int64(len(data)), MediaFilename: filename}
	m.Content.V = map[string]any{"id": "123", "mime_type": mimeType}
	if err := e.DB.Create(&m).Error; err != nil {
		t.Fatal(err)
	}
	if status == models.MediaStored {
		path := filepath.Join(e.Cfg.StorageDir, key)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return id.String()
}

func wantEnvelopeError(t *testing.T, r *apptest.Resp, status int, msg string) {
	t.Helper()
	if r.Status != status || r.Outcome != "error" || !strings.Contains(r.Message, msg) || string(r.Data) != "null" {
		t.Errorf("answer %d %s, want %d error envelope containing %q", r.Status, r.Body, status, msg)
	}
}

func TestMessageMediaIsServedToReadersOfTheMessage(t *testing.T) {
	e := newMediaEnv(t)
	jpeg := []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0, 1, 2, 3}
	img := e.storedMessage(t, "image", models.MediaStored, "image/jpeg", "", jpeg)

	r := e.Do("GET", "/api/messages/"+img+"/media", nil, e.noCreate.Auth()).Expect(t, 200)
	if !bytes.Equal(r.Body, jpeg) || r.Header.Get("Content-Type") != "image/jpeg" || r.Header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.HasPrefix(r.Header.Get("Content-Disposition"), "inline; filename=message-"+img) {
		t.Errorf("image answered %q %v", r.Body, r.Header)
	}

	// A type a browser could run or misread is an attachment, under a
	// safe name.
	doc := e.storedMessage(t, "document", models.MediaStored, "application/vnd.ms-excel", "evil\".xls", []byte("\xD0\xCF\x11\xE0"))
	r = e.Do("GET", "/api/messages/"+doc+"/media", nil, e.admin.Auth()).Expect(t, 200)
	if cd := r.Header.Get("Content-Disposition"); cd != `attachment; filename=evil.xls` || r.Header.Get("Content-Type") != "application/vnd.ms-excel" {
		t.Errorf("document served as %q, %q", r.Header.Get("Content-Type"), cd)
	}

	// The message answer says where the media is, and whether it is there.
	pending := e.storedMessage(t, "video", models.MediaPending, "video/mp4", "", nil)
	gone := e.storedMessage(t, "audio", models.MediaUnavailable, "audio/ogg", "", nil)
	var page struct {
		Items []struct {
			ID    string `json:"id"`
			Media *struct {
				Status   string `json:"status"`
				URL      string `json:"url"`
				MimeType string `json:"mime_type"`
			} `json:"media"`
		} `json:"items"`
	}
	e.Do("GET", "/api/contacts/"+e.contactID+"/messages", nil, e.admin.Auth()).Expect(t, 200).Into(t, &page)
	want := map[string]string{img: "stored /api/messages/" + img + "/media image/jpeg", pending: "pending  ", gone: "unavailable  ",
		doc: "stored /api/messages/" + doc + "/media application/vnd.ms-excel"}
	for _, it := range page.Items {
		if it.Media == nil {
			t.Errorf("message %s has no media in its answer", it.ID)
			continue
		}
		if got := it.Media.Status + " " + it.Media.URL + " " + it.Media.MimeType; got != want[it.ID] {
			t.Errorf("message %s media %q, want %q", it.ID, got, want[it.ID])
		}
	}
	wantEnvelopeError(t, e.Do("GET", "/api/messages/"+pending+"/media", nil, e.admin.Auth()), 404, "not stored yet")
	wantEnvelopeError(t, e.Do("GET", "/api/messages/"+gone+"/media", nil, e.admin.Auth()), 404, "unavailable")

	// Refusals: another organization, no messages:read.
	wantEnvelopeError(t, e.Do("GET", "/api/messages/"+img+"/media", nil, e.other.Auth()), 404, "message not found")
	r = e.Do("GET", "/api/messages/"+img+"/media", nil, e.noRead.Auth())
	wantEnvelopeError(t, r, 403, "messages:read")
}

func TestMediaUploadAndSend(t *testing.T) {
	e := newMediaEnv(t)

	// Refusals store nothing: no permission, oversize, wrong type, no file.
	wantEnvelopeError(t, e.upload(t, nil, "a.pdf", "application/pdf", []byte(pdfBytes), e.noCreate.Auth()), 403, "messages:create")
	big := append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 5<<20)...)
	wantEnvelopeError(t, e.upload(t, map[string]string{"type": "image"}, "big.jpg", "image/jpeg", big, e.admin.Auth()), 413,
		"the provider takes image files of at most 5.0 MB")
	wantEnvelopeError(t, e.upload(t, nil, "a.gif", "image/gif", []byte("GIF89a......"), e.admin.Auth()), 400,
		"image/gif is not accepted for image messages")
	wantEnvelopeError(t, e.upload(t, nil, "a.pdf", "application/pdf", []byte("<html><script>x</script></html>"), e.admin.Auth()), 400,
		"its content is text/html")
	wantEnvelopeError(t, e.Upload("/api/media", map[string]string{"type": "document"}, "", "", nil, e.admin.Auth()), 400, "file is required")
	if n := e.storedFiles(t, "uploads"); n != 0 {
		t.Fatalf("%d files stored after refusals", n)
	}
	var count int64
	e.DB.Model(&models.MediaUpload{}).Count(&count)
	if count != 0 {
		t.Fatalf("%d uploads recorded after refusals", count)
	}

	// A PDF is kept and sent as a document.
	var up struct {
		ID, Type, MimeType, Filename string
		Size                         int64
	}
	r := e.upload(t, nil, "Quote.pdf", "application/pdf", []byte(pdfBytes), e.admin.Auth()).Expect(t, 201)
	r.Into(t, &up)
	if up.Type != "document" || up.Size != int64(len(pdfBytes)) || e.storedFiles(t, "uploads") != 1 {
		t.Fatalf("upload %s", r.Body)
	}
	// Another organization cannot send it; the type must be the upload's.
	var otherContact struct{ ID string }
	e.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550003333"}, e.other.Auth()).Expect(t, 201).Into(t, &otherContact)
	wantEnvelopeError(t, e.Do("POST", "/api/contacts/"+otherContact.ID+"/messages", map[string]any{"type": "document",
		"media": map[string]string{"id": up.ID}}, e.other.Auth()), 404, "media not found")
	wantEnvelopeError(t, e.Do("POST", "/api/contacts/"+e.contactID+"/messages", map[string]any{"type": "image",
		"media": map[string]string{"id": up.ID}}, e.admin.Auth()), 400, "uploaded as document, not image")
	wantEnvelopeError(t, e.Do("POST", "/api/contacts/"+e.contactID+"/messages", map[string]any{"type": "document"}, e.admin.Auth()), 400,
		"media.id is required")

	var sent struct{ ID string }
	e.Do("POST", "/api/contacts/"+e.contactID+"/messages", map[string]any{"type": "document",
		"media": map[string]string{"id": up.ID, "caption": "your quote"}}, e.admin.Auth()).Expect(t, 201).Into(t, &sent)
	msgs := e.Sim.Messages(platformsim.MessageFilter{To: "15550002222"})
	if len(msgs) != 1 || msgs[0].Type != "document" || !strings.Contains(string(msgs[0].Body), `"filename":"Quote.pdf"`) {
		t.Fatalf("the provider got %+v", msgs)
	}
	// The sent message serves its file too.
	r = e.Do("GET", "/api/messages/"+sent.ID+"/media", nil, e.admin.Auth()).Expect(t, 200)
	if string(r.Body) != pdfBytes || r.Header.Get("Content-Type") != "application/pdf" {
		t.Errorf("sent message media %q %q", r.Body, r.Header.Get("Content-Type"))
	}
}
