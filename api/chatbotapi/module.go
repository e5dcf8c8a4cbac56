package chatbotapi

import (
	"wharf/internal/chatbot"
	"wharf/internal/inbound"
	"wharf/module"
)

// Module is the chatbot's share of the processes: its routes, the
// evaluation jobs and the sweep's schedule, and its consumer of incoming
// messages (after messaging stored them: messaging's module comes first).
func Module(bot *chatbot.Service, maskers Maskers) module.Module {
	return module.Module{Tag: "Chatbot", Routes: New(bot, maskers).Routes(), Jobs: bot.Jobs(),
		Consumers: []inbound.Consumer{bot}, Schedules: chatbot.Schedules()}
}
