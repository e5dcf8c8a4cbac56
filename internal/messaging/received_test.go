package messaging_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/hibiken/asynq"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/inbound"
	"wharf/internal/infra/apperr"
	"wharf/internal/infra/storage"
	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/jobs"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// jpegBytes is the start of a JPEG file (what sniffers look at) padded to
// n bytes.
func jpegBytes(n int) []byte {
	b := append([]byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10, 'J', 'F', 'I', 'F', 0}, make([]byte, max(0, n-11))...)
	return b[:n]
}

// Received media is fetched from the provider once, checked, kept in the
// store, and served; what cannot be kept is marked unavailable.
func TestReceivedMedia(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f       *testfactory.Factory
		p       *testfactory.Provider
		q       *testenv.Queue
		store   storage.Store
		account models.PlatformAccount
		contact models.Contact
	}
	setup := func(t *testing.T) (*messaging.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		p := f.Provider(nil)
		svc, q, store := newStoringService(t, f, p)
		org := f.Org()
		acc := f.AccountAt(p, org.ID)
		return svc, &testBundle{f: f, p: p, q: q, store: store, account: acc, contact: f.Contact(org.ID, &acc.ID)}
	}
	// receive puts data at the provider as media of the account and stores
	// an incoming message of type typ naming it with the declared type.
	// Parallel subtests share it.
	var seq atomic.Int64
	receive := func(t *testing.T, svc *messaging.Service, b *testBundle, typ, declared string, data []byte) (models.Message, string) {
		t.Helper()
		cr := platform.Creds{AccessToken: testfactory.Token, PhoneNumberID: b.account.PhoneNumberID}
		mediaID, err := b.p.Client.UploadMedia(ctx, cr, "f", declared, bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		raw := fmt.Sprintf(`{"from":"15550001111","id":"wamid.media%d-%s","timestamp":"1700000000","type":%q,%q:{"id":%q,"mime_type":%q,"sha256":"x","filename":"../../etc/report\"x.pdf"}}`,
			seq.Add(1), uuid.NewString(), typ, typ, mediaID, declared)
		var in platform.IncomingMessage
		if err := json.Unmarshal([]byte(raw), &in); err != nil {
			t.Fatal(err)
		}
		var res inbound.MessageResult
		if err := b.f.DB.Transaction(func(tx *gorm.DB) error {
			res, err = svc.ConsumeMessage(ctx, tx, &inbound.Incoming{Account: &accounts.Account{PlatformAccount: b.account},
				Contact: &b.contact, Message: in})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		res.AfterCommit(ctx)
		return reload(t, b.f.DB, res.Stored), mediaID
	}
	status := func(m models.Message) string {
		if m.MediaStatus == nil {
			return "<nil>"
		}
		return *m.MediaStatus
	}
	storedKeys := func(t *testing.T, b *testBundle, m models.Message) bool {
		t.Helper()
		for _, ext := range []string{".jpg", ".pdf", ".bin", ".png"} {
			ok, err := b.store.Exists(ctx, "media/"+m.OrganizationID.String()+"/"+m.ID.String()+ext)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				return true
			}
		}
		return false
	}

	t.Run("AnImageIsFetchedOnceStoredAndServed", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		data := jpegBytes(2048)
		m, mediaID := receive(t, svc, b, "image", "image/jpeg", data)
		if status(m) != models.MediaPending {
			t.Fatalf("media status %s after receipt, want pending", status(m))
		}
		if n := b.q.TaskTypes(t)[jobs.TypeMediaFetch]; n != 1 {
			t.Fatalf("%d media:fetch tasks enqueued, want 1", n)
		}
		for range 2 { // the second run (a duplicate task) changes nothing
			if err := svc.FetchMedia(ctx, m.OrganizationID, m.ID, false); err != nil {
				t.Fatal(err)
			}
		}
		if n := b.p.Sim.CountRequests(platformsim.RequestFilter{Method: "GET", Path: "/" + mediaID}); n != 1 {
			t.Errorf("the provider was asked for the media %d times, want once", n)
		}
		got := reload(t, b.f.DB, m.ID)
		if status(got) != models.MediaStored || got.MediaMimeType != "image/jpeg" || got.MediaSize != int64(len(data)) {
			t.Errorf("stored %s %s %d %q, want stored image/jpeg %d", status(got), got.MediaMimeType, got.MediaSize, got.MediaFilename, len(data))
		}
		f, err := svc.OpenMedia(ctx, m.OrganizationID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		served, _ := io.ReadAll(f.Body)
		f.Body.Close()
		if !bytes.Equal(served, data) || f.MimeType != "image/jpeg" {
			t.Errorf("served %d bytes of %s, want the %d bytes received", len(served), f.MimeType, len(data))
		}
		// Another organization does not see it.
		_, err = svc.OpenMedia(ctx, b.f.Org().ID, m.ID)
		testfactory.WantError(t, err, apperr.NotFound, "message not found")
	})

	t.Run("ADocumentKeepsASafeFilename", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		m, _ := receive(t, svc, b, "document", "application/pdf", []byte("%PDF-1.4\n%%EOF\n"))
		if err := svc.FetchMedia(ctx, m.OrganizationID, m.ID, false); err != nil {
			t.Fatal(err)
		}
		if got := reload(t, b.f.DB, m.ID); status(got) != models.MediaStored || got.MediaFilename != "reportx.pdf" {
			t.Errorf("stored %s with filename %q, want stored with reportx.pdf", status(got), got.MediaFilename)
		}
	})

	t.Run("OverTheProviderLimitIsUnavailableAndNotStored", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		m, _ := receive(t, svc, b, "image", "image/jpeg", jpegBytes(5<<20+1))
		err := svc.FetchMedia(ctx, m.OrganizationID, m.ID, false)
		if !errors.Is(err, asynq.SkipRetry) {
			t.Errorf("error %v, want one that skips the retries", err)
		}
		got := reload(t, b.f.DB, m.ID)
		if status(got) != models.MediaUnavailable || !strings.Contains(got.MediaError, "limit") || storedKeys(t, b, m) {
			t.Errorf("media %s (%q), stored %v: want unavailable over the limit and nothing stored", status(got), got.MediaError, storedKeys(t, b, m))
		}
		_, err = svc.OpenMedia(ctx, m.OrganizationID, m.ID)
		testfactory.WantError(t, err, apperr.NotFound, "this message's media is unavailable")
	})

	t.Run("ContentNotOfTheDeclaredTypeIsRefused", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		m, _ := receive(t, svc, b, "image", "image/jpeg", []byte("<html><script>alert(1)</script></html>"))
		if err := svc.FetchMedia(ctx, m.OrganizationID, m.ID, false); !errors.Is(err, asynq.SkipRetry) {
			t.Errorf("error %v, want one that skips the retries", err)
		}
		got := reload(t, b.f.DB, m.ID)
		if status(got) != models.MediaUnavailable || !strings.Contains(got.MediaError, "declared image/jpeg but the file is text/html") || storedKeys(t, b, m) {
			t.Errorf("media %s (%q): want unavailable for its type and nothing stored", status(got), got.MediaError)
		}
	})

	t.Run("ProviderTroubleIsRetriedThenUnavailable", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		m, mediaID := receive(t, svc, b, "image", "image/jpeg", jpegBytes(100))
		if err := b.p.Sim.InjectFault(platformsim.Fault{Method: "GET", Path: "/" + mediaID, Code: 131000}); err != nil {
			t.Fatal(err)
		}
		err := svc.FetchMedia(ctx, m.OrganizationID, m.ID, false)
		if err == nil || errors.Is(err, asynq.SkipRetry) {
			t.Fatalf("error %v, want one to retry", err)
		}
		if got := reload(t, b.f.DB, m.ID); status(got) != models.MediaPending {
			t.Fatalf("media %s after a failed attempt, want still pending", status(got))
		}
		if err := svc.FetchMedia(ctx, m.OrganizationID, m.ID, true); err == nil {
			t.Error("the last attempt succeeded against a failing provider")
		}
		if got := reload(t, b.f.DB, m.ID); status(got) != models.MediaUnavailable {
			t.Errorf("media %s after the last attempt, want unavailable", status(got))
		}
	})

	t.Run("TextHasNoMedia", func(t *testing.T) {
		t.Parallel()
		svc, b := setup(t)
		org := b.account.OrganizationID
		m := outgoing(t, b.f, b.contact, "wamid.x", models.StatusSent)
		if got := reload(t, b.f.DB, m.ID); got.MediaStatus != nil {
			t.Errorf("a text message has media status %s", status(got))
		}
		_, err := svc.OpenMedia(ctx, org, m.ID)
		testfactory.WantError(t, err, apperr.NotFound, "this message has no media")
	})
}

func TestSniffMatches(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		declared, sniffed string
		want              bool
	}{
		{"image/jpeg", "image/jpeg", true},
		{"image/jpeg", "image/png", false},
		{"image/png", "text/html; charset=utf-8", false},
		{"application/pdf", "application/pdf", true},
		{"audio/ogg; codecs=opus", "application/ogg", true},
		{"video/mp4", "video/mp4", true},
		{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", "application/zip", true},
		{"application/msword", "application/octet-stream", true},
		{"application/msword", "text/html; charset=utf-8", false},
		{"audio/aac", "application/octet-stream", true},
		{"text/plain", "text/plain; charset=utf-8", true},
		{"application/vnd.ms-excel", "text/plain; charset=utf-8", false},
	} {
		if got := messaging.SniffMatches(c.declared, c.sniffed); got != c.want {
			t.Errorf("SniffMatches(%q, %q) = %v, want %v", c.declared, c.sniffed, got, c.want)
		}
	}
}

func TestSafeFilename(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"report.pdf":             "report.pdf",
		"../../etc/passwd":       "passwd",
		`C:\Users\a\evil".pdf`:   "evil.pdf",
		"a\r\nSet-Cookie: x.pdf": "aSet-Cookie: x.pdf",
		"..":                     "",
		"résumé; name=x.pdf":     "résumé name=x.pdf",
		strings.Repeat("é", 150): strings.Repeat("é", 100),
	} {
		if got := messaging.SafeFilename(in); got != want {
			t.Errorf("SafeFilename(%q) = %q, want %q", in, got, want)
		}
	}
}

// Fetches whose task was lost are enqueued again by the sweep, once.
func TestSweepMedia(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	svc, q, _ := newStoringService(t, f, f.Provider(nil))
	org := f.Org()
	acc := f.Account(org.ID)
	c := f.Contact(org.ID, &acc.ID)
	store := func(age time.Duration, status string) models.Message {
		m := models.Message{ID: uuid.New(), OrganizationID: org.ID, ContactID: c.ID, AccountID: &acc.ID, Direction: models.DirectionIncoming,
			Type: "image", Status: models.StatusDelivered, OccurredAt: time.Now(), MediaStatus: &status}
		m.Content.V = map[string]any{"id": "1", "mime_type": "image/jpeg"}
		if err := f.DB.Create(&m).Error; err != nil {
			t.Fatal(err)
		}
		f.DB.Exec("UPDATE messages SET created_at = now() - ?::interval WHERE id = ?", age.String(), m.ID)
		return m
	}
	lost := store(11*time.Minute, models.MediaPending)
	store(time.Minute, models.MediaPending)        // its task may still come
	store(11*time.Minute, models.MediaStored)      // done
	store(11*time.Minute, models.MediaUnavailable) // given up
	store(49*time.Hour, models.MediaPending)       // too old for the provider to still have it
	n, err := svc.SweepMedia(ctx)
	if err != nil || n != 1 {
		t.Fatalf("swept %d (%v), want 1", n, err)
	}
	tasks := q.Tasks(t)
	if len(tasks) != 1 || tasks[0].Type != jobs.TypeMediaFetch || !strings.Contains(string(tasks[0].Payload), lost.ID.String()) {
		t.Fatalf("tasks %+v, want the lost fetch", tasks)
	}
	if n, err := svc.SweepMedia(ctx); err != nil || n != 0 {
		t.Errorf("second sweep enqueued %d (%v), want 0 while the task exists", n, err)
	}
}

// A sticker (WebP) is kept like an image, under its own limit.
func TestReceivedSticker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	svc, _, store := newStoringService(t, f, p)
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	c := f.Contact(org.ID, &acc.ID)
	cr := platform.Creds{AccessToken: testfactory.Token, PhoneNumberID: acc.PhoneNumberID}
	receive := func(data []byte) models.Message {
		mediaID, err := p.Client.UploadMedia(ctx, cr, "s.webp", "image/webp", bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		var in platform.IncomingMessage
		raw := fmt.Sprintf(`{"from":"15550001111","id":"wamid.%s","timestamp":"1700000000","type":"sticker","sticker":{"id":%q,"mime_type":"image/webp","animated":false}}`,
			uuid.NewString(), mediaID)
		if err := json.Unmarshal([]byte(raw), &in); err != nil {
			t.Fatal(err)
		}
		var res inbound.MessageResult
		if err := f.DB.Transaction(func(tx *gorm.DB) error {
			res, err = svc.ConsumeMessage(ctx, tx, &inbound.Incoming{Account: &accounts.Account{PlatformAccount: acc}, Contact: &c, Message: in})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if err := svc.FetchMedia(ctx, org.ID, res.Stored, false); err != nil && !errors.Is(err, asynq.SkipRetry) {
			t.Fatal(err)
		}
		return reload(t, f.DB, res.Stored)
	}
	webp := func(n int) []byte {
		return append([]byte("RIFF\x00\x00\x00\x00WEBPVP8 "), make([]byte, n-16)...)
	}
	small := receive(webp(2000))
	if small.MediaStatus == nil || *small.MediaStatus != models.MediaStored || small.MediaMimeType != "image/webp" {
		t.Errorf("sticker media %v %s, want stored image/webp", small.MediaStatus, small.MediaMimeType)
	}
	if ok, _ := store.Exists(ctx, small.MediaKey); !ok {
		t.Errorf("no file at %s", small.MediaKey)
	}
	big := receive(webp(500<<10 + 1))
	if big.MediaStatus == nil || *big.MediaStatus != models.MediaUnavailable {
		t.Errorf("a sticker over 500 KB: media %v, want unavailable", big.MediaStatus)
	}
}
