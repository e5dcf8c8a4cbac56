package chatbot

import (
	"bytes"
	"encoding/json"
)

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// sameJSON compares values by their JSON (nil and empty slices alike).
func sameJSON(a, b any) bool {
	norm := func(v any) []byte {
		s := jsonOf(v)
		if s == "[]" {
			s = "null"
		}
		return []byte(s)
	}
	return bytes.Equal(norm(a), norm(b))
}
