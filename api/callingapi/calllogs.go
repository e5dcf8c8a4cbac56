package callingapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/calling"
	"wharf/models"
)

func (h *Handlers) listCallLogs(c *gin.Context) {
	pg, ok := web.Paging(c, 20, 100)
	if !ok {
		return
	}
	contactID, ok := web.QueryUUID(c, "contact_id")
	if !ok {
		return
	}
	flowID, ok := web.QueryUUID(c, "ivr_flow_id")
	if !ok {
		return
	}
	f := calling.CallLogFilter{Status: c.Query("status"), Account: c.Query("account"), ContactID: contactID,
		Direction: c.Query("direction"), IVRFlowID: flowID, Phone: c.Query("phone"), StartDate: c.Query("start_date"),
		EndDate: c.Query("end_date")}
	rows, total, err := h.calls.ListCallLogs(c.Request.Context(), web.Principal(c).OrgID, f, pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, ok := h.masker(c)
	if !ok {
		return
	}
	out := callLogsResp{CallLogs: make([]callLogResp, len(rows)), Total: total, Page: pg.Page, Limit: pg.Limit}
	for i := range rows {
		out.CallLogs[i] = toCallLogResp(m, &rows[i])
	}
	web.OK(c, out)
}

func (h *Handlers) getCallLog(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	d, err := h.calls.GetCallLog(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, ok := h.masker(c)
	if !ok {
		return
	}
	web.OK(c, callLogDetail{CallLog: toCallLogResp(m, &d.CallLogView), Transfers: toTransfers(m, d.Transfers)})
}

func (h *Handlers) recording(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	url, exp, dur, err := h.calls.RecordingURL(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, recordingResp{URL: url, Duration: dur, ExpiresAt: web.UTC(exp)})
}

func (h *Handlers) hold(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.calls.Hold(c.Request.Context(), caller(c), id); err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, statusResp{Status: models.CallOnHold})
}

func (h *Handlers) resume(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.calls.Resume(c.Request.Context(), caller(c), id); err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, statusResp{Status: models.CallConnected})
}
