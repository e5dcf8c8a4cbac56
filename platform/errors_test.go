package platform

import (
	"errors"
	"net/http"
	"testing"
)

func TestClassify(t *testing.T) {
	cases := []struct {
		code, status int
		want         Class
	}{
		{CodeThroughput, 400, Throttled},
		{CodePairRateLimit, 400, Throttled},
		{CodeAccountRateLimit, 400, Throttled},
		{80008, 400, Throttled},
		{CodeAppRateLimit, 400, Throttled},
		{CodeGeneric, 500, Transient},
		{CodeServiceUnavailable, 503, Transient},
		{131057, 400, Transient},
		{0, 502, Transient},
		{0, 429, Throttled},
		{CodeOutsideWindow, 400, Permanent},
		{CodeUndeliverable, 400, Permanent},
		{CodeTemplateNotFound, 400, Permanent},
		{CodeInvalidToken, 401, Permanent},
		{CodeNoCallPermission, 400, Permanent},
		{999999, 400, Permanent},
		{999999, 500, Transient},
	}
	for _, c := range cases {
		if got := Classify(c.code, c.status); got != c.want {
			t.Errorf("code %d status %d: %s, want %s", c.code, c.status, got, c.want)
		}
	}
}

func TestParseErrorReadsTheProviderShape(t *testing.T) {
	body := []byte(`{"error":{"message":"(#130429) Rate limit hit","type":"OAuthException","code":130429,"error_subcode":2655007,
		"error_data":{"messaging_product":"whatsapp","details":"Cloud API message throughput has been reached."},"fbtrace_id":"Az8abc"}}`)
	h := http.Header{}
	h.Set("Retry-After", "3")
	e := parseError(400, h, body)
	if e.Code != 130429 || e.Subcode != 2655007 || e.Type != "OAuthException" || e.FBTraceID != "Az8abc" ||
		e.Details == "" || e.Class != Throttled || e.RetryAfter.Seconds() != 3 {
		t.Fatalf("parsed %+v", e)
	}
	var err error = e
	if !IsThrottled(err) || IsTransient(err) {
		t.Fatal("class helpers")
	}
	// Not JSON: classified by HTTP status.
	e = parseError(503, http.Header{}, []byte("<html>bad gateway</html>"))
	if e.Class != Transient || e.Code != 0 {
		t.Fatalf("html error %+v", e)
	}
	if ClassOf(errors.New("plain")) != Permanent {
		t.Fatal("foreign errors are permanent")
	}
}
