package platform

import (
	"context"
	"fmt"
)

// Creds are what a call needs to act for one account.
type Creds struct {
	AccessToken       string
	PhoneNumberID     string
	BusinessAccountID string
}

// Message is one outbound message. Exactly one of the type fields is set,
// matching Type.
type Message struct {
	MessagingProduct string `json:"messaging_product"`
	RecipientType    string `json:"recipient_type"`
	To               string `json:"to"`
	Type             string `json:"type"`

	Text        *Text        `json:"text,omitempty"`
	Image       *Media       `json:"image,omitempty"`
	Video       *Media       `json:"video,omitempty"`
	Audio       *Media       `json:"audio,omitempty"`
	Document    *Media       `json:"document,omitempty"`
	Sticker     *Media       `json:"sticker,omitempty"`
	Template    *Template    `json:"template,omitempty"`
	Interactive *Interactive `json:"interactive,omitempty"`
	Context     *Context     `json:"context,omitempty"`

	// BizOpaqueCallbackData is echoed by the provider in every status
	// webhook of the message; we put our message id there so that a send
	// whose answer was lost can still be matched to its statuses.
	BizOpaqueCallbackData string `json:"biz_opaque_callback_data,omitempty"`
}

// Text is a text body.
type Text struct {
	Body       string `json:"body"`
	PreviewURL bool   `json:"preview_url"`
}

// Media is media by link (or by uploaded id).
type Media struct {
	Link     string `json:"link,omitempty"`
	ID       string `json:"id,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
}

// Context makes a message a reply.
type Context struct {
	MessageID string `json:"message_id"`
}

// Template is a template message.
type Template struct {
	Name       string              `json:"name"`
	Language   TemplateLanguage    `json:"language"`
	Components []TemplateComponent `json:"components,omitempty"`
}

// TemplateLanguage names the template's language.
type TemplateLanguage struct {
	Code string `json:"code"`
}

// TemplateComponent fills one component's parameters.
type TemplateComponent struct {
	Type       string              `json:"type"`               // header, body, button
	SubType    string              `json:"sub_type,omitempty"` // url, quick_reply (buttons)
	Index      string              `json:"index,omitempty"`    // button position
	Parameters []TemplateParameter `json:"parameters"`
}

// TemplateParameter is one value of a component.
type TemplateParameter struct {
	Type          string `json:"type"` // text, image, video, document, payload
	ParameterName string `json:"parameter_name,omitempty"`
	Text          string `json:"text,omitempty"`
	Payload       string `json:"payload,omitempty"`
	Image         *Media `json:"image,omitempty"`
	Video         *Media `json:"video,omitempty"`
	Document      *Media `json:"document,omitempty"`
}

// Interactive is an interactive message (button, list, cta_url, flow,
// call_permission_request).
type Interactive struct {
	Type   string             `json:"type"`
	Header *InteractiveHeader `json:"header,omitempty"`
	Body   *InteractiveText   `json:"body,omitempty"`
	Footer *InteractiveText   `json:"footer,omitempty"`
	Action InteractiveAction  `json:"action"`
}

// InteractiveHeader is an optional text header.
type InteractiveHeader struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

// InteractiveText is a body or footer.
type InteractiveText struct {
	Text string `json:"text"`
}

// InteractiveAction holds buttons, list sections, or a named action.
type InteractiveAction struct {
	Buttons    []ReplyButton `json:"buttons,omitempty"`
	Button     string        `json:"button,omitempty"` // list menu label
	Sections   []ListSection `json:"sections,omitempty"`
	Name       string        `json:"name,omitempty"` // cta_url, flow, call_permission_request
	Parameters any           `json:"parameters,omitempty"`
}

// ReplyButton is a quick-reply button.
type ReplyButton struct {
	Type  string      `json:"type"` // reply
	Reply ReplyDetail `json:"reply"`
}

// ReplyDetail identifies a quick-reply button.
type ReplyDetail struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// ListSection is one section of a list menu.
type ListSection struct {
	Title string    `json:"title,omitempty"`
	Rows  []ListRow `json:"rows"`
}

// ListRow is one choice of a list menu.
type ListRow struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// CTAURLParameters are the parameters of a cta_url action.
type CTAURLParameters struct {
	DisplayText string `json:"display_text"`
	URL         string `json:"url"`
}

// FlowParameters are the parameters of a flow action.
type FlowParameters struct {
	FlowMessageVersion string         `json:"flow_message_version"`
	FlowToken          string         `json:"flow_token"`
	FlowID             string         `json:"flow_id"`
	FlowCTA            string         `json:"flow_cta"`
	FlowAction         string         `json:"flow_action"`
	FlowActionPayload  map[string]any `json:"flow_action_payload,omitempty"`
}

// SendResult is the provider's acceptance of a message.
type SendResult struct {
	MessageID     string
	WaID          string
	MessageStatus string
}

type sendResp struct {
	Contacts []struct {
		Input string `json:"input"`
		WaID  string `json:"wa_id"`
	} `json:"contacts"`
	Messages []struct {
		ID            string `json:"id"`
		MessageStatus string `json:"message_status"`
	} `json:"messages"`
}

// NewMessage starts a message to a recipient (E.164 digits, no +).
func NewMessage(to, typ string) Message {
	return Message{MessagingProduct: "whatsapp", RecipientType: "individual", To: to, Type: typ}
}

// Send sends a message from the account's phone number.
func (c *Client) Send(ctx context.Context, cr Creds, m Message) (*SendResult, error) {
	if m.MessagingProduct == "" {
		m.MessagingProduct, m.RecipientType = "whatsapp", "individual"
	}
	var out sendResp
	if err := c.postJSON(ctx, cr.AccessToken, cr.PhoneNumberID+"/messages", m, &out); err != nil {
		return nil, err
	}
	if len(out.Messages) == 0 || out.Messages[0].ID == "" {
		return nil, &Error{Message: "the provider accepted the message without an id", Class: Transient}
	}
	r := &SendResult{MessageID: out.Messages[0].ID, MessageStatus: out.Messages[0].MessageStatus}
	if len(out.Contacts) > 0 {
		r.WaID = out.Contacts[0].WaID
	}
	return r, nil
}

// MarkRead marks an incoming message as read.
func (c *Client) MarkRead(ctx context.Context, cr Creds, messageID string) error {
	in := map[string]string{"messaging_product": "whatsapp", "status": "read", "message_id": messageID}
	var out successResp
	if err := c.postJSON(ctx, cr.AccessToken, cr.PhoneNumberID+"/messages", in, &out); err != nil {
		return err
	}
	if !out.Success {
		return &Error{Message: fmt.Sprintf("mark as read of %s not confirmed", messageID), Class: Transient}
	}
	return nil
}

// RequestCallPermission sends a call permission request to a user.
func (c *Client) RequestCallPermission(ctx context.Context, cr Creds, to, body string) (*SendResult, error) {
	m := NewMessage(to, "interactive")
	m.Interactive = &Interactive{Type: "call_permission_request", Body: &InteractiveText{Text: body},
		Action: InteractiveAction{Name: "call_permission_request"}}
	return c.Send(ctx, cr, m)
}
