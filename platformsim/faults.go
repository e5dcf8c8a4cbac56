package platformsim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
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

// Fault makes matching provider API requests fail with a provider error
// before they reach their endpoint (nothing changes at the simulator), for
// tests of how callers handle refusals and trouble on calls other than
// sends: a catalog the provider refuses to create, a product update that
// meets provider trouble...
type Fault struct {
	// Method matches exactly (any case); empty matches every method.
	Method string `json:"method"`
	// Path matches as a substring of the request path (/v21.0/123/products);
	// empty matches every path.
	Path string `json:"path"`
	// Code is the provider error code answered: one of FaultCodes.
	Code int `json:"code"`
	// Details replaces the error's error_data.details when set.
	Details string `json:"details,omitempty"`
	// Times is how many matching requests fail; 0 means until ClearFaults.
	Times int `json:"times,omitempty"`
}

// faultErrors are the errors a Fault can answer besides accountErrors.
var faultErrors = map[int]struct {
	status           int
	message, details string
}{
	100:    {http.StatusBadRequest, "Invalid parameter", "The parameter is invalid (injected by the simulator)."},
	2:      {http.StatusServiceUnavailable, "Service temporarily unavailable", "Service temporarily unavailable (injected by the simulator)."},
	131000: {http.StatusInternalServerError, "Something went wrong", "Something went wrong. Please retry later (injected by the simulator)."},
	// The provider usually reports a marketing opt-out in a failed status
	// (Config.FailRecipients); a fault answers it on the send itself.
	131050: {http.StatusBadRequest, "Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business",
		"The recipient opted out of marketing messages (injected by the simulator)."},
}

// FaultCodes lists the codes InjectFault accepts.
func FaultCodes() []int {
	out := SendErrorCodes()
	for c := range faultErrors {
		out = append(out, c)
	}
	return out
}

type activeFault struct {
	Fault
	left int // remaining failures; -1 for until cleared
}

// InjectFault adds a fault; faults are checked in the order they were
// added and the first that matches answers.
func (s *Simulator) InjectFault(f Fault) error {
	_, known := faultErrors[f.Code]
	if _, acct := accountErrors[f.Code]; !known && !acct {
		return fmt.Errorf("unsupported fault code %d (supported: %v)", f.Code, FaultCodes())
	}
	if f.Times < 0 {
		return fmt.Errorf("times must not be negative")
	}
	left := f.Times
	if left == 0 {
		left = -1
	}
	s.faultMu.Lock()
	s.faults = append(s.faults, &activeFault{Fault: f, left: left})
	s.faultMu.Unlock()
	return nil
}

// ClearFaults removes every injected fault.
func (s *Simulator) ClearFaults() {
	s.faultMu.Lock()
	s.faults = nil
	s.faultMu.Unlock()
}

// takeFault returns the error of the first fault matching the request,
// using up one of its failures.
func (s *Simulator) takeFault(r *http.Request) *apiError {
	s.faultMu.Lock()
	defer s.faultMu.Unlock()
	for i, f := range s.faults {
		if (f.Method != "" && !strings.EqualFold(f.Method, r.Method)) || (f.Path != "" && !strings.Contains(r.URL.Path, f.Path)) {
			continue
		}
		if f.left > 0 {
			f.left--
			if f.left == 0 {
				s.faults = slices.Delete(s.faults, i, i+1)
			}
		}
		e, ok := faultErrors[f.Code]
		if !ok {
			e = accountErrors[f.Code]
		}
		details := e.details
		if f.Details != "" {
			details = f.Details
		}
		return newError(e.status, f.Code, e.message, details)
	}
	return nil
}

func (s *Simulator) handleInjectFault(w http.ResponseWriter, r *http.Request) {
	var f Fault
	if !decodeControl(w, r, &f) {
		return
	}
	if err := s.InjectFault(f); err != nil {
		controlError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, success)
}
