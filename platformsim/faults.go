package platformsim

import (
	"fmt"
	"net/http"
)

// accountErrors are the provider's answers to a send from an account that
// cannot send at all, by code (see shared/PROVIDER.md and the provider's
// error reference).
var accountErrors = map[int]struct {
	status           int
	message, details string
}{
	190:    {http.StatusUnauthorized, "Invalid OAuth access token", "Error validating access token: the session has been invalidated"},
	368:    {http.StatusForbidden, "Temporarily blocked for policies violations", "The account is restricted from sending messages"},
	131031: {http.StatusForbidden, "Business Account locked", "The business account is restricted or disabled for violating a policy"},
	131042: {http.StatusBadRequest, "Business eligibility payment issue", "There was an error related to the payment method"},
	133010: {http.StatusBadRequest, "Account not registered", "The phone number is not registered on the platform"},
	132015: {http.StatusBadRequest, "Template is paused", "The template is paused because of low quality"},
	132016: {http.StatusBadRequest, "Template has been disabled", "The template has been permanently disabled"},
}

// SendErrorCodes lists the codes SetSendError accepts.
func SendErrorCodes() []int {
	out := make([]int, 0, len(accountErrors))
	for c := range accountErrors {
		out = append(out, c)
	}
	return out
}

// SetSendError makes every send from the phone number fail with code (an
// account-level error such as 131031 account restricted, 131042 payment
// issue, 133010 not registered, or a template-level one such as 132015
// paused), as the provider answers when the account itself cannot send.
// Code 0 lifts it.
func (s *Simulator) SetSendError(phoneNumberID string, code int) error {
	if _, ok := accountErrors[code]; !ok && code != 0 {
		return fmt.Errorf("unsupported send error code %d (supported: %v)", code, SendErrorCodes())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ph, ok := s.objects[phoneNumberID].(*phone)
	if !ok {
		return fmt.Errorf("no phone number %s", phoneNumberID)
	}
	ph.sendErrorCode = code
	return nil
}

// RevokeToken invalidates an access token: every call with it answers 190,
// as when a token expires or an admin revokes it.
func (s *Simulator) RevokeToken(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.tokens[token]
	delete(s.tokens, token)
	return ok
}

// sendErrorLocked is the injected account-level error of a phone number.
func (ph *phone) sendErrorLocked() *apiError {
	e, ok := accountErrors[ph.sendErrorCode]
	if !ok {
		return nil
	}
	return newError(e.status, ph.sendErrorCode, e.message, e.details)
}

func (s *Simulator) handleSetSendError(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Code int `json:"code"`
	}
	if !decodeControl(w, r, &body) {
		return
	}
	if err := s.SetSendError(r.PathValue("id"), body.Code); err != nil {
		controlError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, success)
}

func (s *Simulator) handleRevokeToken(w http.ResponseWriter, r *http.Request) {
	var body struct {
		AccessToken string `json:"access_token"`
	}
	if !decodeControl(w, r, &body) {
		return
	}
	if !s.RevokeToken(body.AccessToken) {
		controlError(w, http.StatusNotFound, "no such token")
		return
	}
	writeJSON(w, http.StatusOK, success)
}
