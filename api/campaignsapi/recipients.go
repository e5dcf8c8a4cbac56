package campaignsapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/campaigns"
	"wharf/internal/infra/apperr"
)

// maxImportBody bounds a recipients import (50,000 recipients with some
// extra fields fit comfortably).
const maxImportBody = 32 << 20

func (h *Handlers) importRecipients(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	if isMultipart(c) {
		h.importCSV(c, id)
		return
	}
	recipients, err := readRecipients(c)
	if err != nil {
		web.Fail(c, err)
		return
	}
	res, err := h.campaigns.Import(c.Request.Context(), web.Principal(c).OrgID, id, recipients)
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

// readRecipients reads the body {"recipients": [...]} as a stream, one
// recipient at a time, each checked as it is read: at most MaxImport of
// them, each at most MaxRecipientBytes of JSON and MaxRecipientFields
// fields. A recipient past a bound is refused before the rest of the body is
// parsed (one recipient of a million fields would otherwise become a map of
// a million entries first). Other keys of the object are ignored, as
// encoding/json does; a body over maxImportBody is a 413.
func readRecipients(c *gin.Context) ([]campaigns.RecipientInput, error) {
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, maxImportBody))
	bad := func(err error) error {
		var maxBytes *http.MaxBytesError
		switch {
		case errors.As(err, &maxBytes):
			return err
		case errors.Is(err, io.EOF):
			return apperr.Invalidf("request body must be a JSON object")
		}
		return apperr.Invalidf("request body is not valid JSON")
	}
	if tok, err := dec.Token(); err != nil {
		return nil, bad(err)
	} else if tok != json.Delim('{') {
		return nil, apperr.Invalidf("request body must be a JSON object")
	}
	var out []campaigns.RecipientInput
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil, bad(err)
		}
		if key != "recipients" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, bad(err)
			}
			continue
		}
		tok, err := dec.Token()
		switch {
		case err != nil:
			return nil, bad(err)
		case tok == nil: // null: none
			continue
		case tok != json.Delim('['):
			return nil, apperr.Invalidf("recipients must be of type array")
		}
		out = out[:0]
		for i := 0; dec.More(); i++ {
			if i == campaigns.MaxImport {
				return nil, apperr.Invalidf("at most %d recipients per import; split the list", campaigns.MaxImport)
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return nil, bad(err)
			}
			if len(raw) > campaigns.MaxRecipientBytes {
				return nil, campaigns.RecipientTooLarge(i)
			}
			var r campaigns.RecipientInput
			if err := json.Unmarshal(raw, &r); err != nil { // not an object (null is none)
				return nil, apperr.Invalidf("recipients[%d] must be of type object", i)
			}
			if len(r) > campaigns.MaxRecipientFields {
				return nil, campaigns.RecipientTooWide(i)
			}
			out = append(out, r)
		}
		if _, err := dec.Token(); err != nil { // ]
			return nil, bad(err)
		}
	}
	if _, err := dec.Token(); err != nil { // }
		return nil, bad(err)
	}
	return out, nil
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
