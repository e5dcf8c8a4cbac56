package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/internal/accounts"
	"wharf/internal/campaigns"
	"wharf/models"
)

type accountSummary struct {
	ID                uuid.UUID `json:"id"`
	Name              string    `json:"name"`
	PhoneNumber       string    `json:"phone_number"`
	PhoneNumberID     string    `json:"phone_number_id"`
	BusinessAccountID string    `json:"business_account_id"`
	Status            string    `json:"status"`
	CreatedAt         time.Time `json:"created_at"`
}

type accountDetail struct {
	accountSummary
	MessagingTier         string    `json:"messaging_tier"`          // what paces campaigns
	MessagingTierOverride string    `json:"messaging_tier_override"` // "" = the provider's tier
	AccessToken           string    `json:"access_token"`
	WebhookVerifyToken    string    `json:"webhook_verify_token"`
	QualityRating         string    `json:"quality_rating"`
	MessagingLimit        string    `json:"messaging_limit"`
	VerifiedName          string    `json:"verified_name"`
	IsCoexistence         bool      `json:"is_coexistence"`
	LastError             string    `json:"last_error"`
	UpdatedAt             time.Time `json:"updated_at"`

	// VerifiedAt is when the account became its number's owner; null for a
	// claim the provider has not confirmed.
	VerifiedAt *time.Time `json:"verified_at"`
}

func toAccountSummary(a models.PlatformAccount) accountSummary {
	return accountSummary{ID: a.ID, Name: a.Name, PhoneNumber: a.PhoneNumber, PhoneNumberID: a.PhoneNumberID,
		BusinessAccountID: a.BusinessAccountID, Status: a.Status, CreatedAt: utc(a.CreatedAt)}
}

func toAccountDetail(a *accounts.Account) accountDetail {
	return accountDetail{accountSummary: toAccountSummary(a.PlatformAccount), AccessToken: a.AccessToken,
		MessagingTier: campaigns.EffectiveTier(&a.PlatformAccount), MessagingTierOverride: a.MessagingTierOverride,
		WebhookVerifyToken: a.WebhookVerifyToken, QualityRating: a.QualityRating, MessagingLimit: a.MessagingLimit,
		VerifiedName: a.VerifiedName, IsCoexistence: a.IsCoexistence, LastError: a.LastError, VerifiedAt: utcPtr(a.VerifiedAt), UpdatedAt: utc(a.UpdatedAt)}
}

func (s *Server) listAccounts(c *gin.Context) {
	rows, err := s.Accounts.List(c.Request.Context(), principal(c).OrgID)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]accountSummary, len(rows))
	for i, a := range rows {
		out[i] = toAccountSummary(a)
	}
	ok(c, http.StatusOK, gin.H{"items": out})
}

func (s *Server) getAccount(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	a, err := s.Accounts.Get(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toAccountDetail(a))
}

type accountReq struct {
	Name               *string `json:"name"`
	PhoneNumberID      *string `json:"phone_number_id"`
	BusinessAccountID  *string `json:"business_account_id"`
	AccessToken        *string `json:"access_token"`
	WebhookVerifyToken *string `json:"webhook_verify_token"`
	MessagingTier      *string `json:"messaging_tier"`
}

func (r accountReq) input() accounts.Input { return accounts.Input(r) }

func (s *Server) createAccount(c *gin.Context) {
	var req accountReq
	if !s.bindJSON(c, &req) {
		return
	}
	a, err := s.Accounts.Create(c.Request.Context(), principal(c).OrgID, req.input())
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusCreated, gin.H{"id": a.ID, "name": a.Name, "status": a.Status, "created_at": utc(a.CreatedAt),
		"webhook_verify_token": a.WebhookVerifyToken})
}

func (s *Server) updateAccount(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req accountReq
	if !s.bindJSON(c, &req) {
		return
	}
	a, err := s.Accounts.Update(c.Request.Context(), principal(c).OrgID, id, req.input())
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, toAccountDetail(a))
}

func (s *Server) deleteAccount(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	if err := s.Accounts.Delete(c.Request.Context(), principal(c).OrgID, id); err != nil {
		s.fail(c, err)
		return
	}
	message(c, "account deleted")
}

func (s *Server) testAccount(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	r, err := s.Accounts.Test(c.Request.Context(), principal(c).OrgID, id)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := gin.H{"connected": r.Connected, "phone_number": r.PhoneNumber, "display_phone_number": r.DisplayPhoneNumber,
		"verified_name": r.VerifiedName, "quality_rating": r.QualityRating}
	if r.Error != "" {
		out["error"] = r.Error
	}
	ok(c, http.StatusOK, out)
}

func (s *Server) embeddedSignupConfig(c *gin.Context) {
	cfg, err := s.Accounts.EmbeddedSignupConfig(c.Request.Context(), principal(c).OrgID)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, gin.H{"platform_app_id": cfg.AppID, "platform_config_id": cfg.ConfigID, "platform_api_version": cfg.APIVersion})
}

func onboardedResp(o *accounts.Onboarded) gin.H {
	out := gin.H{"account": toAccountDetail(o.Account)}
	if o.PIN != "" {
		out["pin"] = o.PIN
	}
	if o.Warning != "" {
		out["warning"] = o.Warning
	}
	return out
}

func (s *Server) exchangeToken(c *gin.Context) {
	var req struct {
		Code               string `json:"code"`
		PhoneID            string `json:"phone_id"`
		BusinessAccountID  string `json:"business_account_id"`
		Name               string `json:"name"`
		WebhookVerifyToken string `json:"webhook_verify_token"`
	}
	if !s.bindJSON(c, &req) {
		return
	}
	o, err := s.Accounts.ExchangeToken(c.Request.Context(), principal(c).OrgID, accounts.ExchangeInput(req))
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, onboardedResp(o))
}

func (s *Server) registerAccount(c *gin.Context) {
	id, valid := s.pathID(c, "id")
	if !valid {
		return
	}
	var req struct {
		PIN string `json:"pin"`
	}
	if c.Request.ContentLength != 0 && !s.bindJSON(c, &req) {
		return
	}
	o, err := s.Accounts.Register(c.Request.Context(), principal(c).OrgID, id, req.PIN)
	if err != nil {
		s.fail(c, err)
		return
	}
	ok(c, http.StatusOK, onboardedResp(o))
}
