package callingapi

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/calling"
	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/models"
)

type callLogsQuery struct {
	web.PageQuery
	Status    string `query:"status" description:"One call log status (ringing, answered, completed, missed, rejected, failed, transferring, initiating, accepted, on_hold, connected)."`
	Account   string `query:"account" description:"An account's name (case-insensitive): the calls logged under that name or made through the account that bears it; an unknown name gives an empty list."`
	ContactID string `query:"contact_id" description:"A contact's id."`
	Direction string `query:"direction" description:"incoming or outgoing (anything else is a 400)."`
	IVRFlowID string `query:"ivr_flow_id" description:"An IVR flow's id."`
	Phone     string `query:"phone" description:"Part of the caller's number; only its digits are compared. When the organization masks numbers, only the whole number matches."`
	StartDate string `query:"start_date" description:"YYYY-MM-DD: calls created on or after that day, in the organization's timezone."`
	EndDate   string `query:"end_date" description:"YYYY-MM-DD: calls created on or before that day (inclusive), in the organization's timezone."`
}

type transfersQuery struct {
	web.PageQuery
	Status string `query:"status" description:"One transfer status: waiting, connected, completed, abandoned or no_answer."`
}

type permissionQuery struct {
	PlatformAccount string `query:"platform_account" description:"The name of the account whose number would call (required)."`
}

type contactRef struct {
	ID          uuid.UUID `json:"id"`
	PhoneNumber string    `json:"phone_number" description:"Masked when the organization masks phone numbers."`
}

type agentRef struct {
	ID       uuid.UUID `json:"id"`
	FullName string    `json:"full_name"`
}

type callLogResp struct {
	ID                uuid.UUID   `json:"id"`
	OrganizationID    uuid.UUID   `json:"organization_id"`
	PlatformAccount   string      `json:"platform_account" description:"The account's name when the call started."`
	ContactID         *uuid.UUID  `json:"contact_id"`
	PlatformCallID    string      `json:"platform_call_id" description:"The provider's call id (wacid)."`
	CallerPhone       string      `json:"caller_phone" description:"Masked when the organization masks phone numbers."`
	Direction         string      `json:"direction" description:"incoming or outgoing."`
	Status            string      `json:"status"`
	Duration          int         `json:"duration" description:"Seconds."`
	IVRFlowID         *uuid.UUID  `json:"ivr_flow_id"`
	IVRPath           []string    `json:"ivr_path"`
	AgentID           *uuid.UUID  `json:"agent_id"`
	StartedAt         time.Time   `json:"started_at"`
	AnsweredAt        *time.Time  `json:"answered_at"`
	EndedAt           *time.Time  `json:"ended_at"`
	DisconnectedBy    string      `json:"disconnected_by" description:"caller, agent or system; empty while the call lasts."`
	RecordingDuration int         `json:"recording_duration" description:"Seconds; 0 when the call has no recording."`
	Contact           *contactRef `json:"contact" description:"null when the call has no contact."`
	Agent             *agentRef   `json:"agent" description:"null when no agent took the call."`
	CreatedAt         time.Time   `json:"created_at" description:"What start_date and end_date filter on."`
}

func toCallLogResp(m orgsettings.Masker, v *calling.CallLogView) callLogResp {
	path := []string{}
	_ = json.Unmarshal(v.IVRPath, &path) // a malformed path shows empty rather than failing the list
	if path == nil {
		path = []string{}
	}
	out := callLogResp{ID: v.ID, OrganizationID: v.OrganizationID, PlatformAccount: v.PlatformAccount, ContactID: v.ContactID,
		PlatformCallID: v.PlatformCallID, CallerPhone: m.Phone(v.CallerPhone), Direction: v.Direction, Status: v.Status,
		Duration: v.Duration, IVRFlowID: v.IVRFlowID, IVRPath: path, AgentID: v.AgentID, StartedAt: web.UTC(v.StartedAt),
		AnsweredAt: web.UTCPtr(v.AnsweredAt), EndedAt: web.UTCPtr(v.EndedAt), DisconnectedBy: v.DisconnectedBy,
		RecordingDuration: v.RecordingDuration, CreatedAt: web.UTC(v.CreatedAt)}
	if v.ContactID != nil && v.ContactPhone != nil {
		out.Contact = &contactRef{ID: *v.ContactID, PhoneNumber: m.Phone(*v.ContactPhone)}
	}
	if v.AgentID != nil && v.AgentName != nil {
		out.Agent = &agentRef{ID: *v.AgentID, FullName: *v.AgentName}
	}
	return out
}

type callLogsResp struct {
	CallLogs []callLogResp `json:"call_logs"`
	Total    int64         `json:"total"`
	Page     int           `json:"page"`
	Limit    int           `json:"limit"`
}

type callLogDetail struct {
	CallLog   callLogResp    `json:"call_log"`
	Transfers []transferResp `json:"transfers" description:"The call's transfers, oldest first."`
}

type transferResp struct {
	ID                uuid.UUID  `json:"id"`
	OrganizationID    uuid.UUID  `json:"organization_id"`
	CallLogID         uuid.UUID  `json:"call_log_id"`
	PlatformCallID    string     `json:"platform_call_id"`
	CallerPhone       string     `json:"caller_phone" description:"Masked when the organization masks phone numbers."`
	ContactID         *uuid.UUID `json:"contact_id"`
	PlatformAccount   string     `json:"platform_account"`
	Status            string     `json:"status" description:"waiting, connected, completed, abandoned or no_answer."`
	TeamID            *uuid.UUID `json:"team_id"`
	AgentID           *uuid.UUID `json:"agent_id"`
	InitiatingAgentID *uuid.UUID `json:"initiating_agent_id" description:"The agent who transferred the call, null for a call's first transfer."`
	TransferredAt     time.Time  `json:"transferred_at"`
	ConnectedAt       *time.Time `json:"connected_at"`
	EndedAt           *time.Time `json:"ended_at"`
	HoldDuration      int        `json:"hold_duration" description:"Seconds on hold."`
	TalkDuration      int        `json:"talk_duration" description:"Seconds connected, hold included."`
}

func toTransferResp(m orgsettings.Masker, t *models.CallTransfer) transferResp {
	return transferResp{ID: t.ID, OrganizationID: t.OrganizationID, CallLogID: t.CallLogID, PlatformCallID: t.PlatformCallID,
		CallerPhone: m.Phone(t.CallerPhone), ContactID: t.ContactID, PlatformAccount: t.PlatformAccount, Status: t.Status,
		TeamID: t.TeamID, AgentID: t.AgentID, InitiatingAgentID: t.InitiatingAgentID, TransferredAt: web.UTC(t.TransferredAt),
		ConnectedAt: web.UTCPtr(t.ConnectedAt), EndedAt: web.UTCPtr(t.EndedAt), HoldDuration: t.HoldDuration, TalkDuration: t.TalkDuration}
}

func toTransfers(m orgsettings.Masker, ts []models.CallTransfer) []transferResp {
	out := make([]transferResp, len(ts))
	for i := range ts {
		out[i] = toTransferResp(m, &ts[i])
	}
	return out
}

type transfersResp struct {
	CallTransfers []transferResp `json:"call_transfers"`
	Total         int64          `json:"total"`
	Page          int            `json:"page"`
	Limit         int            `json:"limit"`
}

type recordingResp struct {
	URL       string    `json:"url" description:"Works without credentials until expires_at (at most 900 s), and not after."`
	Duration  int       `json:"duration" description:"The recording's length in seconds."`
	ExpiresAt time.Time `json:"expires_at"`
}

type statusResp struct {
	Status string `json:"status"`
}

type connectRequest struct {
	SDPOffer *string `json:"sdp_offer" description:"The agent's browser's SDP offer (required): starts with v=0 and has an m=audio line."`
}

type connectResp struct {
	SDPAnswer string `json:"sdp_answer" description:"The bridge's complete SDP answer (candidates gathered, no trickle)."`
}

type initiateRequest struct {
	CallLogID *string `json:"call_log_id" description:"The call to transfer (required)."`
	TeamID    *string `json:"team_id" description:"The team that takes the call (required); its assignment strategy applies."`
	AgentID   *string `json:"agent_id" description:"A member of team_id to ring (optional)."`
}

type outgoingRequest struct {
	ContactID       *string `json:"contact_id" description:"The contact to call (required)."`
	PlatformAccount string  `json:"platform_account" description:"The name of the account whose number calls (required)."`
	SDPOffer        *string `json:"sdp_offer" description:"The agent's browser's SDP offer (required)."`
}

type outgoingResp struct {
	CallLogID uuid.UUID `json:"call_log_id"`
	SDPAnswer string    `json:"sdp_answer"`
}

type permissionRequest struct {
	ContactID       *string `json:"contact_id" description:"The contact to ask (required); they must have written within 24 hours."`
	PlatformAccount string  `json:"platform_account" description:"The name of the account whose number would call (required)."`
}

type permissionRequestResp struct {
	PermissionID uuid.UUID `json:"permission_id" description:"The id of the permission request message."`
}

type permissionResp struct {
	Status    string     `json:"status" description:"The provider's answer as it comes: no_permission, temporary or permanent."`
	ExpiresAt *time.Time `json:"expires_at,omitempty" description:"When a temporary permission ends."`
}

type iceServer struct {
	URLs       []string `json:"urls"`
	Username   string   `json:"username,omitempty" description:"TURN only: <unix expiry>:<user id>."`
	Credential string   `json:"credential,omitempty" description:"TURN only: base64 HMAC-SHA1 of the username with the relay's secret."`
}

type iceResp struct {
	ICEServers []iceServer `json:"ice_servers" description:"For RTCPeerConnection's iceServers: STUN first, then TURN when configured."`
}

// requiredUUID parses a required UUID field of a request body.
func requiredUUID(field string, raw *string) (uuid.UUID, error) {
	if raw == nil || strings.TrimSpace(*raw) == "" {
		return uuid.Nil, apperr.Invalidf("%s is required", field)
	}
	id, err := uuid.Parse(strings.TrimSpace(*raw))
	if err != nil {
		return uuid.Nil, apperr.Invalidf("%s must be a UUID", field)
	}
	return id, nil
}

// sdpOffer reads the optional JSON field and checks it with the domain's
// rule (calling.CheckSDPOffer) before any call is touched.
func sdpOffer(raw *string) (string, error) {
	if raw == nil {
		return "", calling.CheckSDPOffer("")
	}
	sdp := strings.TrimLeft(*raw, " \t\r\n")
	return sdp, calling.CheckSDPOffer(sdp)
}

// requireAccount refuses an empty platform_account before any lookup.
func requireAccount(name string) error {
	if name == "" {
		return apperr.Invalidf("platform_account is required (the name of one of the organization's accounts)")
	}
	return nil
}
