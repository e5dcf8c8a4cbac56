package messaging_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/accounts"
	"wharf/internal/inbound"
	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platform"
)

// Incoming messages are stored once, with their content, and announced.
func TestIncoming(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f       *testfactory.Factory
		account models.PlatformAccount
		contact models.Contact
	}
	setup := func(t *testing.T) (*messaging.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		svc, _ := newService(t, f, f.Provider(nil))
		org := f.Org()
		acc := f.Account(org.ID)
		return svc, &testBundle{f: f, account: acc, contact: f.Contact(org.ID, &acc.ID)}
	}
	consume := func(t *testing.T, svc *messaging.Service, bundle *testBundle, raw string) inbound.MessageResult {
		t.Helper()
		var m platform.IncomingMessage
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatal(err)
		}
		var res inbound.MessageResult
		err := bundle.f.DB.Transaction(func(tx *gorm.DB) error {
			var err error
			res, err = svc.ConsumeMessage(ctx, tx, &inbound.Incoming{Account: &accounts.Account{PlatformAccount: bundle.account},
				Contact: &bundle.contact, Message: m})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	t.Run("AMessageIsStoredOnceAndAnnounced", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		listen(t, bundle.f, bundle.account.OrganizationID, "message.incoming")
		raw := `{"from":"15550001111","id":"wamid.in1","timestamp":"1700000000","type":"text","text":{"body":"hello"}}`
		first := consume(t, svc, bundle, raw)
		if first.Stored == uuid.Nil || first.Seen || first.AfterCommit == nil {
			t.Fatalf("first delivery %+v: want it stored, with its event to publish", first)
		}
		again := consume(t, svc, bundle, raw)
		if again.Stored != uuid.Nil || !again.Seen {
			t.Errorf("redelivery %+v: want it seen, not stored", again)
		}
		m := reload(t, bundle.f.DB, first.Stored)
		if m.Direction != models.DirectionIncoming || m.Status != models.StatusDelivered || m.Content.V["text"] != "hello" ||
			m.OccurredAt.Unix() != 1700000000 || bundle.f.Count("messages", "") != 1 || bundle.f.Count("events", "event = 'message.incoming'") != 1 {
			t.Errorf("stored %+v: want one incoming message and one event", m)
		}
		var c models.Contact
		bundle.f.DB.Take(&c, "id = ?", bundle.contact.ID)
		if c.LastInboundAt == nil || c.LastInboundAt.Unix() != 1700000000 || c.LastMessageAt == nil {
			t.Errorf("contact %+v: want its activity times set", c)
		}
		// The same provider id on another account is another message.
		other := bundle.f.Account(bundle.account.OrganizationID)
		bundle.account = other
		if res := consume(t, svc, bundle, raw); res.Stored == uuid.Nil {
			t.Error("the same provider id from another account was taken for a redelivery")
		}
	})

	t.Run("EveryTypeIsKeptWithItsContent", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		for i, c := range []struct{ raw, typ, content string }{
			{`"type":"button","button":{"payload":"STOP","text":"Stop"}`, "interactive", `{"id":"STOP","title":"Stop","type":"button_reply"}`},
			{`"type":"interactive","interactive":{"type":"list_reply","list_reply":{"id":"r1","title":"Red","description":"d"}}`, "interactive",
				`{"description":"d","id":"r1","title":"Red","type":"list_reply"}`},
			{`"type":"location","location":{"latitude":1.5,"longitude":2}`, "location", `{"latitude":1.5,"longitude":2}`},
			{`"type":"text","text":{"body":"re"},"context":{"id":"wamid.prev","from":"15550009999"}`, "text",
				`{"context":{"from":"+15550009999","message_id":"wamid.prev"},"text":"re"}`},
			{`"type":"","unknown":{"x":1}`, "unsupported", `{}`},
		} {
			res := consume(t, svc, bundle, fmt.Sprintf(`{"from":"15550001111","id":"wamid.t%d","timestamp":"1700000000",%s}`, i, c.raw))
			m := reload(t, bundle.f.DB, res.Stored)
			content, _ := json.Marshal(m.Content.V)
			if m.Type != c.typ || string(content) != c.content {
				t.Errorf("%s: stored as %s %s, want %s %s", c.raw, m.Type, content, c.typ, c.content)
			}
		}
	})
}
