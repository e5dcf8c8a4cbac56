package settingsapi

import (
	"mime/multipart"

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

type shortSettingsRequest struct {
	Name                    *string `json:"name"`
	MaskPhoneNumbers        *bool   `json:"mask_phone_numbers"`
	Timezone                *string `json:"timezone"`
	DateFormat              *string `json:"date_format"`
	SelfRegistrationEnabled *bool   `json:"self_registration_enabled"`
}

// settingsResp is the /api/org/settings view.
type settingsResp struct {
	Name     string       `json:"name"`
	Settings settingsView `json:"settings"`
}

type settingsView struct {
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
	// OptOutKeywords: an incoming message that is exactly one of them
	// (trimmed, any case) opts its contact out of marketing templates.
	OptOutKeywords []string `json:"opt_out_keywords"`
	// OptInKeywords opt the contact back in.
	OptInKeywords []string `json:"opt_in_keywords"`
	// OptOutConfirmation is sent in answer to an opt-out keyword ("": none).
	OptOutConfirmation string `json:"opt_out_confirmation"`
	// OptInConfirmation is sent in answer to an opt-in keyword ("": none).
	OptInConfirmation string `json:"opt_in_confirmation"`
}

// settingsRequest converts to orgsettings.Update field for field.
type settingsRequest struct {
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
	// OptOutKeywords replaces the opt-out keywords: 1 to 20 words of at
	// most 30 characters, none twice, none also an opt-in keyword.
	OptOutKeywords *[]string `json:"opt_out_keywords"`
	// OptInKeywords replaces the opt-in keywords: 0 to 20 words, same rules.
	OptInKeywords *[]string `json:"opt_in_keywords"`
	// OptOutConfirmation: at most 1024 characters; "" sends none.
	OptOutConfirmation *string `json:"opt_out_confirmation"`
	// OptInConfirmation: at most 1024 characters; "" sends none.
	OptInConfirmation *string `json:"opt_in_confirmation"`
}

// audioUploadForm is the multipart body of POST /api/org/audio (type may
// also come as a query parameter).
type audioUploadForm struct {
	Type string                `formData:"type" description:"hold_music or ringback"`
	File *multipart.FileHeader `formData:"file" description:"The audio file, at most 5 MB."`
}

type audioQuery struct {
	Type string `query:"type" description:"hold_music or ringback, when the form has no type field."`
}

type audioResp struct {
	Filename string `json:"filename"`
	Type     string `json:"type"`
	MIMEType string `json:"mime_type"`
	Size     int64  `json:"size"`
}

func toAudioResp(f *orgsettings.AudioFile) audioResp {
	return audioResp{Filename: f.Filename, Type: f.Type, MIMEType: f.MIMEType, Size: f.Size}
}
