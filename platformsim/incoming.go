package platformsim

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Incoming describes a message from a user to a business phone number. Only
// the fields of its Type matter: Text (text; the emoji of a reaction; the
// name of a location), Caption, MimeType, Filename and Data (media; Data
// defaults to small sample bytes of the type), Interactive, Button,
// Latitude/Longitude (location). ContextMessageID makes it a reply (and is
// the reacted-to message of a reaction). MessageID forces the id, to
// simulate a redelivery.
type Incoming struct {
	PhoneNumberID    string               `json:"phone_number_id"`
	From             string               `json:"from"`
	ProfileName      string               `json:"profile_name"`
	Type             string               `json:"type"`
	Text             string               `json:"text"`
	Caption          string               `json:"caption"`
	MimeType         string               `json:"mime_type"`
	Filename         string               `json:"filename"`
	Data             []byte               `json:"data"` // base64 in JSON
	Interactive      *IncomingInteractive `json:"interactive"`
	Button           *IncomingButton      `json:"button"`
	Latitude         float64              `json:"latitude"`
	Longitude        float64              `json:"longitude"`
	ContextMessageID string               `json:"context_message_id"`
	Timestamp        int64                `json:"timestamp"`
	MessageID        string               `json:"message_id"`
}

// IncomingInteractive is a user's answer to an interactive message:
// button_reply (ID, Title), list_reply (ID, Title, Description) or
// nfm_reply (ResponseJSON, the flow's answer as a JSON string).
type IncomingInteractive struct {
	Type         string `json:"type"`
	ID           string `json:"id"`
	Title        string `json:"title"`
	Description  string `json:"description"`
	ResponseJSON string `json:"response_json"`
}

// IncomingButton is a template quick-reply button press.
type IncomingButton struct {
	Payload string `json:"payload"`
	Text    string `json:"text"`
}

var defaultMime = map[string]string{
	"image":    "image/jpeg",
	"video":    "video/mp4",
	"audio":    "audio/ogg; codecs=opus",
	"document": "application/pdf",
}

// incomingWebhook validates in, creates what it refers to (media, the
// message id) and returns the webhook body. mediaID is set for media.
func (s *Simulator) incomingWebhook(in Incoming) (body []byte, messageID, mediaID string, err error) {
	if !isDigits(in.From) {
		return nil, "", "", fmt.Errorf("from must be the user's digits, got %q", in.From)
	}
	if in.Type == "" {
		in.Type = "text"
	}
	ts := in.Timestamp
	if ts == 0 {
		ts = time.Now().Unix()
	}
	messageID = cmpOr(in.MessageID, newMessageID())

	s.mu.Lock()
	defer s.mu.Unlock()
	ph, ok := s.objects[in.PhoneNumberID].(*phone)
	if !ok {
		return nil, "", "", fmt.Errorf("%w: phone number %q", ErrNotFound, in.PhoneNumberID)
	}
	msg := map[string]any{"from": in.From, "id": messageID, "timestamp": strconv.FormatInt(ts, 10), "type": in.Type}
	if in.ContextMessageID != "" && in.Type != "reaction" {
		msg["context"] = map[string]string{"from": ph.displayDigits, "id": in.ContextMessageID}
	}
	switch in.Type {
	case "text":
		if in.Text == "" {
			return nil, "", "", fmt.Errorf("text is required for a text message")
		}
		msg["text"] = map[string]string{"body": in.Text}
	case "image", "video", "audio", "document":
		mimeType := cmpOr(in.MimeType, defaultMime[in.Type])
		data := in.Data
		if data == nil {
			data = sampleMedia(in.Type, mimeType)
		}
		md := s.addMediaLocked(ph, mimeType, in.Filename, data)
		mediaID = md.id
		obj := map[string]any{"mime_type": mimeType, "sha256": md.sha256, "id": md.id}
		if in.Caption != "" && in.Type != "audio" {
			obj["caption"] = in.Caption
		}
		if in.Type == "document" && in.Filename != "" {
			obj["filename"] = in.Filename
		}
		if in.Type == "audio" {
			obj["voice"] = false
		}
		msg[in.Type] = obj
	case "interactive":
		it := in.Interactive
		if it == nil {
			return nil, "", "", fmt.Errorf("interactive is required for an interactive message")
		}
		switch it.Type {
		case "button_reply":
			msg["interactive"] = map[string]any{"type": it.Type, "button_reply": map[string]string{"id": it.ID, "title": it.Title}}
		case "list_reply":
			msg["interactive"] = map[string]any{"type": it.Type,
				"list_reply": map[string]string{"id": it.ID, "title": it.Title, "description": it.Description}}
		case "nfm_reply":
			msg["interactive"] = map[string]any{"type": it.Type,
				"nfm_reply": map[string]string{"name": "flow", "body": "Sent", "response_json": cmpOr(it.ResponseJSON, "{}")}}
		default:
			return nil, "", "", fmt.Errorf("interactive type must be button_reply, list_reply or nfm_reply, got %q", it.Type)
		}
	case "button":
		if in.Button == nil {
			return nil, "", "", fmt.Errorf("button is required for a button message")
		}
		msg["button"] = map[string]string{"payload": in.Button.Payload, "text": in.Button.Text}
	case "reaction":
		if in.ContextMessageID == "" {
			return nil, "", "", fmt.Errorf("context_message_id (the reacted-to message) is required for a reaction")
		}
		msg["reaction"] = map[string]string{"message_id": in.ContextMessageID, "emoji": in.Text}
	case "location":
		loc := map[string]any{"latitude": in.Latitude, "longitude": in.Longitude}
		if in.Text != "" {
			loc["name"] = in.Text
		}
		msg["location"] = loc
	case "unsupported":
		msg["errors"] = []map[string]any{{"code": 131051, "title": "Message type unknown", "message": "Message type unknown",
			"error_data": map[string]string{"details": "Message type is currently not supported."}}}
		msg["unsupported"] = map[string]string{"type": "unknown"}
	default:
		return nil, "", "", fmt.Errorf("type must be text, image, video, audio, document, interactive, button, reaction, location or unsupported, got %q", in.Type)
	}
	s.incoming[messageID] = ph.id

	value := ph.messagesValue()
	contact := contactJSON{WaID: in.From}
	contact.Profile.Name = cmpOr(in.ProfileName, "Sim User")
	value.Contacts = []contactJSON{contact}
	value.Messages = []any{msg}
	body, err = json.Marshal(newEnvelope(ph.waba.id, "messages", value))
	return body, messageID, mediaID, err
}

// Incoming posts an incoming-message webhook synchronously and returns the
// message id and the receiver's HTTP status. A post that fails on the
// network returns status 0 and the error; a non-2xx answer is not an error.
func (s *Simulator) Incoming(ctx context.Context, in Incoming) (string, int, error) {
	body, id, _, err := s.incomingWebhook(in)
	if err != nil {
		return "", 0, fmt.Errorf("platformsim: %w", err)
	}
	code, err := s.postNow(ctx, body)
	return id, code, err
}

// IncomingAsync queues an incoming-message webhook for the sender pool
// (with its retries) and returns the message id.
func (s *Simulator) IncomingAsync(in Incoming) (string, error) {
	body, id, _, err := s.incomingWebhook(in)
	if err != nil {
		return "", fmt.Errorf("platformsim: %w", err)
	}
	s.enqueue(body)
	return id, nil
}
