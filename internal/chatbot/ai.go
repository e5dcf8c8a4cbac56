package chatbot

import "errors"

// errNoAI is the answer while the AI client is not wired: the fallback is
// sent instead.
var errNoAI = errors.New("no AI client configured")

// aiReply asks the organization's AI for the reply.
func (e *evaluation) aiReply() (string, error) { return "", errNoAI }
