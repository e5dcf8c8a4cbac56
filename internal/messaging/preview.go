package messaging

import (
	"strings"
	"unicode/utf8"
)

// PreviewLength is the longest preview of a conversation's last message, in
// characters.
const PreviewLength = 100

// Preview is how a message shows in the inbox's conversation list
// (contacts.last_message_preview): its text, a template's rendered text, or
// its kind in brackets followed by its caption, body or title ("[image]
// the receipt", "[location]"), cut to PreviewLength characters. Migration
// 00027 computes the same for the messages stored before it.
func Preview(typ string, content map[string]any) string {
	str := func(k string) string { v, _ := content[k].(string); return v }
	var p string
	switch typ {
	case "text":
		p = str("text")
	case "template":
		if p = str("text"); p == "" {
			p = "[template]"
		}
	default:
		extra := str("caption")
		if extra == "" {
			extra = str("body")
		}
		if extra == "" {
			extra = str("title")
		}
		p = strings.TrimSpace("[" + typ + "] " + extra)
	}
	if utf8.RuneCountInString(p) > PreviewLength {
		p = string([]rune(p)[:PreviewLength])
	}
	return p
}
