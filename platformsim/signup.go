package platformsim

import (
	"encoding/json"
	"net/http"
	"strings"
)

// A stand-in for the provider's embedded-signup script (its JavaScript SDK),
// for browser tests, which may not load the real one: GET
// /_sim/embedded_signup/sdk.js defines window.FB with init and login, and
// login calls its callback as the provider does when the person finished
// the signup: {status: "connected", authResponse: {code}}, with a code the
// simulator's code exchange (GET /oauth/access_token) accepts. Each load of
// the script hands out the next code queued with AddSignupCode; with none
// queued, login answers as when the person closed the window
// ({status: "unknown", authResponse: null}). It calls window.fbAsyncInit
// once loaded, as the real script does.

// AddSignupCode seeds c (AddOAuthCode) and queues its code for the next
// load of the stand-in script.
func (s *Simulator) AddSignupCode(c OAuthCode) {
	s.AddOAuthCode(c)
	s.mu.Lock()
	s.signupCodes = append(s.signupCodes, c.Code)
	s.mu.Unlock()
}

func (s *Simulator) handleAddSignupCode(w http.ResponseWriter, r *http.Request) {
	var in OAuthCode
	if !decodeControl(w, r, &in) {
		return
	}
	if in.Code == "" || in.AccessToken == "" {
		controlError(w, http.StatusBadRequest, "code and access_token are required")
		return
	}
	s.AddSignupCode(in)
	writeJSON(w, http.StatusOK, success)
}

const signupScript = `// platformsim: a stand-in for the provider's embedded-signup script.
(function () {
  var code = %s;
  window.FB = {
    init: function () {},
    login: function (callback) {
      setTimeout(function () {
        callback(code ? { status: 'connected', authResponse: { code: code } } : { status: 'unknown', authResponse: null });
      }, 0);
    },
  };
  if (typeof window.fbAsyncInit === 'function') window.fbAsyncInit();
})();
`

func (s *Simulator) handleSignupScript(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	code := ""
	if len(s.signupCodes) > 0 {
		code, s.signupCodes = s.signupCodes[0], s.signupCodes[1:]
	}
	s.mu.Unlock()
	lit, _ := json.Marshal(code) // a JSON string is a JavaScript string literal
	if code == "" {
		lit = []byte("null")
	}
	w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte(strings.Replace(signupScript, "%s", string(lit), 1)))
}
