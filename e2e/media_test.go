package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// A customer's image goes webhook → inbound → messaging → media:fetch →
// storage, and GET /api/messages/{id}/media serves the bytes the customer
// sent; an uploaded PDF is sent as a document message that the provider
// holds with the same bytes.
func TestMediaBothWays(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	f.StartWorker()

	image := []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0, 7, 7, 7, 7}
	f.Incoming(platformsim.Incoming{From: "15550007777", ProfileName: "Eve", Type: "image", MimeType: "image/jpeg",
		Caption: "my receipt", Data: image})
	var m models.Message
	apptest.Eventually(t, 15*time.Second, "the image stored", func() bool {
		err := f.DB.Where("type = ? AND direction = ?", "image", models.DirectionIncoming).Take(&m).Error
		return err == nil && m.MediaStatus != nil && *m.MediaStatus == models.MediaStored
	})
	r := f.Do("GET", "/api/messages/"+m.ID.String()+"/media", nil, f.admin.Auth()).Expect(t, 200)
	if !bytes.Equal(r.Body, image) || r.Header.Get("Content-Type") != "image/jpeg" {
		t.Fatalf("served %d bytes of %s, want the customer's %d", len(r.Body), r.Header.Get("Content-Type"), len(image))
	}
	var page struct {
		Items []struct {
			ID    string `json:"id"`
			Media struct{ Status, URL string }
		} `json:"items"`
	}
	f.Do("GET", "/api/contacts/"+m.ContactID.String()+"/messages", nil, f.admin.Auth()).Expect(t, 200).Into(t, &page)
	if len(page.Items) != 1 || page.Items[0].Media.Status != "stored" || page.Items[0].Media.URL != "/api/messages/"+m.ID.String()+"/media" {
		t.Fatalf("message answer %+v", page.Items)
	}

	// The agent answers with a PDF.
	pdf := []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="invoice.pdf"`)
	h.Set("Content-Type", "application/pdf")
	w, _ := mw.CreatePart(h)
	_, _ = w.Write(pdf)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", f.Server.URL+"/api/media", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	f.admin.Auth()(req)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var up struct {
		Data struct{ ID string } `json:"data"`
	}
	_ = json.NewDecoder(res.Body).Decode(&up)
	res.Body.Close()
	if res.StatusCode != 201 || up.Data.ID == "" {
		t.Fatalf("upload answered %d", res.StatusCode)
	}
	var sent sentAnswer
	f.Do("POST", "/api/contacts/"+m.ContactID.String()+"/messages", map[string]any{"type": "document",
		"media": map[string]string{"id": up.Data.ID}}, f.admin.Auth()).Expect(t, 201).Into(t, &sent)
	msgs := f.Sim.Messages(platformsim.MessageFilter{To: "15550007777"})
	if len(msgs) != 1 || msgs[0].Type != "document" {
		t.Fatalf("the simulator received %+v, want one document", msgs)
	}
	var body struct {
		Document platform.Media `json:"document"`
	}
	_ = json.Unmarshal(msgs[0].Body, &body)
	client := platform.New(f.SimServer.URL, "", nil)
	cr := platform.Creds{AccessToken: f.WABA.AccessToken}
	info, err := client.Media(context.Background(), cr, body.Document.ID)
	if err != nil {
		t.Fatalf("the document's media id %q: %v", body.Document.ID, err)
	}
	var got bytes.Buffer
	if _, err := client.DownloadMedia(context.Background(), cr, info.URL, &got, 1<<20); err != nil || !bytes.Equal(got.Bytes(), pdf) ||
		info.MimeType != "application/pdf" || body.Document.Filename != "invoice.pdf" {
		t.Fatalf("the simulator holds %q (%s, %v) named %q, want the PDF", got.Bytes(), info.MimeType, err, body.Document.Filename)
	}
	f.waitStatus(t, sent.ID, "read")
}
