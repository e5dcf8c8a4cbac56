package platformsim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"wharf/platformsim/rtcpeer"
)

type call struct {
	id        string
	phone     *phone
	user      string
	direction string // BUSINESS_INITIATED or USER_INITIATED
	state     string // connecting, pre_accepted, accepted
	startedAt time.Time
	// tag marks the audio the simulated phone sends on this call.
	tag string
	// peer is the phone's media; nil for a signalling-only call, and for a
	// business-initiated call until the phone answers.
	peer *rtcpeer.Peer
}

// Call permission statuses.
const (
	PermissionNone      = "no_permission"
	PermissionTemporary = "temporary"
	PermissionPermanent = "permanent"
)

// temporaryPermission is how long a temporary call permission lasts on the
// provider.
const temporaryPermission = 7 * 24 * time.Hour

type callPermission struct {
	status  string
	expires time.Time
}

func permKey(phoneID, user string) string { return phoneID + "|" + user }

// SetCallPermission sets what a user has granted a business phone number:
// temporary (seven days from now), permanent or no_permission.
func (s *Simulator) SetCallPermission(phoneNumberID, userWaID, status string) error {
	switch status {
	case PermissionNone, PermissionTemporary, PermissionPermanent:
	default:
		return fmt.Errorf("platformsim: status must be temporary, permanent or no_permission, got %q", status)
	}
	if userWaID == "" {
		return fmt.Errorf("platformsim: user_wa_id is required")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[phoneNumberID].(*phone); !ok {
		return fmt.Errorf("platformsim: %w: phone number %s", ErrNotFound, phoneNumberID)
	}
	p := callPermission{status: status}
	if status == PermissionTemporary {
		p.expires = time.Now().Add(temporaryPermission)
	}
	s.callPerms[permKey(phoneNumberID, userWaID)] = p
	return nil
}

func (s *Simulator) permissionLocked(phoneID, user string, now time.Time) callPermission {
	p, ok := s.callPerms[permKey(phoneID, user)]
	if !ok || p.status == PermissionTemporary && now.After(p.expires) {
		return callPermission{status: PermissionNone}
	}
	return p
}

type callRequest struct {
	MessagingProduct string `json:"messaging_product"`
	To               string `json:"to"`
	CallID           string `json:"call_id"`
	Action           string `json:"action"`
	Session          *struct {
		SDPType string `json:"sdp_type"`
		SDP     string `json:"sdp"`
	} `json:"session"`
}

// handleCalls serves POST /{version}/{phone_number_id}/calls.
func (s *Simulator) handleCalls(w http.ResponseWriter, r *http.Request) {
	body := requestBody(r)
	var in callRequest
	parseErr := decodeBody(body, &in)
	now := time.Now()
	s.mu.Lock()
	ph, aerr := objectAs[*phone](s, r, r.PathValue("id"), "calls")
	if aerr == nil && parseErr != nil {
		aerr = parseErr
	}
	var out any
	var after func()
	if aerr == nil {
		out, after, aerr = s.callActionLocked(ph, &in, now)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, out)
	// Media work (closing a peer, ringing a phone) runs without the lock,
	// and after the answer has left: the provider answers a connect before
	// it reports RINGING.
	if after != nil {
		_ = http.NewResponseController(w).Flush()
		after()
	}
}

// callActionLocked applies a business's call action. after, when not nil,
// is the media side of the action, to run once the lock is released.
func (s *Simulator) callActionLocked(ph *phone, in *callRequest, now time.Time) (out any, after func(), aerr *apiError) {
	ok := map[string]any{"messaging_product": "whatsapp", "success": true}
	if in.MessagingProduct != "whatsapp" {
		return nil, nil, errInvalid("messaging_product must be \"whatsapp\"")
	}
	needSession := func(sdpType string) *apiError {
		if in.Session == nil || in.Session.SDPType != sdpType || in.Session.SDP == "" {
			return errParamValue("session with sdp_type %q and an sdp is required", sdpType)
		}
		return nil
	}
	if in.Action == "connect" {
		if in.To == "" {
			return nil, nil, errMissing("to")
		}
		if !isDigits(in.To) {
			return nil, nil, errParamValue("to must be digits")
		}
		if aerr := needSession("offer"); aerr != nil {
			return nil, nil, aerr
		}
		if s.permissionLocked(ph.id, in.To, now).status == PermissionNone {
			return nil, nil, newError(http.StatusBadRequest, 138006, "No approved call permission from the recipient",
				"the user has not granted this business phone number permission to call")
		}
		c := &call{id: newCallID(), phone: ph, user: in.To, direction: "BUSINESS_INITIATED", state: "connecting", startedAt: now}
		c.tag = CallTag(c.id)
		s.calls[c.id] = c
		s.callActions[c.id] = append(s.callActions[c.id], in.Action)
		b := s.callBehaviourLocked(in.To)
		offer := in.Session.SDP
		ring := func() { go s.ringPhone(c, offer, b) }
		return map[string]any{"messaging_product": "whatsapp", "calls": []map[string]string{{"id": c.id}}}, ring, nil
	}
	if in.CallID == "" {
		return nil, nil, errMissing("call_id")
	}
	c, found := s.calls[in.CallID]
	if !found || c.phone != ph {
		return nil, nil, errInvalid("call_id %s is not an ongoing call of this phone number", in.CallID)
	}
	switch in.Action {
	case "pre_accept", "accept":
		if c.direction != "USER_INITIATED" {
			return nil, nil, errParamValue("%s applies to user-initiated calls", in.Action)
		}
		if aerr := needSession("answer"); aerr != nil {
			return nil, nil, aerr
		}
		if c.peer != nil {
			// Setting a remote description only parses and queues work in
			// pion, so it is done under the lock, where a refusal can still
			// become the request's error.
			if err := c.peer.SetAnswer(in.Session.SDP); err != nil {
				return nil, nil, errParamValue("session.sdp cannot be applied to the caller's offer: %v", err)
			}
		}
		c.state = cond(in.Action == "accept", "accepted", "pre_accepted")
		if in.Action == "accept" {
			c.startedAt = now
			if p := c.peer; p != nil {
				after = func() { p.StartSending(c.tag) }
			}
		}
	case "reject", "terminate":
		delete(s.calls, c.id)
		if p := c.peer; p != nil {
			after = func() { _ = p.Close() }
		}
	case "":
		return nil, nil, errMissing("action")
	default:
		return nil, nil, errParamValue("action must be connect, pre_accept, accept, reject or terminate, got %q", in.Action)
	}
	s.callActions[c.id] = append(s.callActions[c.id], in.Action)
	return ok, after, nil
}

// handleCallPermissions serves GET
// /{version}/{phone_number_id}/call_permissions?user_wa_id=.
func (s *Simulator) handleCallPermissions(w http.ResponseWriter, r *http.Request) {
	user := r.URL.Query().Get("user_wa_id")
	s.mu.Lock()
	ph, aerr := objectAs[*phone](s, r, r.PathValue("id"), "call_permissions")
	if aerr == nil && user == "" {
		aerr = errMissing("user_wa_id")
	}
	var p callPermission
	if aerr == nil {
		p = s.permissionLocked(ph.id, user, time.Now())
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	perm := map[string]any{"status": p.status}
	if !p.expires.IsZero() {
		perm["expiration_time"] = p.expires.Unix()
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"messaging_product": "whatsapp",
		"permission":        perm,
		"actions": []map[string]any{
			{"action_name": "send_call_permission_request", "can_perform_action": true, "limits": []any{}},
			{"action_name": "start_call", "can_perform_action": p.status != PermissionNone, "limits": []any{}},
		},
	})
}

// IncomingCall describes a user calling a business phone number.
type IncomingCall struct {
	PhoneNumberID string `json:"phone_number_id"`
	From          string `json:"from"`
	ProfileName   string `json:"profile_name"`
	// SDP is the caller's offer; a placeholder offer is used when empty
	// (enough for signalling tests, not for real media).
	SDP string `json:"sdp"`
}

const placeholderOffer = "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\nc=IN IP4 0.0.0.0\r\na=rtpmap:111 opus/48000/2\r\na=sendrecv\r\n"

// IncomingCall posts a user-initiated "connect" calls webhook synchronously
// and registers the call so that pre_accept/accept/reject/terminate work on
// it. It returns the call id and the receiver's HTTP status. The call has
// no media; PlaceCall is the same with a real caller.
func (s *Simulator) IncomingCall(ctx context.Context, in IncomingCall) (string, int, error) {
	return s.incomingCall(ctx, in, nil)
}

func (s *Simulator) incomingCall(ctx context.Context, in IncomingCall, peer *rtcpeer.Peer) (string, int, error) {
	if !isDigits(in.From) {
		return "", 0, fmt.Errorf("platformsim: from must be digits, got %q", in.From)
	}
	now := time.Now()
	s.mu.Lock()
	ph, ok := s.objects[in.PhoneNumberID].(*phone)
	if !ok {
		s.mu.Unlock()
		return "", 0, fmt.Errorf("platformsim: %w: phone number %s", ErrNotFound, in.PhoneNumberID)
	}
	if peer != nil && s.ctx.Err() != nil {
		// Close has run: a peer registered now would never be closed.
		s.mu.Unlock()
		return "", 0, fmt.Errorf("platformsim: simulator closed")
	}
	c := &call{id: newCallID(), phone: ph, user: in.From, direction: "USER_INITIATED", state: "ringing", startedAt: now, peer: peer}
	c.tag = CallTag(c.id)
	s.calls[c.id] = c
	if peer != nil {
		s.callPeers[c.id] = peer
	}
	value := ph.messagesValue()
	contact := contactJSON{WaID: in.From}
	contact.Profile.Name = cmpOr(in.ProfileName, "Sim User")
	value.Contacts = []contactJSON{contact}
	value.Calls = []map[string]any{{
		"id": c.id, "from": in.From, "to": ph.displayDigits, "event": "connect",
		"timestamp": strconv.FormatInt(now.Unix(), 10), "direction": c.direction,
		"session": map[string]string{"sdp_type": "offer", "sdp": cmpOr(in.SDP, placeholderOffer)},
	}}
	wabaID := ph.waba.id
	s.mu.Unlock()
	body, err := json.Marshal(newEnvelope(wabaID, "calls", value))
	if err != nil {
		return "", 0, err
	}
	code, err := s.postNow(ctx, body)
	return c.id, code, err
}

// TerminateCall ends a call from the user's side and posts the "terminate"
// calls webhook synchronously.
func (s *Simulator) TerminateCall(ctx context.Context, callID string) (int, error) {
	now := time.Now()
	s.mu.Lock()
	c, ok := s.calls[callID]
	if !ok {
		s.mu.Unlock()
		return 0, fmt.Errorf("platformsim: %w: call %s", ErrNotFound, callID)
	}
	delete(s.calls, callID)
	status := cond(c.state == "accepted", "COMPLETED", "FAILED")
	value := c.phone.messagesValue()
	ev := s.terminateEvent(c, now, status)
	value.Calls = []map[string]any{ev}
	wabaID := c.phone.waba.id
	peer := c.peer
	s.mu.Unlock()
	// The phone stops its audio before the provider reports the hang-up.
	if peer != nil {
		_ = peer.Close()
	}
	body, err := json.Marshal(newEnvelope(wabaID, "calls", value))
	if err != nil {
		return 0, err
	}
	return s.postNow(ctx, body)
}
