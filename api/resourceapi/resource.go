package resourceapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/integration/docframe"
)

func (h *Handlers) list(c *gin.Context) {
	p := web.Principal(c)
	a, err := h.actor(c)
	if err != nil {
		fail(c, err)
		return
	}
	args, err := docframe.ListArgsFrom(c.Query)
	if err != nil {
		fail(c, err)
		return
	}
	rows, err := h.frame.List(c.Request.Context(), a, p.OrgID, c.Param("doctype"), args)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, listResp{Data: rows})
}

func (h *Handlers) get(c *gin.Context) {
	p := web.Principal(c)
	ctx, doctype, name := c.Request.Context(), c.Param("doctype"), c.Param("name")
	a, err := h.actor(c)
	if err != nil {
		fail(c, err)
		return
	}
	var doc map[string]any
	if doctype == docframe.DocTypeDoctype {
		doc, err = h.frame.GetDocType(ctx, a, p.OrgID, name)
	} else {
		doc, err = h.frame.Get(ctx, a, p.OrgID, doctype, name)
	}
	answer(c, http.StatusOK, doc, err)
}

func (h *Handlers) create(c *gin.Context) {
	in, err := readBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	a, err := h.actor(c)
	if err != nil {
		fail(c, err)
		return
	}
	p := web.Principal(c)
	ctx, doctype := c.Request.Context(), c.Param("doctype")
	var doc map[string]any
	if doctype == docframe.DocTypeDoctype {
		doc, err = h.frame.SaveDocType(ctx, a, p.OrgID, "", in, true)
	} else {
		doc, err = h.frame.Insert(ctx, a, p.OrgID, doctype, in)
	}
	answer(c, http.StatusCreated, doc, err)
}

func (h *Handlers) update(c *gin.Context) {
	in, err := readBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	a, err := h.actor(c)
	if err != nil {
		fail(c, err)
		return
	}
	p := web.Principal(c)
	ctx, doctype, name := c.Request.Context(), c.Param("doctype"), c.Param("name")
	var doc map[string]any
	if doctype == docframe.DocTypeDoctype {
		doc, err = h.frame.SaveDocType(ctx, a, p.OrgID, name, in, false)
	} else {
		doc, err = h.frame.Update(ctx, a, p.OrgID, doctype, name, in)
	}
	answer(c, http.StatusOK, doc, err)
}

func (h *Handlers) delete(c *gin.Context) {
	p := web.Principal(c)
	ctx, doctype, name := c.Request.Context(), c.Param("doctype"), c.Param("name")
	a, err := h.actor(c)
	if err != nil {
		fail(c, err)
		return
	}
	if doctype == docframe.DocTypeDoctype {
		err = h.frame.DeleteDocType(ctx, a, p.OrgID, name)
	} else {
		err = h.frame.Delete(ctx, a, p.OrgID, doctype, name)
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, okResp{Message: "ok"})
}

func (h *Handlers) submit(c *gin.Context) {
	p := web.Principal(c)
	a, err := h.actor(c)
	if err != nil {
		fail(c, err)
		return
	}
	doc, err := h.frame.Submit(c.Request.Context(), a, p.OrgID, c.Param("doctype"), c.Param("name"))
	answer(c, http.StatusOK, doc, err)
}

func (h *Handlers) cancel(c *gin.Context) {
	p := web.Principal(c)
	a, err := h.actor(c)
	if err != nil {
		fail(c, err)
		return
	}
	doc, err := h.frame.Cancel(c.Request.Context(), a, p.OrgID, c.Param("doctype"), c.Param("name"))
	answer(c, http.StatusOK, doc, err)
}

// runMethod is Frappe's POST /api/resource/{doctype}/{name} with
// run_method (in the body or the query): a method whitelisted on the
// DocType, whose other keys are its arguments.
func (h *Handlers) runMethod(c *gin.Context) {
	in, err := readBody(c)
	if err != nil {
		fail(c, err)
		return
	}
	method, _ := in["run_method"].(string)
	if method == "" {
		method = c.Query("run_method")
	}
	delete(in, "run_method")
	if method == "" {
		fail(c, docframe.Validationf("POST to a document needs run_method (a whitelisted method); use PUT to change it"))
		return
	}
	a, err := h.actor(c)
	if err != nil {
		fail(c, err)
		return
	}
	p := web.Principal(c)
	res, err := h.frame.RunMethod(c.Request.Context(), a, p.OrgID, c.Param("doctype"), c.Param("name"), method, in)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, runMethodResp{Data: res})
}

func answer(c *gin.Context, status int, doc map[string]any, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(status, docResp{Data: doc})
}

// readBody reads a document's fields as Frappe accepts them: a JSON
// object, the same wrapped as {"data": {...}} or {"data": "<json>"}, or a
// form whose data field holds the JSON (other form fields are taken as
// text). An empty body is no fields.
func readBody(c *gin.Context) (map[string]any, error) {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, web.MaxJSONBody)
	ct := c.ContentType()
	if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
		if err := c.Request.ParseMultipartForm(web.MaxJSONBody); err != nil && err != http.ErrNotMultipart {
			return nil, formError(err)
		}
		out := map[string]any{}
		for k, vs := range c.Request.PostForm {
			if len(vs) > 0 {
				out[k] = vs[0]
			}
		}
		return unwrapData(out), nil
	}
	raw, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return map[string]any{}, nil
	}
	out, ok := decodeObject(raw)
	if !ok {
		return nil, docframe.Validationf("request body must be a JSON object")
	}
	return unwrapData(out), nil
}

func formError(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return err
	}
	return docframe.Validationf("request body is not a valid form")
}

// unwrapData takes Frappe's {"data": {...}} (or its JSON text) apart.
func unwrapData(in map[string]any) map[string]any {
	if len(in) != 1 {
		return in
	}
	switch d := in["data"].(type) {
	case map[string]any:
		return d
	case string:
		if strings.HasPrefix(strings.TrimSpace(d), "{") {
			if obj, ok := decodeObject([]byte(d)); ok {
				return obj
			}
		}
	}
	return in
}

func decodeObject(raw []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out map[string]any
	if err := dec.Decode(&out); err != nil || out == nil || dec.More() {
		return nil, false
	}
	return out, true
}
