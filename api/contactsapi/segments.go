package contactsapi

import (
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/contacts"
	"wharf/models"
)

type segmentRequest struct {
	Name        *string          `json:"name" description:"Unique in the organization, at most 100 characters."`
	Description *string          `json:"description" description:"At most 1000 characters."`
	Filter      *models.Audience `json:"filter" description:"The contacts the segment selects (no segment_id inside)."`
}

type segmentResp struct {
	ID          uuid.UUID       `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Filter      models.Audience `json:"filter"`
	CreatedBy   *uuid.UUID      `json:"created_by"`
	CreatedAt   time.Time       `json:"created_at"`
	UpdatedAt   time.Time       `json:"updated_at"`
}

type segmentsQuery struct {
	web.PageQuery
}

type countResp struct {
	// Count: the contacts the audience selects now.
	Count int64 `json:"count"`
}

func toSegmentResp(s *contacts.Segment) segmentResp {
	return segmentResp{ID: s.ID, Name: s.Name, Description: s.Description, Filter: s.Filter.V, CreatedBy: s.CreatedBy,
		CreatedAt: web.UTC(s.CreatedAt), UpdatedAt: web.UTC(s.UpdatedAt)}
}

func (r segmentRequest) input() contacts.SegmentInput {
	return contacts.SegmentInput{Name: r.Name, Description: r.Description, Filter: r.Filter}
}

func (h *Handlers) countAudience(c *gin.Context) {
	var req models.Audience
	if !web.BindJSONStrict(c, &req) {
		return
	}
	n, err := h.contacts.CountAudience(c.Request.Context(), web.Principal(c).OrgID, &req)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, countResp{Count: n})
}

func (h *Handlers) listSegments(c *gin.Context) {
	pg, valid := web.Paging(c, 50, 200)
	if !valid {
		return
	}
	rows, total, err := h.contacts.Segments(c.Request.Context(), web.Principal(c).OrgID, pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]segmentResp, len(rows))
	for i := range rows {
		items[i] = toSegmentResp(&rows[i])
	}
	web.OK(c, web.NewPage(items, total, pg))
}

func (h *Handlers) getSegment(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	s, err := h.contacts.GetSegment(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toSegmentResp(s))
}

func (h *Handlers) createSegment(c *gin.Context) {
	var req segmentRequest
	if !web.BindJSONStrict(c, &req) {
		return
	}
	p := web.Principal(c)
	s, err := h.contacts.CreateSegment(c.Request.Context(), p.OrgID, p.UserID, req.input())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toSegmentResp(s))
}

func (h *Handlers) updateSegment(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req segmentRequest
	if !web.BindJSONStrict(c, &req) {
		return
	}
	s, err := h.contacts.UpdateSegment(c.Request.Context(), web.Principal(c).OrgID, id, req.input())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toSegmentResp(s))
}

func (h *Handlers) deleteSegment(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if err := h.contacts.DeleteSegment(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, web.MessageResp{Message: "segment deleted"})
}
