package customactionsapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/customactions"
	"wharf/models"
)

// actionRequest converts to customactions.Input field for field; absent
// fields are unchanged (on create: defaults).
type actionRequest struct {
	Name         *string        `json:"name" description:"The button's label, unique in the organization (case-insensitive), at most 100 characters. Required on create."`
	Icon         *string        `json:"icon" description:"ticket, user, bar-chart, link, phone, mail, file-text, external-link, zap, globe or code; default zap."`
	ActionType   *string        `json:"action_type" description:"webhook, url or javascript. Required on create."`
	Config       map[string]any `json:"config" description:"By type: webhook {url, method (POST, GET, PUT, PATCH; default POST), headers (object of strings), body (a JSON template)}; url {url, open_in_new_tab (default true)}; javascript {code}. Required on create; on update it replaces the stored config. Header values and a URL's credentials are answered masked (********); sending the mask back keeps the stored value."`
	IsActive     *bool          `json:"is_active"`
	DisplayOrder *int           `json:"display_order"`
}

func (r actionRequest) input() customactions.Input {
	return customactions.Input{Name: r.Name, Icon: r.Icon, ActionType: r.ActionType, Config: r.Config, IsActive: r.IsActive,
		DisplayOrder: r.DisplayOrder}
}

type actionResp struct {
	ID           uuid.UUID      `json:"id"`
	Name         string         `json:"name"`
	Icon         string         `json:"icon"`
	ActionType   string         `json:"action_type"`
	Config       map[string]any `json:"config"`
	IsActive     bool           `json:"is_active"`
	DisplayOrder int            `json:"display_order"`
	CreatedAt    time.Time      `json:"created_at"`
	UpdatedAt    time.Time      `json:"updated_at"`
}

func toActionResp(a models.CustomAction) actionResp {
	cfg := customactions.MaskConfig(a.Config.V)
	return actionResp{ID: a.ID, Name: a.Name, Icon: a.Icon, ActionType: a.ActionType, Config: cfg, IsActive: a.IsActive,
		DisplayOrder: a.DisplayOrder, CreatedAt: web.UTC(a.CreatedAt), UpdatedAt: web.UTC(a.UpdatedAt)}
}

type listResp struct {
	CustomActions []actionResp `json:"custom_actions"`
}

type deleteResp struct {
	Status string `json:"status" const:"deleted"`
}

// executeRequest names the contact the action runs for.
type executeRequest struct {
	ContactID *string `json:"contact_id" description:"The contact of the organization the action runs for. Required."`
}

type toastResp struct {
	Message string `json:"message"`
	Type    string `json:"type" description:"success or error."`
}

// executeResp is a run's outcome, by type: webhook {success, message,
// data, toast}; url {success, message, redirect_url}; javascript
// {success, message, data {code, context}, toast}.
type executeResp struct {
	Success     bool       `json:"success" description:"Whether the action did its work; a webhook the target refused or that could not be reached is false, with the reason in message."`
	Message     string     `json:"message"`
	Data        any        `json:"data" description:"webhook: the target's answer, parsed when it is JSON, else its text (null when empty); javascript: {code, context {contact {id, phone_number, name, profile_name}, user {id, name, email, role}, organization {id, name}}}; url: null."`
	Toast       *toastResp `json:"toast,omitempty"`
	RedirectURL string     `json:"redirect_url,omitempty" description:"url: a path of this service that redirects once, within 5 minutes, to the filled-in URL; it needs no credentials."`
}

// The javascript action's data, with the spec's names.
type (
	scriptResp struct {
		Code    string        `json:"code"`
		Context scriptContext `json:"context"`
	}
	scriptContext struct {
		Contact struct {
			ID          string `json:"id"`
			PhoneNumber string `json:"phone_number"`
			Name        string `json:"name"`
			ProfileName string `json:"profile_name"`
		} `json:"contact"`
		User struct {
			ID    string `json:"id"`
			Name  string `json:"name"`
			Email string `json:"email"`
			Role  string `json:"role"`
		} `json:"user"`
		Organization struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"organization"`
	}
)

func toExecuteResp(r *customactions.Result) executeResp {
	out := executeResp{Success: r.Success, Message: r.Message, Data: r.Data, RedirectURL: r.RedirectURL}
	if r.Toast != nil {
		out.Toast = &toastResp{Message: r.Toast.Message, Type: r.Toast.Type}
	}
	if s, ok := r.Data.(customactions.ScriptData); ok {
		var d scriptResp
		d.Code = s.Code
		c := s.Context
		d.Context.Contact.ID, d.Context.Contact.PhoneNumber = c.Contact.ID, c.Contact.PhoneNumber
		d.Context.Contact.Name, d.Context.Contact.ProfileName = c.Contact.Name, c.Contact.ProfileName
		d.Context.User.ID, d.Context.User.Name, d.Context.User.Email, d.Context.User.Role = c.User.ID, c.User.Name, c.User.Email, c.User.Role
		d.Context.Organization.ID, d.Context.Organization.Name = c.Organization.ID, c.Organization.Name
		out.Data = d
	}
	return out
}
