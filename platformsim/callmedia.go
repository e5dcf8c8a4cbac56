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

// Calls with media. The simulated user's phone is an rtcpeer.Peer: for a
// user-initiated call (PlaceCall) it makes the offer and applies the
// business's answer; for a business-initiated call it rings, then answers
// the business's offer (or declines) as SetCallBehaviour says. Once the call
// is accepted the phone sends tagged audio (see rtcpeer.Tagged), so a test
// can tell the customer's audio from anyone else's at the far end.

// SimCall is a user-initiated call placed by a simulated phone with real
// media.
type SimCall struct {
	ID string
	// Peer is the caller's phone. The simulator closes it when the call
	// ends; tests read what it received.
	Peer *rtcpeer.Peer
	// Tag marks the audio Peer sends once the business accepts.
	Tag string
}

// CallTag is the tag the simulated phone puts in its audio on a call: the
// last six characters of the call id.
func CallTag(callID string) string {
	if len(callID) <= 6 {
		return callID
	}
	return callID[len(callID)-6:]
}

// CallBehaviour is how a user's phone treats a business-initiated call.
type CallBehaviour struct {
	// Answer picks up after RingFor; false declines after RingFor.
	Answer  bool
	RingFor time.Duration
}

// DefaultCallBehaviour applies to users without a SetCallBehaviour.
var DefaultCallBehaviour = CallBehaviour{Answer: true, RingFor: 300 * time.Millisecond}

// SetCallBehaviour sets how the user's phone treats business-initiated calls
// from now on.
func (s *Simulator) SetCallBehaviour(userWaID string, b CallBehaviour) {
	b.RingFor = max(b.RingFor, 0)
	s.mu.Lock()
	s.callBehaviours[userWaID] = b
	s.mu.Unlock()
}

func (s *Simulator) callBehaviourLocked(user string) CallBehaviour {
	if b, ok := s.callBehaviours[user]; ok {
		return b
	}
	return DefaultCallBehaviour
}

// CallActions returns the actions the business sent for a call and the
// simulator accepted, in order ("connect", "pre_accept", "accept",
// "reject", "terminate"). They are kept after the call ended.
func (s *Simulator) CallActions(callID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.callActions[callID]...)
}

// CallPeer returns the simulated phone of a call, ongoing or ended; nil if
// the call has no media (IncomingCall, or a business-initiated call not
// answered yet).
func (s *Simulator) CallPeer(callID string) *rtcpeer.Peer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.callPeers[callID]
}

// PlaceCall is IncomingCall with a real caller: a new phone peer makes the
// offer that the webhook carries (in.SDP is ignored). The business's
// pre_accept/accept answer is applied to the peer, and on accept the peer
// sends audio tagged SimCall.Tag. The peer is closed when either side ends
// the call. As with IncomingCall, a non-2xx answer from the receiver is a
// status code, not an error, and the call stays registered.
func (s *Simulator) PlaceCall(ctx context.Context, in IncomingCall) (*SimCall, int, error) {
	if !isDigits(in.From) {
		return nil, 0, fmt.Errorf("platformsim: from must be digits, got %q", in.From)
	}
	peer, err := rtcpeer.New("caller-" + in.From)
	if err != nil {
		return nil, 0, err
	}
	in.SDP, err = peer.Offer(ctx)
	if err != nil {
		_ = peer.Close()
		return nil, 0, err
	}
	id, code, err := s.incomingCall(ctx, in, peer)
	if id == "" {
		_ = peer.Close()
		return nil, 0, err
	}
	return &SimCall{ID: id, Peer: peer, Tag: CallTag(id)}, code, err
}

// closeCallPeers closes every phone peer; Close calls it.
func (s *Simulator) closeCallPeers() {
	s.mu.Lock()
	peers := make([]*rtcpeer.Peer, 0, len(s.callPeers))
	for _, p := range s.callPeers {
		peers = append(peers, p)
	}
	s.mu.Unlock()
	for _, p := range peers {
		_ = p.Close()
	}
}

// ringPhone plays the user's phone on a business-initiated call: RINGING,
// then after RingFor either connect (with the phone's answer) and ACCEPTED,
// or REJECTED. The webhooks are posted in order by this goroutine. A
// business that terminates the call meanwhile silences the phone.
func (s *Simulator) ringPhone(c *call, offer string, b CallBehaviour) {
	if !s.callLive(c) {
		return
	}
	s.deliverInOrder(s.callStatusBody(c, "RINGING"))
	t := time.NewTimer(b.RingFor)
	select {
	case <-t.C:
	case <-s.ctx.Done():
		t.Stop()
		return
	}
	if !b.Answer {
		if s.endCall(c) {
			s.deliverInOrder(s.callStatusBody(c, "REJECTED"))
		}
		return
	}
	answer, peer, err := s.answerOffer(c, offer)
	if err != nil {
		// A real phone that cannot negotiate drops the call; so does this
		// one, with the same terminate event a hang-up while ringing gets.
		s.log.Warn("platformsim: the phone cannot answer the business's offer", "call_id", c.id, "err", err)
		if s.endCall(c) {
			s.deliverInOrder(s.callEventBody(c, s.terminateEvent(c, time.Now(), "FAILED")))
		}
		return
	}
	now := time.Now()
	s.mu.Lock()
	live := s.calls[c.id] == c && s.ctx.Err() == nil
	if live {
		c.peer, c.state, c.startedAt = peer, "accepted", now
		s.callPeers[c.id] = peer
	}
	s.mu.Unlock()
	if !live {
		_ = peer.Close()
		return
	}
	peer.StartSending(c.tag)
	ev := map[string]any{
		"id": c.id, "from": c.phone.displayDigits, "to": c.user, "event": "connect",
		"timestamp": strconv.FormatInt(now.Unix(), 10), "direction": c.direction,
		"session": map[string]string{"sdp_type": "answer", "sdp": answer},
	}
	s.deliverInOrder(s.callEventBody(c, ev))
	s.deliverInOrder(s.callStatusBody(c, "ACCEPTED"))
}

func (s *Simulator) answerOffer(c *call, offer string) (string, *rtcpeer.Peer, error) {
	peer, err := rtcpeer.New("phone-" + c.user)
	if err != nil {
		return "", nil, err
	}
	answer, err := peer.Answer(s.ctx, offer)
	if err != nil {
		_ = peer.Close()
		return "", nil, err
	}
	return answer, peer, nil
}

func (s *Simulator) callLive(c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[c.id] == c
}

// endCall forgets c if it is still ongoing and says whether it was.
func (s *Simulator) endCall(c *call) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.calls[c.id] != c {
		return false
	}
	delete(s.calls, c.id)
	return true
}

// terminateEvent is the calls webhook's "terminate" event; status is
// COMPLETED (with times and duration) or FAILED. c.startedAt is read, so
// the caller holds s.mu or owns c.
func (s *Simulator) terminateEvent(c *call, now time.Time, status string) map[string]any {
	ev := map[string]any{
		"id": c.id, "from": c.user, "to": c.phone.displayDigits, "event": "terminate",
		"timestamp": strconv.FormatInt(now.Unix(), 10), "direction": c.direction, "status": status,
	}
	if c.direction == "BUSINESS_INITIATED" {
		ev["from"], ev["to"] = c.phone.displayDigits, c.user
	}
	if status == "COMPLETED" {
		ev["start_time"] = strconv.FormatInt(c.startedAt.Unix(), 10)
		ev["end_time"] = strconv.FormatInt(now.Unix(), 10)
		ev["duration"] = int(now.Sub(c.startedAt).Seconds())
	}
	return ev
}

// callEventBody renders a calls webhook carrying one call event.
func (s *Simulator) callEventBody(c *call, ev map[string]any) []byte {
	value := c.phone.messagesValue()
	value.Calls = []map[string]any{ev}
	body, _ := json.Marshal(newEnvelope(c.phone.waba.id, "calls", value))
	return body
}

// callStatusesValue is the value of a calls webhook reporting the progress
// of a business-initiated call.
type callStatusesValue struct {
	MessagingProduct string           `json:"messaging_product"`
	Metadata         metadata         `json:"metadata"`
	Statuses         []map[string]any `json:"statuses"`
}

func (s *Simulator) callStatusBody(c *call, status string) []byte {
	value := callStatusesValue{
		MessagingProduct: "whatsapp",
		Metadata:         metadata{DisplayPhoneNumber: c.phone.displayDigits, PhoneNumberID: c.phone.id},
		Statuses: []map[string]any{{
			"id": c.id, "type": "call", "status": status,
			"timestamp": strconv.FormatInt(time.Now().Unix(), 10), "recipient_id": c.user,
		}},
	}
	body, _ := json.Marshal(newEnvelope(c.phone.waba.id, "calls", value))
	return body
}

// Control API for calls with media.

func (s *Simulator) handleSetCallBehaviour(w http.ResponseWriter, r *http.Request) {
	var in struct {
		UserWaID  string `json:"user_wa_id"`
		Answer    bool   `json:"answer"`
		RingForMS int64  `json:"ring_for_ms"`
	}
	if !decodeControl(w, r, &in) {
		return
	}
	if !isDigits(in.UserWaID) {
		controlError(w, http.StatusBadRequest, "user_wa_id must be digits")
		return
	}
	s.SetCallBehaviour(in.UserWaID, CallBehaviour{Answer: in.Answer, RingFor: time.Duration(in.RingForMS) * time.Millisecond})
	writeJSON(w, http.StatusOK, success)
}

// callInfo is the control API's view of a call.
type callInfo struct {
	CallID  string     `json:"call_id"`
	Ongoing bool       `json:"ongoing"`
	Tag     string     `json:"tag"`
	Actions []string   `json:"actions"`
	Media   *mediaInfo `json:"media"`
}

type mediaInfo struct {
	Connected bool `json:"connected"`
	Sent      int  `json:"sent"`
	Received  int  `json:"received"`
	// ReceivedTagged counts received packets by tag (rtcpeer payloads), for
	// a bridge that relays another simulated peer's audio.
	ReceivedTagged map[string]int `json:"received_tagged"`
}

func (s *Simulator) handleGetCall(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	_, ongoing := s.calls[id]
	actions, known := s.callActions[id]
	peer := s.callPeers[id]
	s.mu.Unlock()
	if !ongoing && !known && peer == nil {
		controlError(w, http.StatusNotFound, "no call "+id)
		return
	}
	info := callInfo{CallID: id, Ongoing: ongoing, Tag: CallTag(id), Actions: append([]string{}, actions...)}
	if peer != nil {
		m := &mediaInfo{Connected: peer.IsConnected(), Sent: len(peer.Sent()), ReceivedTagged: map[string]int{}}
		for _, p := range peer.Received() {
			m.Received++
			if tag, _, ok := rtcpeer.Tagged(p.Payload); ok {
				m.ReceivedTagged[tag]++
			}
		}
		info.Media = m
	}
	writeJSON(w, http.StatusOK, info)
}
