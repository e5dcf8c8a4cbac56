package settingsapi

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"wharf/api/web"
	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
)

func (h *Handlers) getShort(c *gin.Context) {
	name, st, err := h.settings.Get(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	var r shortSettingsResp
	r.Name = name
	r.Settings.MaskPhoneNumbers, r.Settings.Timezone, r.Settings.DateFormat = st.MaskPhoneNumbers, st.Timezone, st.DateFormat
	r.Settings.SelfRegistrationEnabled = st.SelfRegistrationEnabled
	web.OK(c, r)
}

func (h *Handlers) putShort(c *gin.Context) {
	var req shortSettingsRequest
	if !web.BindJSON(c, &req) {
		return
	}
	err := h.settings.Apply(c.Request.Context(), web.Principal(c).OrgID, orgsettings.Update{Name: req.Name, MaskPhoneNumbers: req.MaskPhoneNumbers,
		Timezone: req.Timezone, DateFormat: req.DateFormat, SelfRegistrationEnabled: req.SelfRegistrationEnabled})
	if err != nil {
		web.Fail(c, err)
		return
	}
	h.getShort(c)
}

func (h *Handlers) get(c *gin.Context) {
	name, st, err := h.settings.Get(c.Request.Context(), web.Principal(c).OrgID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.OK(c, settingsResp{Name: name, Settings: settingsView(st)})
}

func (h *Handlers) put(c *gin.Context) {
	var req settingsRequest
	if !web.BindJSON(c, &req) {
		return
	}
	if err := h.settings.Apply(c.Request.Context(), web.Principal(c).OrgID, orgsettings.Update(req)); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "settings updated")
}

// uploadAudio takes multipart `type` (form or query) and `file`.
func (h *Handlers) uploadAudio(c *gin.Context) {
	// Room for the 5 MB file plus the multipart framing; anything bigger is
	// cut off here, before it is buffered.
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, orgsettings.MaxAudioUpload+64<<10)
	kind := c.PostForm("type")
	if kind == "" {
		kind = c.Query("type")
	}
	fh, err := c.FormFile("file")
	if err != nil {
		var maxBytes *http.MaxBytesError
		if errors.As(err, &maxBytes) {
			web.Fail(c, apperr.Invalidf("file is larger than 5 MB"))
			return
		}
		web.Fail(c, apperr.Invalidf("file is required (multipart/form-data field 'file')"))
		return
	}
	if kind != orgsettings.HoldMusic && kind != orgsettings.Ringback {
		web.Fail(c, apperr.Invalidf("type must be hold_music or ringback"))
		return
	}
	if fh.Size > orgsettings.MaxAudioUpload {
		web.Fail(c, apperr.Invalidf("file is larger than 5 MB"))
		return
	}
	f, err := fh.Open()
	if err != nil {
		web.Fail(c, err)
		return
	}
	defer f.Close()
	res, err := h.settings.UploadAudio(c.Request.Context(), web.Principal(c).OrgID, kind, f)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toAudioResp(res))
}
