package campaignsapi

import (
	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/campaigns"
)

// maxImportBody bounds a recipients import (50,000 recipients with some
// extra fields fit comfortably).
const maxImportBody = 32 << 20

func (h *Handlers) importRecipients(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req importRequest
	if !web.BindJSONLimit(c, &req, maxImportBody) {
		return
	}
	res, err := h.campaigns.Import(c.Request.Context(), web.Principal(c).OrgID, id, req.Recipients)
	if err != nil {
		web.Fail(c, err)
		return
	}
	rows := res.InvalidRows
	if rows == nil {
		rows = []campaigns.InvalidRow{}
	}
	web.OK(c, importResp{Imported: res.Imported, Duplicates: res.Duplicates, Invalid: res.Invalid, InvalidRows: rows})
}

func (h *Handlers) listRecipients(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	pg, valid := web.Paging(c, 50, 500)
	if !valid {
		return
	}
	ctx, org := c.Request.Context(), web.Principal(c).OrgID
	rows, total, err := h.campaigns.Recipients(ctx, org, id, c.Query("status"), pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	m, err := h.maskers.Masker(ctx, org)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]recipientResp, len(rows))
	for i, r := range rows {
		items[i] = toRecipientResp(m, r)
	}
	web.OK(c, web.NewPage(items, total, pg))
}
