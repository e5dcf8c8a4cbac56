package app

import (
	"context"

	"github.com/google/uuid"

	"wharf/internal/campaigns"
	"wharf/internal/messaging"
)

// campaignTests sends a campaign's test messages as ordinary template sends
// (campaigns.TestSender over messaging): campaigns and messaging do not
// import each other.
type campaignTests struct{ messaging *messaging.Service }

func (t campaignTests) SendTestTemplate(ctx context.Context, orgID uuid.UUID, by campaigns.TestActor, templateID uuid.UUID,
	number string, values map[string]string) (uuid.UUID, error) {
	q, err := t.messaging.QueueTemplate(ctx, orgID, messaging.Actor{UserID: by.UserID, APIKeyID: by.APIKeyID},
		messaging.TemplateInput{PhoneNumber: number, TemplateID: &templateID, Params: values})
	if err != nil {
		return uuid.Nil, err
	}
	return q.MessageID, nil
}
