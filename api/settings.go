package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"wharf/internal/apperr"
	"wharf/internal/orgsettings"
)

// shortSettingsResp is the /api/organizations/settings view.
type shortSettingsResp struct {
	Name     string `json:"name"`
	Settings struct {
		MaskPhoneNumbers        bool   `json:"mask_phone_numbers"`
		Timezone                string `json:"timezone"`
		DateFormat              string `json:"date_format"`
		SelfRegistrationEnabled bool   `json:"self_registration_enabled"`
	} `json:"settings"`
}

func (s *Server) getOrgSettingsShort(c *gin.Context) {
	name, st, err := s.settings.Get(c.Request.Context(), principal(c).OrgID)
	if err != nil {
		s.fail(c, err)
		return
	}
	var r shortSettingsResp
	r.Name = name
	r.Settings.MaskPhoneNumbers, r.Settings.Timezone, r.Settings.DateFormat = st.MaskPhoneNumbers, st.Timezone, st.DateFormat
	r.Settings.SelfRegistrationEnabled = st.SelfRegistrationEnabled
	ok(c, http.StatusOK, r)
}

func (s *Server) putOrgSettingsShort(c *gin.Context) {
	var req struct {
		Name                    *string `json:"name"`
		MaskPhoneNumbers        *bool   `json:"mask_phone_numbers"`
		Timezone                *string `json:"timezone"`
		DateFormat              *string `json:"date_format"`
		SelfRegistrationEnabled *bool   `json:"self_registration_enabled"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	err := s.settings.Apply(c.Request.Context(), principal(c).OrgID, orgsettings.Update{Name: req.Name, MaskPhoneNumbers: req.MaskPhoneNumbers,
		Timezone: req.Timezone, DateFormat: req.DateFormat, SelfRegistrationEnabled: req.SelfRegistrationEnabled})
	if err != nil {
		s.fail(c, err)
		return
	}
	s.getOrgSettingsShort(c)
}

type settingsResp struct {
	MaskPhoneNumbers     bool   `json:"mask_phone_numbers"`
	Timezone             string `json:"timezone"`
	DateFormat           string `json:"date_format"`
	CallingEnabled       bool   `json:"calling_enabled"`
	MaxCallDuration      int    `json:"max_call_duration"`
	TransferTimeoutSecs  int    `json:"transfer_timeout_secs"`
	HoldMusicFile        string `json:"hold_music_file"`
	RingbackFile         string `json:"ringback_file"`
	ProviderAppID        string `json:"provider_app_id"`
	ProviderConfigID     string `json:"provider_config_id"`
	HasProviderAppSecret bool   `json:"has_provider_app_secret"`
	// SelfRegistrationEnabled: whether POST /api/auth/register accepts
	// this organization.
	SelfRegistrationEnabled bool `json:"self_registration_enabled"`
}

func (s *Server) getOrgSettings(c *gin.Context) {
	name, st, err := s.settings.Get(c.Request.Context(), principal(c).OrgID)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"name": name, "settings": settingsResp(st)})
}

func (s *Server) putOrgSettings(c *gin.Context) {
	var req struct {
		Name                *string `json:"name"`
		MaskPhoneNumbers    *bool   `json:"mask_phone_numbers"`
		Timezone            *string `json:"timezone"`
		DateFormat          *string `json:"date_format"`
		CallingEnabled      *bool   `json:"calling_enabled"`
		MaxCallDuration     *int    `json:"max_call_duration"`
		TransferTimeoutSecs *int    `json:"transfer_timeout_secs"`
		HoldMusicFile       *string `json:"hold_music_file"`
		RingbackFile        *string `json:"ringback_file"`
		ProviderAppID       *string `json:"provider_app_id"`
		ProviderConfigID    *string `json:"provider_config_id"`
		ProviderAppSecret   *string `json:"provider_app_secret"`
		// SelfRegistrationEnabled needs only settings:update, the route's
		// permission.
		SelfRegistrationEnabled *bool `json:"self_registration_enabled"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	if err := s.settings.Apply(c.Request.Context(), principal(c).OrgID, orgsettings.Update(req)); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "settings updated")
}

// uploadAudio takes multipart `type` (form or query) and `file`.
func (s *Server) uploadAudio(c *gin.Context) {
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
			s.fail(c, apperr.Invalidf("file is larger than 5 MB"))
			return
		}
		s.fail(c, apperr.Invalidf("file is required (multipart/form-data field 'file')"))
		return
	}
	if kind != orgsettings.HoldMusic && kind != orgsettings.Ringback {
		s.fail(c, apperr.Invalidf("type must be hold_music or ringback"))
		return
	}
	if fh.Size > orgsettings.MaxAudioUpload {
		s.fail(c, apperr.Invalidf("file is larger than 5 MB"))
		return
	}
	f, err := fh.Open()
	if err != nil {
		s.fail(c, err)
		return
	}
	defer f.Close()
	res, err := s.settings.UploadAudio(c.Request.Context(), principal(c).OrgID, kind, f)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, gin.H{"filename": res.Filename, "type": res.Type, "mime_type": res.MIMEType, "size": res.Size})
}
