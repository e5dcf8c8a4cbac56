package messaging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/storage"
	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

const samplePDF = "%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"

// Files uploaded for sending are checked against the provider's limits,
// kept, and sent by the provider's media upload.
func TestUploads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f       *testfactory.Factory
		p       *testfactory.Provider
		store   storage.Store
		org     *testfactory.Org
		agent   models.User
		contact models.Contact
	}
	setup := func(t *testing.T) (*messaging.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		p := f.Provider(nil)
		svc, _, store := newStoringService(t, f, p)
		org := f.Org()
		acc := f.AccountAt(p, org.ID)
		c := f.Contact(org.ID, &acc.ID)
		wrote(t, f, c, time.Hour)
		return svc, &testBundle{f: f, p: p, store: store, org: org, agent: f.User(org, "Agent"), contact: c}
	}
	upload := func(svc *messaging.Service, b *testBundle, kind, name, mimeType string, data []byte) (*models.MediaUpload, error) {
		return svc.Upload(ctx, b.org.ID, messaging.UploadInput{Kind: kind, Filename: name, MimeType: mimeType,
			File: bytes.NewReader(data), Size: int64(len(data)), By: &b.agent.ID})
	}
	nothingStored := func(t *testing.T, b *testBundle) {
		t.Helper()
		if n := b.f.Count("media_uploads", ""); n != 0 {
			t.Errorf("%d uploads recorded after a refusal", n)
		}
	}

	t.Run("APDFIsKeptAndSentAsADocument", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		u, err := upload(svc, b, "", "../Quote 7.pdf", "application/pdf", []byte(samplePDF))
		if err != nil {
			t.Fatal(err)
		}
		if u.Kind != "document" || u.MimeType != "application/pdf" || u.Filename != "Quote 7.pdf" || u.Size != int64(len(samplePDF)) {
			t.Fatalf("upload %+v", u)
		}
		sent, err := svc.SendUploaded(ctx, b.org.ID, messaging.Actor{UserID: b.agent.ID},
			messaging.UploadedInput{ContactID: b.contact.ID, MediaID: u.ID, Kind: "document", Caption: "your quote"})
		if err != nil {
			t.Fatal(err)
		}
		msgs := b.p.Sim.Messages(platformsim.MessageFilter{})
		if len(msgs) != 1 || msgs[0].Type != "document" {
			t.Fatalf("provider got %+v, want one document", msgs)
		}
		var body struct {
			Document platform.Media `json:"document"`
		}
		_ = json.Unmarshal(msgs[0].Body, &body)
		if body.Document.ID == "" || body.Document.Link != "" || body.Document.Filename != "Quote 7.pdf" || body.Document.Caption != "your quote" {
			t.Fatalf("document %+v: want the provider's media id, the filename and the caption", body.Document)
		}
		// What the provider holds under that id is the file.
		cr := platform.Creds{AccessToken: testfactory.Token}
		info, err := b.p.Client.Media(ctx, cr, body.Document.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if _, err := b.p.Client.DownloadMedia(ctx, cr, info.URL, &got, 1<<20); err != nil || got.String() != samplePDF || info.MimeType != "application/pdf" {
			t.Errorf("provider holds %q (%s, %v), want the PDF", got.String(), info.MimeType, err)
		}
		// The message keeps the file for GET /api/messages/{id}/media.
		f, err := svc.OpenMedia(ctx, b.org.ID, sent.ID)
		if err != nil {
			t.Fatal(err)
		}
		served, _ := io.ReadAll(f.Body)
		f.Body.Close()
		if string(served) != samplePDF || f.Filename != "Quote 7.pdf" {
			t.Errorf("message media %q named %q", served, f.Filename)
		}
	})

	t.Run("OversizeIsTooLargeAndNothingIsStored", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		_, err := upload(svc, b, "image", "big.jpg", "image/jpeg", jpegBytes(5<<20+1))
		testfactory.WantError(t, err, apperr.TooLarge, "the provider takes image files of at most 5.0 MB")
		// A static sticker over 100 KB (animated ones may have 500 KB).
		webp := append([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), make([]byte, 100<<10)...)
		_, err = upload(svc, b, "sticker", "s.webp", "image/webp", webp)
		testfactory.WantError(t, err, apperr.TooLarge, "at most 100 KB")
		nothingStored(t, b)
	})

	t.Run("WrongTypesAreRefusedAndNothingIsStored", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		_, err := upload(svc, b, "image", "a.gif", "image/gif", []byte("GIF89a......"))
		testfactory.WantError(t, err, apperr.Invalid, "image/gif is not accepted for image messages")
		_, err = upload(svc, b, "document", "a.pdf", "application/pdf", []byte("<html><script>x</script></html>"))
		testfactory.WantError(t, err, apperr.Invalid, "declared application/pdf but its content is text/html")
		_, err = upload(svc, b, "", "page.html", "text/html", []byte("<html></html>"))
		testfactory.WantError(t, err, apperr.Invalid, "text/html is not accepted for document messages")
		_, err = upload(svc, b, "gif", "a.pdf", "application/pdf", []byte(samplePDF))
		testfactory.WantError(t, err, apperr.Invalid, "type must be image, video, audio, document or sticker")
		nothingStored(t, b)
	})

	t.Run("AnotherOrganizationsUploadIsNotFound", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		u, err := upload(svc, b, "", "a.pdf", "application/pdf", []byte(samplePDF))
		if err != nil {
			t.Fatal(err)
		}
		other := b.f.Org()
		acc := b.f.Account(other.ID)
		c := b.f.Contact(other.ID, &acc.ID)
		wrote(t, b.f, c, time.Hour)
		_, err = svc.SendUploaded(ctx, other.ID, messaging.Actor{}, messaging.UploadedInput{ContactID: c.ID, MediaID: u.ID})
		testfactory.WantError(t, err, apperr.NotFound, "media not found")
		_, err = svc.SendUploaded(ctx, b.org.ID, messaging.Actor{}, messaging.UploadedInput{ContactID: b.contact.ID, MediaID: uuid.New()})
		testfactory.WantError(t, err, apperr.NotFound, "media not found")
		_, err = svc.SendUploaded(ctx, b.org.ID, messaging.Actor{}, messaging.UploadedInput{ContactID: b.contact.ID, MediaID: u.ID, Kind: "image"})
		testfactory.WantError(t, err, apperr.Invalid, "was uploaded as document, not image")
		if n := b.p.Sim.CountRequests(platformsim.RequestFilter{Method: "POST"}); n != 0 {
			t.Errorf("%d requests reached the provider for refused sends", n)
		}
	})

	t.Run("OutsideTheWindowNothingIsUploaded", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		u, err := upload(svc, b, "", "a.pdf", "application/pdf", []byte(samplePDF))
		if err != nil {
			t.Fatal(err)
		}
		wrote(t, b.f, b.contact, 25*time.Hour)
		_, err = svc.SendUploaded(ctx, b.org.ID, messaging.Actor{}, messaging.UploadedInput{ContactID: b.contact.ID, MediaID: u.ID})
		testfactory.WantError(t, err, apperr.Invalid, "outside the customer-service window")
		if n := b.p.Sim.CountRequests(platformsim.RequestFilter{Path: "/media"}); n != 0 {
			t.Errorf("%d media uploads to the provider for a send outside the window", n)
		}
	})
}
