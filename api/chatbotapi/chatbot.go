package chatbotapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/chatbot"
)

func (h *Handlers) settings(c *gin.Context) {
	st, err := h.bot.Settings(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toSettingsResp(st))
}

func (h *Handlers) updateSettings(c *gin.Context) {
	var req settingsRequest
	if !web.BindJSON(c, &req) {
		return
	}
	st, err := h.bot.UpdateSettings(c.Request.Context(), web.Principal(c).OrgID, chatbot.SettingsInput(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toSettingsResp(st))
}

func (h *Handlers) rules(c *gin.Context) {
	rows, err := h.bot.Rules(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := web.Items[ruleResp]{Items: make([]ruleResp, len(rows))}
	for i, r := range rows {
		out.Items[i] = toRuleResp(r)
	}
	web.OK(c, out)
}

func (h *Handlers) createRule(c *gin.Context) {
	var req ruleRequest
	if !web.BindJSON(c, &req) {
		return
	}
	r, err := h.bot.CreateRule(c.Request.Context(), web.Principal(c).OrgID, chatbot.RuleInput(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toRuleResp(*r))
}

func (h *Handlers) updateRule(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req ruleRequest
	if !web.BindJSON(c, &req) {
		return
	}
	r, err := h.bot.UpdateRule(c.Request.Context(), web.Principal(c).OrgID, id, chatbot.RuleInput(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toRuleResp(*r))
}

func (h *Handlers) deleteRule(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.bot.DeleteRule(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Keyword rule deleted")
}

func (h *Handlers) contexts(c *gin.Context) {
	rows, err := h.bot.Contexts(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := web.Items[contextResp]{Items: make([]contextResp, len(rows))}
	for i, r := range rows {
		out.Items[i] = toContextResp(r)
	}
	web.OK(c, out)
}

func (h *Handlers) createContext(c *gin.Context) {
	var req contextRequest
	if !web.BindJSON(c, &req) {
		return
	}
	r, err := h.bot.CreateContext(c.Request.Context(), web.Principal(c).OrgID, chatbot.ContextInput(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toContextResp(*r))
}

func (h *Handlers) updateContext(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req contextRequest
	if !web.BindJSON(c, &req) {
		return
	}
	r, err := h.bot.UpdateContext(c.Request.Context(), web.Principal(c).OrgID, id, chatbot.ContextInput(req))
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toContextResp(*r))
}

func (h *Handlers) deleteContext(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.bot.DeleteContext(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "AI context deleted")
}

func (h *Handlers) flows(c *gin.Context) {
	rows, err := h.bot.Flows(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := web.Items[flowResp]{Items: make([]flowResp, len(rows))}
	for i, f := range rows {
		out.Items[i] = toFlowResp(f)
	}
	web.OK(c, out)
}

func (h *Handlers) flow(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	f, err := h.bot.Flow(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toFlowResp(*f))
}

func (h *Handlers) createFlow(c *gin.Context) {
	var req flowRequest
	if !web.BindJSON(c, &req) {
		return
	}
	f, err := h.bot.CreateFlow(c.Request.Context(), web.Principal(c).OrgID, req.toFlowInput())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toFlowResp(*f))
}

func (h *Handlers) updateFlow(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req flowRequest
	if !web.BindJSON(c, &req) {
		return
	}
	f, err := h.bot.UpdateFlow(c.Request.Context(), web.Principal(c).OrgID, id, req.toFlowInput())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toFlowResp(*f))
}

func (h *Handlers) deleteFlow(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.bot.DeleteFlow(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Flow deleted")
}

func (h *Handlers) sessions(c *gin.Context) {
	pg, ok := web.Paging(c, 20, 100)
	if !ok {
		return
	}
	orgID := web.Principal(c).OrgID
	rows, total, err := h.bot.Sessions(c.Request.Context(), orgID, pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, err := h.maskers.Masker(c.Request.Context(), orgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]sessionResp, len(rows))
	for i, s := range rows {
		items[i] = toSessionResp(m, s)
	}
	web.OK(c, web.NewPage(items, total, pg))
}

func (h *Handlers) session(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	orgID := web.Principal(c).OrgID
	s, err := h.bot.Session(c.Request.Context(), orgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, err := h.maskers.Masker(c.Request.Context(), orgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toSessionResp(m, *s))
}
