package messages_test

import (
	"context"
	"testing"

	"wharf/internal/integration/messages"
	"wharf/jobs"
)

// A template whose submission task was lost (the crash came between the
// document's commit and the enqueue) is submitted by the sweep once it is
// a minute old; a second sweep queues nothing more, and submitted or
// refused templates are left alone.
func TestSweepResubmitsLostTemplates(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	e.account(t, "Main", nil)
	insert := func(name string, extra map[string]any) string {
		data := map[string]any{"template_name": name, "template": "Hi {{1}}", "platform_account": "Main", "template_id": "1"}
		for k, v := range extra {
			data[k] = v
		}
		d, err := e.frame.InsertDoc(ctx, e.org.ID, "Administrator", messages.DoctypeTemplate, data)
		if err != nil {
			t.Fatal(err)
		}
		return d.Name
	}
	// Inserted as synced (no submission task), then made to look lost: no
	// template_id, no status, two minutes old.
	lost := insert("lost_one", nil)
	insert("submitted_one", map[string]any{"status": "PENDING"})
	refused := insert("refused_one", nil)
	e.f.DB.Exec(`UPDATE docframe_documents SET data = data - 'template_id', creation = now() - interval '2 minutes'
		WHERE organization_id = ? AND name IN (?, ?)`, e.org.ID, lost, refused)
	e.f.DB.Exec(`UPDATE docframe_documents SET data = data || '{"status": "REJECTED: INVALID_FORMAT"}'
		WHERE organization_id = ? AND name = ?`, e.org.ID, refused)
	fresh := insert("fresh_one", nil)
	e.f.DB.Exec(`UPDATE docframe_documents SET data = data - 'template_id' WHERE organization_id = ? AND name = ?`, e.org.ID, fresh)

	before := e.q.TaskTypes(t)[jobs.TypeWharfTemplateSubmit]
	if n, err := e.w.SweepUnsubmitted(ctx); err != nil || n != 1 {
		t.Fatalf("sweep: %d %v, want 1", n, err)
	}
	if n, err := e.w.SweepUnsubmitted(ctx); err != nil || n != 0 {
		t.Fatalf("second sweep: %d %v, want 0", n, err)
	}
	if got := e.q.TaskTypes(t)[jobs.TypeWharfTemplateSubmit] - before; got != 1 {
		t.Fatalf("%d submit tasks queued, want 1", got)
	}
}
