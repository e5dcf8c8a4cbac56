package chatbot

import (
	"encoding/json"

	"wharf/models"
)

// An organization's AI key is sealed together with the provider and base
// URL it was given for, and goes to no other: a key an Admin stored for
// their model server must not follow a later change of ai_base_url (which
// chatbot:update, a Manager's permission, allows) to a server of someone
// else's choosing. UpdateSettings drops the key when the provider or base
// URL changes without a new key; the binding is checked again on every
// use, so no other path that changes the settings can send it elsewhere.
type boundKey struct {
	Key      string `json:"key"`
	Provider string `json:"provider"`
	BaseURL  string `json:"base_url"`
}

// sealAIKey seals key for provider and baseURL (the settings' stored
// values: "" is AI_API_URL, or the provider's own API).
func (s *Service) sealAIKey(key, provider, baseURL string) ([]byte, error) {
	b, err := json.Marshal(boundKey{Key: key, Provider: provider, BaseURL: baseURL})
	if err != nil {
		return nil, err
	}
	return s.box.Seal(b)
}

// aiKey opens the organization's stored key and reports whether it may go
// to the provider and base URL the settings name now. A key sealed before
// keys were bound (the plain key) is taken as bound to the settings it is
// stored with.
func (s *Service) aiKey(st *models.ChatbotSettings) (key string, bound bool, err error) {
	plain, err := s.box.Open(st.AIAPIKeyEnc)
	if err != nil {
		return "", false, err
	}
	var k boundKey
	if json.Unmarshal(plain, &k) != nil || k.Key == "" {
		return string(plain), true, nil
	}
	return k.Key, k.Provider == st.AIProvider && k.BaseURL == st.AIBaseURL, nil
}
