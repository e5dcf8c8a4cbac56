package messaging_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"wharf/internal/messaging"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/internal/webhooks"
	"wharf/jobs"
	"wharf/models"
)

// sendTasks answers the message:send tasks' payloads.
func sendTasks(t *testing.T, q *testenv.Queue) []jobs.MessageSend {
	t.Helper()
	var out []jobs.MessageSend
	for _, ti := range q.Tasks(t) {
		if ti.Type != jobs.TypeMessageSend {
			continue
		}
		var p jobs.MessageSend
		if err := json.Unmarshal(ti.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// groupEnv is an organization with an account, an approved template and an
// agent, and a messaging service whose tasks q holds.
type groupEnv struct {
	f    *testfactory.Factory
	org  *testfactory.Org
	acc  models.PlatformAccount
	tmpl models.Template
	user models.User
	svc  *messaging.Service
	q    *testenv.Queue
}

func newGroupEnv(t *testing.T) *groupEnv {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	org := f.Org()
	acc := f.AccountAt(p, org.ID)
	e := &groupEnv{f: f, org: org, acc: acc, tmpl: f.TemplateAt(p, acc, "Hi {{1}}"), user: f.User(org, "Agent")}
	e.svc, e.q = newService(t, f, p)
	return e
}

// queue queues a template send to number.
func (e *groupEnv) queue(t *testing.T, number string, key *uuid.UUID) (*messaging.Queued, error) {
	return e.svc.QueueTemplate(context.Background(), e.org.ID, messaging.Actor{UserID: e.user.ID, APIKeyID: key},
		messaging.TemplateInput{PhoneNumber: number, TemplateID: &e.tmpl.ID, Params: map[string]string{"1": "Ada"}})
}

// TestGroupCommit: template sends by number that arrive together are
// written in groups (one statement, one commit, one task per QueuedBatch
// of them), with the same rows, events and tasks as one by one.
func TestGroupCommit(t *testing.T) {
	t.Parallel()

	t.Run("SendsThatArriveTogetherShareAStatementAndTheirTasks", func(t *testing.T) {
		t.Parallel()
		e := newGroupEnv(t)
		f, org, svc, q, user := e.f, e.org, e.svc, e.q, e.user
		listen(t, f, org.ID, webhooks.EventContactCreated)
		existing := f.Contact(org.ID, &e.acc.ID)

		// 40 new numbers, four more sends to the first of them and four to a
		// contact that exists: 48 sends, 40 new contacts.
		var numbers []string
		for i := range 40 {
			numbers = append(numbers, fmt.Sprintf("+1555012%04d", i))
		}
		for range 4 {
			numbers = append(numbers, numbers[0], existing.PhoneNumber)
		}
		release := svc.HoldGroups()
		type result struct {
			number string
			q      *messaging.Queued
			err    error
		}
		results := make(chan result, len(numbers))
		for _, n := range numbers {
			go func() {
				out, err := e.queue(t, n, nil)
				results <- result{n, out, err}
			}()
		}
		deadline := time.Now().Add(10 * time.Second)
		for svc.Waiting() < len(numbers) && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := svc.Waiting(); got != len(numbers) {
			t.Fatalf("%d sends waiting, want %d", got, len(numbers))
		}
		release()
		byID := map[uuid.UUID]string{}
		for range numbers {
			r := <-results
			if r.err != nil {
				t.Fatalf("send to %s: %v", r.number, r.err)
			}
			if r.q.PhoneNumber != r.number || r.q.Status != models.StatusPending {
				t.Errorf("send to %s answered %+v", r.number, r.q)
			}
			byID[r.q.MessageID] = r.number
		}

		// Each message is stored once, pending, with its number's contact.
		var rows []struct {
			ID          uuid.UUID
			PhoneNumber string
			APIKeyID    *uuid.UUID
			SentBy      *uuid.UUID
			Type        string
			Status      string
			Direction   string
			Text        string
		}
		f.DB.Raw(`SELECT m.id, c.phone_number, m.api_key_id, m.sent_by, m.type, m.status, m.direction, m.content ->> 'text' AS text
			FROM messages m JOIN contacts c ON c.id = m.contact_id WHERE m.organization_id = ?`, org.ID).Scan(&rows)
		if len(rows) != len(numbers) {
			t.Fatalf("%d messages stored, want %d", len(rows), len(numbers))
		}
		for _, r := range rows {
			if byID[r.ID] != r.PhoneNumber || r.Type != "template" || r.Status != "pending" || r.Direction != "outgoing" ||
				r.SentBy == nil || *r.SentBy != user.ID || r.Text != "Hi Ada" {
				t.Errorf("message %+v, want to %s", r, byID[r.ID])
			}
		}
		if n := f.Count("contacts", "organization_id = ?", org.ID); n != 41 {
			t.Errorf("%d contacts, want 41 (40 new and the existing one)", n)
		}
		// One contact.created for each new contact, none for the existing one.
		var events []struct{ Data string }
		f.DB.Raw(`SELECT data::text AS data FROM events WHERE organization_id = ? AND event = ?`, org.ID, webhooks.EventContactCreated).Scan(&events)
		created := map[string]bool{}
		for _, e := range events {
			var d struct {
				ContactID   uuid.UUID `json:"contact_id"`
				PhoneNumber string    `json:"phone_number"`
				Source      string    `json:"source"`
			}
			if err := json.Unmarshal([]byte(e.Data), &d); err != nil {
				t.Fatal(err)
			}
			var c models.Contact
			if err := f.DB.Take(&c, "id = ? AND organization_id = ?", d.ContactID, org.ID).Error; err != nil || c.PhoneNumber != d.PhoneNumber || d.Source != "send" {
				t.Errorf("event %s: contact %+v (%v)", e.Data, c, err)
			}
			created[d.PhoneNumber] = true
		}
		if len(events) != 40 || len(created) != 40 || created[existing.PhoneNumber] {
			t.Errorf("%d contact.created events for %d numbers, want 40 for the 40 new ones", len(events), len(created))
		}
		// Every message is in exactly one task; the first group (the 40 new
		// numbers and the existing contact) takes three tasks of at most 16,
		// the four later groups (the repeated numbers) one each.
		tasks := sendTasks(t, q)
		seen := map[uuid.UUID]int{}
		for _, p := range tasks {
			if p.OrganizationID != org.ID || len(p.With) > messaging.QueuedBatch-1 {
				t.Errorf("task %+v", p)
			}
			seen[p.MessageID]++
			for _, id := range p.With {
				seen[id]++
			}
		}
		for id := range byID {
			if seen[id] != 1 {
				t.Errorf("message %s is in %d tasks, want 1", id, seen[id])
			}
		}
		if len(tasks) != 7 {
			t.Errorf("%d message:send tasks for %d sends, want 7", len(tasks), len(numbers))
		}
	})

	t.Run("ALoneSendIsWrittenAtOnce", func(t *testing.T) {
		t.Parallel()
		e := newGroupEnv(t)
		svc, q := e.svc, e.q
		out, err := e.queue(t, "+15550130001", nil)
		if err != nil {
			t.Fatal(err)
		}
		tasks := sendTasks(t, q)
		if len(tasks) != 1 || tasks[0].MessageID != out.MessageID || len(tasks[0].With) != 0 {
			t.Fatalf("tasks %+v, want one for %s", tasks, out.MessageID)
		}
		if svc.Waiting() != 0 {
			t.Fatal("a send is left waiting")
		}
	})

	t.Run("ABadSendFailsAloneAndTheRestOfItsGroupIsStored", func(t *testing.T) {
		t.Parallel()
		e := newGroupEnv(t)
		f, org, svc, q := e.f, e.org, e.svc, e.q
		gone := uuid.New() // an API key that does not exist: the message's foreign key refuses it
		release := svc.HoldGroups()
		errs := make(chan error, 3)
		for i, key := range []*uuid.UUID{nil, &gone, nil} {
			go func() {
				_, err := e.queue(t, fmt.Sprintf("+1555014%04d", i), key)
				errs <- err
			}()
		}
		for svc.Waiting() < 3 {
			time.Sleep(5 * time.Millisecond)
		}
		release()
		failed := 0
		for range 3 {
			if err := <-errs; err != nil {
				failed++
			}
		}
		if failed != 1 {
			t.Fatalf("%d sends failed, want 1", failed)
		}
		if n := f.Count("messages", "organization_id = ?", org.ID); n != 2 {
			t.Fatalf("%d messages stored, want 2", n)
		}
		if n := f.Count("contacts", "organization_id = ? AND phone_number = ?", org.ID, "+15550140001"); n != 0 {
			t.Errorf("the refused send left its contact behind")
		}
		covered := 0
		for _, p := range sendTasks(t, q) {
			covered += 1 + len(p.With)
		}
		if covered != 2 {
			t.Errorf("tasks cover %d messages, want 2", covered)
		}
	})

	t.Run("AGroupsTaskClaimsItsMessagesBeforeOlderOnes", func(t *testing.T) {
		t.Parallel()
		ctx, e := context.Background(), newGroupEnv(t)
		f, org, svc := e.f, e.org, e.svc
		queue := func(n string) uuid.UUID {
			out, err := e.queue(t, n, nil)
			if err != nil {
				t.Fatal(err)
			}
			return out.MessageID
		}
		// 20 older queued sends, then a group's three.
		for i := range 20 {
			queue(fmt.Sprintf("+1555015%04d", i))
		}
		time.Sleep(10 * time.Millisecond)
		own, a, b := queue("+15550169001"), queue("+15550169002"), queue("+15550169003")
		if err := svc.SendQueuedBatch(ctx, org.ID, own, []uuid.UUID{a, b, a, own}, false); err != nil {
			t.Fatal(err)
		}
		for _, id := range []uuid.UUID{own, a, b} {
			var m models.Message
			f.DB.Take(&m, "id = ?", id)
			if m.Status != models.StatusSent {
				t.Errorf("message %s of the task is %s, want sent", id, m.Status)
			}
		}
		// The batch is filled up to QueuedBatch with the oldest others.
		if n := f.Count("messages", "organization_id = ? AND status = 'sent'", org.ID); n != messaging.QueuedBatch {
			t.Errorf("%d messages sent by the task, want %d", n, messaging.QueuedBatch)
		}
	})
}

// TestGroupTasksTakingEachOthersMessagesDoNotWait: the tasks of many small
// groups run at once, each taking other groups' messages as mates; each
// returns without error (a claim that waited for a row while holding
// others could deadlock) and every message is sent once.
func TestGroupTasksTakingEachOthersMessagesDoNotWait(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newGroupEnv(t)
	f, org, svc := e.f, e.org, e.svc
	const groups, size = 16, 4
	var ids [groups][]uuid.UUID
	for g := range groups {
		for i := range size {
			out, err := e.queue(t, fmt.Sprintf("+1555017%02d%02d", g, i), nil)
			if err != nil {
				t.Fatal(err)
			}
			ids[g] = append(ids[g], out.MessageID)
		}
	}
	for round := range 3 {
		// Pending again, so that the round's tasks race for them.
		if err := f.DB.Exec(`UPDATE messages SET status = 'pending', send_started_at = NULL, platform_message_id = NULL, sent_at = NULL
			WHERE organization_id = ?`, org.ID).Error; err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, groups)
		start := make(chan struct{})
		for g := range groups {
			go func() {
				<-start
				errs <- svc.SendQueuedBatch(ctx, org.ID, ids[g][0], ids[g][1:], false)
			}()
		}
		close(start)
		for range groups {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if n := f.Count("messages", "organization_id = ? AND status = 'sent'", org.ID); n != groups*size {
			t.Fatalf("round %d: %d messages sent, want %d", round, n, groups*size)
		}
	}
}

// TestAClaimDoesNotWaitForARowAnotherClaimHolds: while another transaction
// holds one of a group task's messages (another claim taking it as a
// mate), the task claims and sends the others at once and leaves that one
// to its holder; waiting for it while holding the others is how two
// claims deadlocked.
func TestAClaimDoesNotWaitForARowAnotherClaimHolds(t *testing.T) {
	t.Parallel()
	ctx, e := context.Background(), newGroupEnv(t)
	f, org, svc := e.f, e.org, e.svc
	var ids []uuid.UUID
	for i := range 3 {
		out, err := e.queue(t, fmt.Sprintf("+15550180%03d", i), nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, out.MessageID)
	}
	holder := f.DB.Begin()
	defer holder.Rollback()
	if err := holder.Exec(`SELECT id FROM messages WHERE id = ? FOR UPDATE`, ids[2]).Error; err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.SendQueuedBatch(ctx, org.ID, ids[0], ids[1:], false) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		holder.Rollback()
		t.Fatal("the claim waited for the row another transaction holds")
	}
	status := func(id uuid.UUID) models.MessageStatus {
		var m models.Message
		f.DB.Take(&m, "id = ?", id)
		return m.Status
	}
	if status(ids[0]) != models.StatusSent || status(ids[1]) != models.StatusSent || status(ids[2]) != models.StatusPending {
		t.Fatalf("statuses %s %s %s, want sent sent pending", status(ids[0]), status(ids[1]), status(ids[2]))
	}
	holder.Rollback()
	if err := svc.SendQueuedBatch(ctx, org.ID, ids[2], nil, false); err != nil {
		t.Fatal(err)
	}
	if status(ids[2]) != models.StatusSent {
		t.Fatalf("the held message is %s once released, want sent", status(ids[2]))
	}
}
