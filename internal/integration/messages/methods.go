package messages

import (
	"context"
	"time"

	"github.com/google/uuid"

	"wharf/internal/integration/docframe"
	"wharf/models"
)

// Methods are the integration's whitelisted methods (/api/method/wharf.api.*).
func (s *Service) Methods() []docframe.Method {
	return []docframe.Method{
		{Name: "wharf.api.send_message", Verbs: []string{"POST"}, Call: s.sendMessage},
		{Name: "wharf.api.get_message_status", Call: s.getMessageStatus},
		{Name: "wharf.api.sync_templates", Verbs: []string{"POST"}, Call: s.syncTemplates},
	}
}

// sendMessage creates an Outgoing Platform Message as the caller (who
// needs create on Platform Message) and waits up to SendWait for the send
// job: the answer's status is sent once the provider accepted it, failed
// when it refused it, else Queued with an empty message_id (the document
// follows the statuses later). The answer tells what became of the send,
// not how far the statuses went: a delivered or read applied before the
// wait ended is on the document, and the answer still says sent.
func (s *Service) sendMessage(ctx context.Context, c *docframe.Call) (any, error) {
	if err := s.Ensure(ctx, c.OrganizationID); err != nil {
		return nil, err
	}
	in := map[string]any{"type": "Outgoing"}
	for _, k := range []string{"to", "message", "template", "flow", "flow_cta", "platform_account", "reference_doctype",
		"reference_name"} {
		if v := c.String(k); v != "" {
			in[k] = v
		}
	}
	if v, ok := c.Args["parameters"]; ok && v != nil {
		in["template_parameters"] = v
	}
	if v, ok := c.Args["buttons"]; ok && v != nil {
		in["buttons"] = v
	}
	if in["to"] == nil {
		return nil, docframe.Validationf("to is required")
	}
	doc, err := c.Frame.Insert(ctx, c.Actor, c.OrganizationID, DoctypeMessage, in)
	if err != nil {
		return nil, err
	}
	name := str(doc["name"])
	coreID, _ := uuid.Parse(str(doc["core_message_id"]))
	msgID, status := s.await(ctx, c.OrganizationID, name, coreID)
	return map[string]any{"message_id": msgID, "name": name, "status": status}, nil
}

// await waits for the send job's outcome and projects it on the document
// (forward only, so a status webhook already applied is kept).
func (s *Service) await(ctx context.Context, orgID uuid.UUID, name string, coreID uuid.UUID) (string, string) {
	deadline := time.Now().Add(s.SendWait)
	for delay := 20 * time.Millisecond; ; delay = min(delay*2, 200*time.Millisecond) {
		m, err := s.Messaging.Get(ctx, orgID, coreID)
		if err != nil {
			return "", StatusQueued
		}
		if m.Status != models.StatusPending {
			// The projector does the same once the send's event is
			// dispatched; doing it now answers what the document holds.
			id, status, err := s.projectMessage(ctx, orgID, coreID)
			if err != nil {
				s.Log.Warn("send_message: cannot record the send's outcome", "name", name, "error", err)
				return "", StatusQueued
			}
			if status != StatusFailed && status != StatusQueued && status != "" {
				status = StatusSent
			}
			return id, status
		}
		if time.Now().Add(delay).After(deadline) {
			return "", StatusQueued
		}
		select {
		case <-ctx.Done():
			return "", StatusQueued
		case <-time.After(delay):
		}
	}
}

// getMessageStatus answers a Platform Message's stored status by the
// provider's message id (the caller needs read on Platform Message).
func (s *Service) getMessageStatus(ctx context.Context, c *docframe.Call) (any, error) {
	id := c.String("message_id")
	if id == "" {
		return nil, docframe.Validationf("message_id is required")
	}
	// The right first: whether an id exists is the messages' data too.
	if err := c.Frame.Require(ctx, c.Actor, c.OrganizationID, DoctypeMessage, docframe.PermRead); err != nil {
		return nil, err
	}
	names, err := s.frame.NamesBy(ctx, nil, c.OrganizationID, DoctypeMessage, "message_id", []string{id})
	if err != nil {
		return nil, err
	}
	if names[id] == "" {
		return nil, notFound(id)
	}
	doc, err := c.Frame.Get(ctx, c.Actor, c.OrganizationID, DoctypeMessage, names[id])
	if err != nil {
		return nil, err
	}
	return map[string]any{"message_id": id, "status": doc["status"]}, nil
}
