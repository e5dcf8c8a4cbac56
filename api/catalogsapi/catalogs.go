package catalogsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
)

func (h *Handlers) list(c *gin.Context) {
	rows, err := h.catalogs.List(c.Request.Context(), web.Principal(c).OrgID, c.Query("platform_account"))
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := listResp{Catalogs: make([]catalogResp, len(rows))}
	for i := range rows {
		out.Catalogs[i] = toCatalogResp(&rows[i])
	}
	web.OK(c, out)
}

func (h *Handlers) get(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	ctx, org := c.Request.Context(), web.Principal(c).OrgID
	cat, err := h.catalogs.Get(ctx, org, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	products, err := h.catalogs.Products(ctx, org, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, catalogDetail{catalogResp: toCatalogResp(cat), Products: toProducts(products)})
}

func (h *Handlers) create(c *gin.Context) {
	var req createCatalogRequest
	if !web.BindJSON(c, &req) {
		return
	}
	cat, err := h.catalogs.CreateCatalog(c.Request.Context(), web.Principal(c).OrgID, req.PlatformAccount, req.Name)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toCatalogResp(cat))
}

func (h *Handlers) delete(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.catalogs.DeleteCatalog(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Catalog deleted")
}

func (h *Handlers) sync(c *gin.Context) {
	var req syncRequest
	if !web.BindJSON(c, &req) {
		return
	}
	res, err := h.catalogs.Sync(c.Request.Context(), web.Principal(c).OrgID, req.PlatformAccount)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, syncResp{Message: "Catalogs synced", Synced: res.Synced, Total: res.Total})
}
