package platform

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
)

// SignatureHeader carries the HMAC-SHA256 of a webhook body.
const SignatureHeader = "X-Hub-Signature-256"

// Sign returns the X-Hub-Signature-256 value of body under secret.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifySignature checks header against body in constant time.
func VerifySignature(secret string, body []byte, header string) bool {
	if secret == "" || !strings.HasPrefix(header, "sha256=") {
		return false
	}
	got, err := hex.DecodeString(strings.TrimPrefix(header, "sha256="))
	if err != nil {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// WebhookPayload is the envelope of every provider webhook.
type WebhookPayload struct {
	Object string         `json:"object"`
	Entry  []WebhookEntry `json:"entry"`
}

// WebhookEntry groups the changes of one business account.
type WebhookEntry struct {
	ID      string          `json:"id"` // business account id
	Changes []WebhookChange `json:"changes"`
}

// WebhookChange is one change; Field says how to read Value.
type WebhookChange struct {
	Field string          `json:"field"`
	Value json.RawMessage `json:"value"`
}

// Change fields the service handles.
const (
	FieldMessages       = "messages"
	FieldTemplateStatus = "message_template_status_update"
	FieldCalls          = "calls"
)

// MessagesValue is the value of a "messages" change: incoming messages and
// their senders, or statuses of our messages.
type MessagesValue struct {
	MessagingProduct string `json:"messaging_product"`
	Metadata         struct {
		DisplayPhoneNumber string `json:"display_phone_number"`
		PhoneNumberID      string `json:"phone_number_id"`
	} `json:"metadata"`
	Contacts []WebhookContact  `json:"contacts"`
	Messages []IncomingMessage `json:"messages"`
	Statuses []Status          `json:"statuses"`
}

// WebhookContact is a sender's profile.
type WebhookContact struct {
	Profile struct {
		Name string `json:"name"`
	} `json:"profile"`
	WaID string `json:"wa_id"`
}

// IncomingMessage is a message from a user. Type-specific content stays raw
// in Raw so that every type, including ones we do not know, is stored.
type IncomingMessage struct {
	From      string `json:"from"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Text      *struct {
		Body string `json:"body"`
	} `json:"text,omitempty"`
	Context *struct {
		From string `json:"from"`
		ID   string `json:"id"`
	} `json:"context,omitempty"`
	Interactive *struct {
		Type        string `json:"type"`
		ButtonReply *struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"button_reply,omitempty"`
		ListReply *struct {
			ID          string `json:"id"`
			Title       string `json:"title"`
			Description string `json:"description"`
		} `json:"list_reply,omitempty"`
		NFMReply *struct {
			Name         string `json:"name"`
			Body         string `json:"body"`
			ResponseJSON string `json:"response_json"`
		} `json:"nfm_reply,omitempty"`
	} `json:"interactive,omitempty"`
	Button *struct {
		Payload string `json:"payload"`
		Text    string `json:"text"`
	} `json:"button,omitempty"`
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw message next to the decoded fields.
func (m *IncomingMessage) UnmarshalJSON(b []byte) error {
	type plain IncomingMessage
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = IncomingMessage(p)
	m.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// Status is a delivery status of one of our messages.
type Status struct {
	ID                    string        `json:"id"`
	Status                string        `json:"status"`
	Timestamp             string        `json:"timestamp"`
	RecipientID           string        `json:"recipient_id"`
	BizOpaqueCallbackData string        `json:"biz_opaque_callback_data"`
	Errors                []StatusError `json:"errors"`
}

// StatusError explains a failed status.
type StatusError struct {
	Code      int    `json:"code"`
	Title     string `json:"title"`
	Message   string `json:"message"`
	ErrorData struct {
		Details string `json:"details"`
	} `json:"error_data"`
}

// TemplateStatusValue is the value of a template status change. The id is a
// JSON number in this webhook.
type TemplateStatusValue struct {
	Event                   string      `json:"event"`
	MessageTemplateID       json.Number `json:"message_template_id"`
	MessageTemplateName     string      `json:"message_template_name"`
	MessageTemplateLanguage string      `json:"message_template_language"`
	Reason                  string      `json:"reason"`
}
