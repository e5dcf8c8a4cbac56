package messaging

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/platform"
)

// CallPermissionRequest is the interactive type (and action name) of the
// message that asks a user for permission to call them.
const CallPermissionRequest = "call_permission_request"

// SendCallPermissionRequest sends the contact one interactive
// call_permission_request message with body from the given account (the
// calling domain's Messages). It takes the path of every free-form send:
// the contact must have written within the service window, the message is
// stored before the provider is called and announced once accepted. It
// answers the message's id. The send is the system's on the caller's
// behalf: sent_by stays empty.
func (s *Service) SendCallPermissionRequest(ctx context.Context, orgID, contactID, accountID uuid.UUID, body string) (uuid.UUID, error) {
	body = strings.TrimSpace(body)
	if body == "" || len([]rune(body)) > 1024 {
		return uuid.Nil, apperr.Invalidf("the permission request's text is required (at most 1024 characters)")
	}
	c, err := s.windowContact(ctx, orgID, contactID)
	if err != nil {
		return uuid.Nil, err
	}
	a, err := s.accounts.Get(ctx, orgID, accountID)
	if err != nil {
		return uuid.Nil, err
	}
	sent, err := s.sendFrom(ctx, orgID, Actor{}, c, a, prepared{typ: "interactive",
		content: map[string]any{"type": CallPermissionRequest, "body": body},
		build: func(to string) platform.Message {
			m := platform.NewMessage(to, "interactive")
			m.Interactive = &platform.Interactive{Type: CallPermissionRequest, Body: &platform.InteractiveText{Text: body},
				Action: platform.InteractiveAction{Name: CallPermissionRequest}}
			return m
		}})
	if err != nil {
		return uuid.Nil, err
	}
	return sent.ID, nil
}
