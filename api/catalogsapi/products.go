package catalogsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
)

func (h *Handlers) products(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	rows, err := h.catalogs.Products(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, productsResp{Products: toProducts(rows)})
}

func (h *Handlers) createProduct(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req productRequest
	if !web.BindJSON(c, &req) {
		return
	}
	in, err := req.input()
	if err != nil {
		web.Fail(c, err)
		return
	}
	p, err := h.catalogs.CreateProduct(c.Request.Context(), web.Principal(c).OrgID, id, in)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toProductResp(p))
}

func (h *Handlers) getProduct(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	p, err := h.catalogs.Product(c.Request.Context(), web.Principal(c).OrgID, id)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toProductResp(p))
}

func (h *Handlers) updateProduct(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	var req productRequest
	if !web.BindJSON(c, &req) {
		return
	}
	in, err := req.input()
	if err != nil {
		web.Fail(c, err)
		return
	}
	p, err := h.catalogs.UpdateProduct(c.Request.Context(), web.Principal(c).OrgID, id, in)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, toProductResp(p))
}

func (h *Handlers) deleteProduct(c *gin.Context) {
	id, ok := web.PathID(c, "id")
	if !ok {
		return
	}
	if err := h.catalogs.DeleteProduct(c.Request.Context(), web.Principal(c).OrgID, id); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "Product deleted")
}
