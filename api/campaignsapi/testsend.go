package campaignsapi

import (
	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/campaigns"
)

type testSendRequest struct {
	PhoneNumbers []string          `json:"phone_numbers" description:"1 to 5 numbers to send the test to."`
	RecipientID  *string           `json:"recipient_id" description:"Take the placeholders' values from this recipient of the campaign (by its mapping)."`
	Values       map[string]string `json:"values" description:"Without recipient_id: a value for every placeholder key (the template's parameters)."`
}

type testSentResp struct {
	PhoneNumber string     `json:"phone_number"`
	MessageID   *uuid.UUID `json:"message_id" description:"The queued message (GET /api/contacts/{id}/messages shows it); null when refused."`
	Error       string     `json:"error" description:"Why this number was not sent to (e.g. the contact opted out of marketing)."`
}

type testSendResp struct {
	Results []testSentResp `json:"results"`
}

func (h *Handlers) testSend(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req testSendRequest
	if !web.BindJSON(c, &req) {
		return
	}
	recipient, err := web.OptionalUUID("recipient_id", req.RecipientID)
	if err != nil {
		web.Fail(c, err)
		return
	}
	p := web.Principal(c)
	res, err := h.campaigns.TestSend(c.Request.Context(), p.OrgID, campaigns.TestActor{UserID: p.UserID, APIKeyID: p.APIKeyID}, id,
		campaigns.TestSendInput{PhoneNumbers: req.PhoneNumbers, RecipientID: recipient, Values: req.Values})
	if err != nil {
		web.Fail(c, err)
		return
	}
	out := testSendResp{Results: make([]testSentResp, len(res))}
	for i, r := range res {
		out.Results[i] = testSentResp{PhoneNumber: r.PhoneNumber, MessageID: r.MessageID, Error: r.Error}
	}
	web.OK(c, out)
}
