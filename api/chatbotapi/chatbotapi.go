// Package chatbotapi is the HTTP surface of the chatbot: its settings,
// keyword rules, AI contexts, conversation flows and sessions. Agent
// transfers, under /api/chatbot/transfers too, are in transfersapi.
package chatbotapi

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/chatbot"
	"wharf/internal/orgsettings"
)

// Maskers gives an organization's phone-number masker: sessions show the
// contact's number.
type Maskers interface {
	Masker(ctx context.Context, orgID uuid.UUID) (orgsettings.Masker, error)
}

// Handlers serves the chatbot routes.
type Handlers struct {
	bot     *chatbot.Service
	maskers Maskers
}

// New builds the chatbot handlers.
func New(bot *chatbot.Service, maskers Maskers) *Handlers {
	return &Handlers{bot: bot, maskers: maskers}
}
