package widgetsapi

import (
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/widgets"
)

func (h *Handlers) list(c *gin.Context) {
	who := caller(c)
	rows, err := h.widgets.List(c.Request.Context(), who)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := listResp{Widgets: make([]widgetResp, len(rows))}
	for i, w := range rows {
		out.Widgets[i] = toWidgetResp(w, who.UserID)
	}
	web.OK(c, out)
}

func (h *Handlers) get(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	who := caller(c)
	w, err := h.widgets.Get(c.Request.Context(), who, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toWidgetResp(*w, who.UserID))
}

func (h *Handlers) create(c *gin.Context) {
	var req widgetRequest
	if !web.BindJSON(c, &req) {
		return
	}
	who := caller(c)
	w, err := h.widgets.Create(c.Request.Context(), who, req.input())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toWidgetResp(*w, who.UserID))
}

func (h *Handlers) update(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req widgetRequest
	if !web.BindJSON(c, &req) {
		return
	}
	who := caller(c)
	w, err := h.widgets.Update(c.Request.Context(), who, id, req.input())
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toWidgetResp(*w, who.UserID))
}

func (h *Handlers) delete(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.widgets.Delete(c.Request.Context(), caller(c), id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Widget deleted")
}

func (h *Handlers) layout(c *gin.Context) {
	var req layoutRequest
	if !web.BindJSON(c, &req) {
		return
	}
	ps := make([]widgets.Placement, len(req.Layout))
	for i, p := range req.Layout {
		id, err := uuid.Parse(p.ID)
		if err != nil {
			web.Fail(c, apperr.Invalidf("layout[%d].id is not a valid id", i))
			return
		}
		ps[i] = widgets.Placement{ID: id, GridX: p.GridX, GridY: p.GridY, GridW: p.GridW, GridH: p.GridH}
	}
	if err := h.widgets.Layout(c.Request.Context(), caller(c), ps); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Layout saved")
}

func (h *Handlers) dataSources(c *gin.Context) {
	out := dataSourcesResp{Metrics: widgets.Metrics, DisplayTypes: widgets.DisplayTypes, ChartTypes: widgets.ChartTypes, Sizes: widgets.Sizes}
	for _, s := range widgets.Sources() {
		num := s.NumericFields
		if num == nil {
			num = []string{}
		}
		out.DataSources = append(out.DataSources, sourceResp{Name: s.Name, Label: s.Label, Fields: s.Fields, NumericFields: num})
	}
	for _, o := range widgets.Operators {
		out.Operators = append(out.Operators, operatorResp{Value: o.Value, Label: o.Label})
	}
	web.OK(c, out)
}

// period reads from and to; it answers 400 itself.
func period(c *gin.Context) (widgets.Period, bool) {
	p, err := widgets.ParsePeriod(c.Query("from"), c.Query("to"), time.Now())
	if err != nil {
		web.Fail(c, err)
		return p, false
	}
	return p, true
}

func (h *Handlers) data(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	p, ok := period(c)
	if !ok {
		return
	}
	d, err := h.widgets.WidgetData(c.Request.Context(), caller(c), id, p)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toDataResp(d, p))
}

func (h *Handlers) allData(c *gin.Context) {
	p, ok := period(c)
	if !ok {
		return
	}
	all, err := h.widgets.AllData(c.Request.Context(), caller(c), p)
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := allDataResp{Data: make(map[string]dataResp, len(all))}
	for id, d := range all {
		out.Data[id.String()] = toDataResp(d, p)
	}
	web.OK(c, out)
}

func (h *Handlers) overview(c *gin.Context) {
	o, err := h.widgets.Overview(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toOverviewResp(o))
}
