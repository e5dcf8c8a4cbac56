package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/apperr"
	"wharf/internal/templates"
	"wharf/models"
)

type templateResp struct {
	ID                 uuid.UUID        `json:"id"`
	AccountID          uuid.UUID        `json:"account_id"`
	ProviderTemplateID string           `json:"provider_template_id"`
	Name               string           `json:"name"`
	Language           string           `json:"language"`
	Status             string           `json:"status"`
	Category           string           `json:"category"`
	ParameterFormat    string           `json:"parameter_format"`
	Components         []map[string]any `json:"components"`
	SampleValues       []map[string]any `json:"sample_values"`
	RejectedReason     string           `json:"rejected_reason"`
	CreatedAt          time.Time        `json:"created_at"`
	UpdatedAt          time.Time        `json:"updated_at"`
}

func toTemplateResp(t *models.Template) templateResp {
	r := templateResp{ID: t.ID, AccountID: t.AccountID, ProviderTemplateID: t.ProviderTemplateID, Name: t.Name, Language: t.Language,
		Status: t.Status, Category: t.Category, ParameterFormat: t.ParameterFormat, Components: t.Components.V,
		SampleValues: t.SampleValues.V, RejectedReason: t.RejectedReason, CreatedAt: utc(t.CreatedAt), UpdatedAt: utc(t.UpdatedAt)}
	if r.Components == nil {
		r.Components = []map[string]any{}
	}
	if r.SampleValues == nil {
		r.SampleValues = []map[string]any{}
	}
	return r
}

func (s *Server) listTemplates(c *gin.Context) {
	pg, valid := s.page(c, 20, 100)
	if !valid {
		return
	}
	accountID, valid := s.queryUUID(c, "account_id")
	if !valid {
		return
	}
	f := templates.Filter{Status: c.Query("status"), Category: c.Query("category"), Search: c.Query("search"), AccountID: accountID}
	rows, total, err := s.Templates.List(c.Request.Context(), principal(c).OrgID, f, pg)
	if err != nil {
		s.fail(c, err)
		return
	}
	items := make([]templateResp, len(rows))
	for i := range rows {
		items[i] = toTemplateResp(&rows[i])
	}
	ok(c, http.StatusOK, gin.H{"items": items, "total": total, "page": pg.Page, "limit": pg.Limit})
}

func (s *Server) getTemplate(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	t, err := s.Templates.Get(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toTemplateResp(t))
}

func (s *Server) createTemplate(c *gin.Context) {
	var req struct {
		AccountID       *string                 `json:"account_id"`
		Name            string                  `json:"name"`
		Language        string                  `json:"language"`
		Category        string                  `json:"category"`
		ParameterFormat string                  `json:"parameter_format"`
		Components      []map[string]any        `json:"components"`
		SampleValues    []templates.SampleValue `json:"sample_values"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	accountID, err := optionalUUID("account_id", req.AccountID)
	if err != nil {
		s.fail(c, err)
		return
	}
	t, err := s.Templates.Create(c.Request.Context(), principal(c).OrgID, templates.Input{AccountID: accountID, Name: req.Name,
		Language: req.Language, Category: req.Category, ParameterFormat: req.ParameterFormat, Components: req.Components,
		SampleValues: req.SampleValues})
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, toTemplateResp(t))
}

func (s *Server) updateTemplate(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req struct {
		Components   []map[string]any         `json:"components"`
		SampleValues *[]templates.SampleValue `json:"sample_values"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	t, err := s.Templates.Update(c.Request.Context(), principal(c).OrgID, id, req.Components, req.SampleValues)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toTemplateResp(t))
}

func (s *Server) deleteTemplate(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	if err := s.Templates.Delete(c.Request.Context(), principal(c).OrgID, id); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "template deleted")
}

func (s *Server) publishTemplate(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	t, err := s.Templates.Publish(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"id": t.ID, "status": t.Status})
}

// syncWait is how long the sync endpoint waits for the job before answering
// 202 with the task id.
const syncWait = 25 * time.Second

// syncTemplates runs the template:sync job and answers its counts; a sync
// that takes longer is reported as queued (the job finishes on its own).
func (s *Server) syncTemplates(c *gin.Context) {
	var req struct {
		AccountID *string `json:"account_id"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	accountID, err := optionalUUID("account_id", req.AccountID)
	if err != nil || accountID == nil {
		s.fail(c, apperr.Invalidf("account_id is required (a UUID)"))
		return
	}
	res, taskID, done, err := s.Templates.RequestSync(c.Request.Context(), principal(c).OrgID, *accountID, syncWait)
	switch {
	case err != nil:
		s.fail(c, err)
	case !done:
		ok(c, http.StatusAccepted, gin.H{"status": "queued", "task_id": taskID})
	default:
		ok(c, http.StatusOK, gin.H{"synced": res.Synced, "new": res.New, "updated": res.Updated})
	}
}
