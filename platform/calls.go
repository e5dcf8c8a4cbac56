package platform

import (
	"context"
	"net/url"
)

// CallSession carries an SDP offer or answer.
type CallSession struct {
	SDPType string `json:"sdp_type"` // offer or answer
	SDP     string `json:"sdp"`
}

type callRequest struct {
	MessagingProduct string       `json:"messaging_product"`
	To               string       `json:"to,omitempty"`
	CallID           string       `json:"call_id,omitempty"`
	Action           string       `json:"action"`
	Session          *CallSession `json:"session,omitempty"`
}

// Connect places a business-initiated call with our SDP offer.
func (c *Client) Connect(ctx context.Context, cr Creds, to string, offer CallSession) (string, error) {
	var out struct {
		Calls []struct {
			ID string `json:"id"`
		} `json:"calls"`
	}
	in := callRequest{MessagingProduct: "whatsapp", To: to, Action: "connect", Session: &offer}
	if err := c.postJSON(ctx, cr.AccessToken, cr.PhoneNumberID+"/calls", in, &out); err != nil {
		return "", err
	}
	if len(out.Calls) == 0 {
		return "", &Error{Message: "the provider returned no call id", Class: Transient}
	}
	return out.Calls[0].ID, nil
}

// CallAction sends pre_accept or accept (with our SDP answer), reject or
// terminate for a call.
func (c *Client) CallAction(ctx context.Context, cr Creds, callID, action string, answer *CallSession) error {
	var out successResp
	in := callRequest{MessagingProduct: "whatsapp", CallID: callID, Action: action, Session: answer}
	return c.postJSON(ctx, cr.AccessToken, cr.PhoneNumberID+"/calls", in, &out)
}

// CallPermission is a user's permission for business-initiated calls.
type CallPermission struct {
	Permission struct {
		Status         string `json:"status"`
		ExpirationTime int64  `json:"expiration_time"`
	} `json:"permission"`
	Actions []struct {
		ActionName       string `json:"action_name"`
		CanPerformAction bool   `json:"can_perform_action"`
	} `json:"actions"`
}

// CallPermissions reads a user's call permission.
func (c *Client) CallPermissions(ctx context.Context, cr Creds, userWaID string) (*CallPermission, error) {
	var out CallPermission
	return &out, c.getJSON(ctx, cr.AccessToken, cr.PhoneNumberID+"/call_permissions", url.Values{"user_wa_id": {userWaID}}, &out)
}
