package cannedapi

import (
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/models"
)

type listQuery struct {
	Category   string `query:"category" description:"Only this category (greeting, support, sales, closing, general)."`
	Search     string `query:"search" description:"Text to look for in the name, content or shortcut."`
	ActiveOnly string `query:"active_only" description:"'true' for active responses only."`
}

// cannedRequest converts to canned.Input field for field; nil fields are
// unchanged.
type cannedRequest struct {
	Name     *string `json:"name"`
	Content  *string `json:"content"`
	Shortcut *string `json:"shortcut"`
	Category *string `json:"category"`
	IsActive *bool   `json:"is_active"`
}

type cannedResp struct {
	ID         uuid.UUID `json:"id"`
	Name       string    `json:"name"`
	Shortcut   string    `json:"shortcut"`
	Content    string    `json:"content"`
	Category   string    `json:"category"`
	IsActive   bool      `json:"is_active"`
	UsageCount int64     `json:"usage_count"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

func toCannedResp(r models.CannedResponse) cannedResp {
	return cannedResp{ID: r.ID, Name: r.Name, Shortcut: r.Shortcut, Content: r.Content, Category: r.Category, IsActive: r.IsActive,
		UsageCount: r.UsageCount, CreatedAt: web.UTC(r.CreatedAt), UpdatedAt: web.UTC(r.UpdatedAt)}
}

type listResp struct {
	CannedResponses []cannedResp `json:"canned_responses"`
}

// useRequest names the contact whose name and number fill the content.
type useRequest struct {
	ContactID *string `json:"contact_id"`
}

type useResp struct {
	Message    string `json:"message"`
	Content    string `json:"content"`
	UsageCount int64  `json:"usage_count"`
}
