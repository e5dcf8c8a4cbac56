// Package chatbot is the organization's bot: its settings, keyword rules,
// AI contexts and conversation flows, the sessions of contacts walking a
// flow, and the evaluation of every incoming message (an inbound
// consumer): strictly in arrival order per contact, exactly once.
//
// Files: settings.go, rules.go (keyword rules and their matching),
// contexts.go (AI contexts), flows.go (conversation flows and their
// validation), sessions.go (sessions and a contact's session data),
// consumer.go (the inbound consumer and the inbox), evaluate.go (the order
// of evaluation), run.go (walking a flow), replies.go (what the bot sends).
package chatbot

import (
	"time"

	"gorm.io/gorm"

	"wharf/internal/safehttp"
	"wharf/internal/secrets"
)

// Service is the chatbot domain.
type Service struct {
	db     *gorm.DB
	box    *secrets.Box
	policy safehttp.Policy
	now    func() time.Time
}

// Deps are the chatbot's collaborators.
type Deps struct {
	DB     *gorm.DB
	Box    *secrets.Box    // seals the AI API key
	Policy safehttp.Policy // for the URLs the bot calls (AI base URL, api contexts, api_fetch steps)
}

// NewService wires the chatbot domain.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, box: d.Box, policy: d.Policy, now: func() time.Time { return time.Now().UTC() }}
}

// checkURL validates a URL the bot will call (the SSRF-safe client checks
// the address again when it connects).
func (s *Service) checkURL(raw string) error {
	return s.policy.ValidateURL(raw)
}
