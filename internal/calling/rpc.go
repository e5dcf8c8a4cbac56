package calling

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"wharf/internal/infra/apperr"
)

// Call-control requests travel through Redis so that any api replica (or
// worker) reaches the callbridge that holds a call's media:
//
//   - every callbridge instance heartbeats into the sorted set instancesKey
//     (score: the time of its last beat) and pops requests from its own list
//     and from the shared list anyQueue (new calls go to whichever instance
//     is free first);
//   - the instance that answered a call records itself as its owner under
//     ownerKey with a lease it renews while the call lives;
//   - a request names a reply list; the sender waits on it with a timeout.
//
// An owner that died leaves a lease that runs out: a request for its call
// finds no live owner, and the call is ended and logged (endOrphan).
const (
	instancesKey = "callbridge:instances"
	anyQueue     = "callbridge:rpc:any"
	// AliveWithin is how recent an instance's last heartbeat must be.
	AliveWithin = 5 * time.Second
	// OwnerLease is how long an owner record lives without renewal.
	OwnerLease = 15 * time.Second
)

func instanceQueue(instance string) string { return "callbridge:rpc:" + instance }
func ownerKey(callLogID uuid.UUID) string  { return "callbridge:owner:" + callLogID.String() }
func replyKey(requestID string) string     { return "callbridge:reply:" + requestID }
func inFlightKey(orgID uuid.UUID) string   { return "callbridge:inflight:" + orgID.String() }
func aliveSince(now time.Time) string {
	return strconv.FormatInt(now.Add(-AliveWithin).UnixMilli(), 10)
}
func scoreOf(t time.Time) float64 { return float64(t.UnixMilli()) }
func requestExpired(r *Request, now time.Time) bool {
	return !r.Deadline.IsZero() && now.After(r.Deadline)
}

// Operations a callbridge serves.
const (
	OpIncoming       = "incoming"        // answer a user-initiated call
	OpConnect        = "connect"         // bridge an agent to a waiting transfer
	OpHangup         = "hangup"          // the agent ends the call
	OpHold           = "hold"            //
	OpResume         = "resume"          //
	OpTransfer       = "transfer"        // move the call to a team
	OpOutgoing       = "outgoing"        // place a business-initiated call
	OpRemoteEnd      = "remote_end"      // the provider says the call ended
	OpRemoteAnswer   = "remote_answer"   // the callee's SDP answer (outgoing)
	OpRemoteProgress = "remote_progress" // RINGING, ACCEPTED, REJECTED (outgoing)
)

// Request is one call-control request.
type Request struct {
	ID         string     `json:"id"`
	Op         string     `json:"op"`
	OrgID      uuid.UUID  `json:"org_id"`
	CallLogID  uuid.UUID  `json:"call_log_id"`
	TransferID uuid.UUID  `json:"transfer_id,omitzero"`
	UserID     uuid.UUID  `json:"user_id,omitzero"`
	TeamID     *uuid.UUID `json:"team_id,omitempty"`
	AgentID    *uuid.UUID `json:"agent_id,omitempty"`
	ContactID  *uuid.UUID `json:"contact_id,omitempty"`
	AccountID  *uuid.UUID `json:"account_id,omitempty"`
	SDP        string     `json:"sdp,omitempty"`
	Status     string     `json:"status,omitempty"` // remote progress or end status
	// ReplyTo is "" for requests nobody waits for (webhook events).
	ReplyTo  string    `json:"reply_to,omitempty"`
	Deadline time.Time `json:"deadline,omitzero"`
}

// Reply answers a Request: an error kind and message (apperr), or the
// answer's SDP.
type Reply struct {
	Kind    apperr.Kind `json:"kind,omitempty"`
	Failed  bool        `json:"failed,omitempty"`
	Message string      `json:"message,omitempty"`
	SDP     string      `json:"sdp,omitempty"`
	// CallLogID names the call an outgoing request created.
	CallLogID uuid.UUID `json:"call_log_id,omitzero"`
}

// Err is the reply as an error (nil on success).
func (r *Reply) Err() error {
	if !r.Failed {
		return nil
	}
	return &apperr.Error{Kind: r.Kind, Message: r.Message}
}

// ReplyFor builds the reply of a handler's result: an apperr keeps its kind
// and message, anything else is an internal error whose cause stays in the
// callbridge's log.
func ReplyFor(sdp string, err error) Reply {
	if err == nil {
		return Reply{SDP: sdp}
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return Reply{Failed: true, Kind: ae.Kind, Message: ae.Message}
	}
	return Reply{Failed: true, Kind: apperr.Internal, Message: "the call could not be controlled"}
}

// errNoBridge answers when no callbridge instance is alive.
var errNoBridge = apperr.Unavailablef("no callbridge is running: calls cannot be answered or controlled")

// liveInstance reports whether an instance heartbeat recently.
func (s *Service) liveInstance(ctx context.Context, instance string) (bool, error) {
	score, err := s.rdb.ZScore(ctx, instancesKey, instance).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return time.UnixMilli(int64(score)).After(time.Now().Add(-AliveWithin)), nil
}

// anyAlive reports whether some instance heartbeat recently.
func (s *Service) anyAlive(ctx context.Context) (bool, error) {
	n, err := s.rdb.ZCount(ctx, instancesKey, aliveSince(time.Now()), "+inf").Result()
	return n > 0, err
}

// owner is the live instance that owns a call's media, "" when none does.
func (s *Service) owner(ctx context.Context, callLogID uuid.UUID) (string, error) {
	inst, err := s.rdb.Get(ctx, ownerKey(callLogID)).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	alive, err := s.liveInstance(ctx, inst)
	if err != nil || !alive {
		return "", err
	}
	return inst, nil
}

// post queues a request without waiting for an answer.
func (s *Service) post(ctx context.Context, queue string, r *Request) error {
	if r.ID == "" {
		r.ID = uuid.NewString()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.rdb.RPush(ctx, queue, b).Err()
}

// admit records a request in its organization's set of requests in flight
// (scored by their deadline, so that one whose sender died leaves by
// itself) unless the set is full: 1 admitted, 0 refused.
var admit = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
	return 0
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`)

// call queues a request and waits up to wait for its reply. An
// organization has at most MaxInFlight requests waiting at once, across
// api replicas: past it a 429 at once, and nothing is sent (a flood from
// one tenant cannot fill the callbridges' slots, callbridge.Config.MaxRequests).
func (s *Service) call(ctx context.Context, queue string, r *Request, wait time.Duration) (*Reply, error) {
	now := time.Now()
	r.ID = uuid.NewString()
	r.ReplyTo = replyKey(r.ID)
	r.Deadline = now.Add(wait)
	key := inFlightKey(r.OrgID)
	ok, err := admit.Run(ctx, s.rdb, []string{key}, now.UnixMilli(), s.cfg.MaxInFlight, r.Deadline.UnixMilli(), r.ID,
		(wait + time.Minute).Milliseconds()).Int()
	if err != nil {
		return nil, err
	}
	if ok == 0 {
		return nil, apperr.TooManyAfter(time.Second, "too many call-control requests in progress for this organization (at most %d at once): retry in a moment",
			s.cfg.MaxInFlight)
	}
	defer s.rdb.ZRem(context.WithoutCancel(ctx), key, r.ID)
	if err := s.post(ctx, queue, r); err != nil {
		return nil, err
	}
	res, err := s.rdb.BLPop(ctx, wait, r.ReplyTo).Result()
	if errors.Is(err, redis.Nil) {
		return nil, apperr.Unavailablef("the callbridge did not answer within %s", wait)
	}
	if err != nil {
		return nil, err
	}
	var rep Reply
	if err := json.Unmarshal([]byte(res[1]), &rep); err != nil {
		return nil, fmt.Errorf("calling: reply: %w", err)
	}
	return &rep, nil
}

// Bridge is the callbridge side of the transport: one per instance.
type Bridge struct {
	rdb      *redis.Client
	Instance string
}

// NewBridge registers nothing yet; Beat makes the instance visible.
func NewBridge(rdb *redis.Client, instance string) *Bridge {
	return &Bridge{rdb: rdb, Instance: instance}
}

// Beat records the instance as alive now.
func (b *Bridge) Beat(ctx context.Context) error {
	return b.rdb.ZAdd(ctx, instancesKey, redis.Z{Score: scoreOf(time.Now()), Member: b.Instance}).Err()
}

// Leave removes the instance (a graceful stop).
func (b *Bridge) Leave(ctx context.Context) error {
	return b.rdb.ZRem(ctx, instancesKey, b.Instance).Err()
}

// Next waits up to wait for the next request to this instance or to any
// instance; nil when none came.
func (b *Bridge) Next(ctx context.Context, wait time.Duration) (*Request, error) {
	res, err := b.rdb.BLPop(ctx, wait, instanceQueue(b.Instance), anyQueue).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Request
	if err := json.Unmarshal([]byte(res[1]), &r); err != nil {
		return nil, fmt.Errorf("calling: request: %w", err)
	}
	if requestExpired(&r, time.Now()) {
		return nil, nil // its sender stopped waiting; acting now would surprise it
	}
	return &r, nil
}

// Answer sends a request's reply (nothing when nobody waits).
func (b *Bridge) Answer(ctx context.Context, r *Request, rep Reply) error {
	if r.ReplyTo == "" {
		return nil
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	pipe := b.rdb.TxPipeline()
	pipe.RPush(ctx, r.ReplyTo, body)
	pipe.Expire(ctx, r.ReplyTo, time.Minute)
	_, err = pipe.Exec(ctx)
	return err
}

// Own records the instance as the owner of a call, or renews its lease.
func (b *Bridge) Own(ctx context.Context, callLogID uuid.UUID) error {
	return b.rdb.Set(ctx, ownerKey(callLogID), b.Instance, OwnerLease).Err()
}

// Disown drops the ownership of an ended call.
func (b *Bridge) Disown(ctx context.Context, callLogID uuid.UUID) error {
	return b.rdb.Del(ctx, ownerKey(callLogID)).Err()
}
