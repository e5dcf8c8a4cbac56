package contactsapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/contacts"
	"wharf/internal/orgsettings"
	"wharf/models"
)

type listQuery struct {
	web.PageQuery
	Search    string `query:"search" description:"Text to look for in the name, profile name or phone number. When the organization masks numbers, a term of digits and + -.() matches only a whole number, and other terms only names."`
	AccountID string `query:"account_id" description:"Only contacts of this platform account (UUID)."`
	Tag       string `query:"tag" description:"Only contacts with this tag (its name, any case)."`
	Assigned  string `query:"assigned" description:"Only contacts assigned to the caller (me), to nobody (none), or to this user (UUID)."`
	Unread    string `query:"unread" enum:"true,false" description:"true: only contacts with unread incoming messages."`
	// has_transfer: an active chat transfer to agents.
	HasTransfer string `query:"has_transfer" enum:"true,false" description:"true: only contacts with an active transfer to agents."`
}

type contactResp struct {
	ID            uuid.UUID      `json:"id"`
	PhoneNumber   string         `json:"phone_number"`
	Name          string         `json:"name"`
	ProfileName   string         `json:"profile_name"`
	AvatarURL     string         `json:"avatar_url"`
	AccountID     *uuid.UUID     `json:"account_id"`
	AssignedTo    *uuid.UUID     `json:"assigned_to"`
	Metadata      map[string]any `json:"metadata"`
	Tags          []string       `json:"tags"`
	LastMessageAt *time.Time     `json:"last_message_at"`
	// LastInboundAt: the contact's last message to us; free-form messages
	// may be sent for 24 hours after it (the service window).
	LastInboundAt *time.Time `json:"last_inbound_at"`
	// UnreadCount: incoming messages since the conversation was last
	// marked read (PUT /api/contacts/{id}/read).
	UnreadCount int `json:"unread_count"`
	// LastMessagePreview: the last message's text (at most 100
	// characters), or its kind in brackets ("[image] caption"); "" without
	// messages.
	LastMessagePreview string `json:"last_message_preview"`
	// LastMessageDirection: incoming, outgoing, or "" without messages.
	LastMessageDirection string `json:"last_message_direction" enum:"incoming,outgoing,"`
	// MarketingOptOut: the contact is not sent marketing templates.
	MarketingOptOut bool `json:"marketing_opt_out"`
	// OptedOutAt: when the contact opted out (null while opted in).
	OptedOutAt *time.Time `json:"opted_out_at"`
	// OptOutSource: how the opt-out last changed: keyword (the contact
	// sent one), provider (error 131050 on a marketing template), user (a
	// user through the API); "" when it never changed.
	OptOutSource string `json:"opt_out_source"`
	// OptOutChangedAt: when the opt-out last changed.
	OptOutChangedAt *time.Time `json:"opt_out_changed_at"`
	// OptOutChangedBy: the user who last changed it (source user).
	OptOutChangedBy *uuid.UUID `json:"opt_out_changed_by"`
	CreatedAt       time.Time  `json:"created_at"`
	UpdatedAt       time.Time  `json:"updated_at"`
}

// toContactResp renders a contact, masked as the organization wants.
func toContactResp(m orgsettings.Masker, v contacts.View) contactResp {
	meta := v.Metadata.V
	if meta == nil {
		meta = map[string]any{}
	}
	return contactResp{ID: v.ID, PhoneNumber: m.Phone(v.PhoneNumber), Name: m.Name(v.Name), ProfileName: m.Name(v.ProfileName),
		AvatarURL: v.AvatarURL, AccountID: v.AccountID, AssignedTo: v.AssignedTo, Metadata: meta, Tags: v.Tags,
		LastMessageAt: web.UTCPtr(v.LastMessageAt), LastInboundAt: web.UTCPtr(v.LastInboundAt), UnreadCount: v.UnreadCount, LastMessagePreview: v.LastMessagePreview,
		LastMessageDirection: v.LastMessageDirection, MarketingOptOut: v.MarketingOptOut, OptedOutAt: web.UTCPtr(v.OptedOutAt),
		OptOutSource: v.OptOutSource, OptOutChangedAt: web.UTCPtr(v.OptOutChangedAt), OptOutChangedBy: v.OptOutChangedBy, CreatedAt: web.UTC(v.CreatedAt), UpdatedAt: web.UTC(v.UpdatedAt)}
}

// contactPage is a page of contacts; unlike other lists it also says how
// many pages there are.
type contactPage struct {
	Items      []contactResp `json:"items"`
	Total      int64         `json:"total"`
	Page       int           `json:"page"`
	Limit      int           `json:"limit"`
	TotalPages int           `json:"total_pages"`
	// TotalIsEstimate is set when a search matches more than 10,000
	// contacts: total is then the database's estimate, not a count.
	TotalIsEstimate bool `json:"total_is_estimate"`
}

type contactRequest struct {
	PhoneNumber *string         `json:"phone_number"` // creation only
	Name        *string         `json:"name"`
	AccountID   *string         `json:"account_id"`
	Metadata    *map[string]any `json:"metadata"`
}

type optOutRequest struct {
	// MarketingOptOut: true opts the contact out of marketing templates,
	// false back in. Required.
	MarketingOptOut *bool `json:"marketing_opt_out"`
}

type assignRequest struct {
	UserID *string `json:"user_id"` // null unassigns
}

type assignedResp struct {
	ID         uuid.UUID  `json:"id"`
	AssignedTo *uuid.UUID `json:"assigned_to"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

type sessionDataResp struct {
	SessionID   *uuid.UUID     `json:"session_id"`
	FlowID      *uuid.UUID     `json:"flow_id"`
	FlowName    string         `json:"flow_name"`
	SessionData map[string]any `json:"session_data"`
	PanelConfig any            `json:"panel_config"`
}

type setTagsRequest struct {
	Tags *[]string `json:"tags"`
}

// Tags.

type tagsQuery struct {
	web.PageQuery
	Search string `query:"search" description:"Text to look for in the name or colour."`
}

type tagRequest struct {
	Name        *string `json:"name"`
	Color       *string `json:"color"`
	Description *string `json:"description"`
}

type tagResp struct {
	Name        string    `json:"name"`
	Color       string    `json:"color"`
	Description string    `json:"description"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func toTagResp(t *models.Tag) tagResp {
	return tagResp{Name: t.Name, Color: t.Color, Description: t.Description, CreatedAt: web.UTC(t.CreatedAt), UpdatedAt: web.UTC(t.UpdatedAt)}
}

type tagsPage struct {
	Tags  []tagResp `json:"tags"`
	Total int64     `json:"total"`
	Page  int       `json:"page"`
	Limit int       `json:"limit"`
}
