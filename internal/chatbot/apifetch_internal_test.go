package chatbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"

	"wharf/internal/infra/safehttp"
)

// fillJSON makes every value one JSON string, inside a string of the body
// or standing for a value, whatever the value holds.
func TestFillJSONKeepsEachValueOneString(t *testing.T) {
	t.Parallel()
	body := `{"in": "x {{v}} y", "alone": {{ v }}, "list": [{{v}}, "{{v}}"], "esc": "a \"{{v}}\" \\", "{{v}}": 1}`
	for _, v := range []string{"", "plain", `Ann", "admin": true, "x": "`, `\`, `\"`, "line\nbreak\ttab", "{{v}}", "}]},{",
		"<b>&amp;</b>", "\x00\x1f", "é ✓ 😀", "\xff\xfe"} {
		got := fillJSON(body, func(name string) string {
			if name != "v" {
				t.Fatalf("placeholder %q", name)
			}
			return v
		})
		var out map[string]any
		if err := json.Unmarshal([]byte(got), &out); err != nil {
			t.Fatalf("value %q: %s is not JSON: %v", v, got, err)
		}
		want := string([]rune(v)) // invalid UTF-8 arrives replaced
		if len(out) != 5 || out["in"] != "x "+want+" y" || out["alone"] != want || out["esc"] != `a "`+want+`" \` || out[want] != 1.0 {
			t.Fatalf("value %q: %v", v, out)
		}
		if l, _ := out["list"].([]any); len(l) != 2 || l[0] != want || l[1] != want {
			t.Fatalf("value %q: list %v", v, out["list"])
		}
	}
}

// What api_error says of a request that got no answer: never its error's
// text.
func TestFetchFailureReasons(t *testing.T) {
	t.Parallel()
	deadline, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	<-deadline.Done()
	for _, c := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Get", URL: "http://10.0.0.1/x", Err: fmt.Errorf("dial: %w: 10.0.0.1", safehttp.ErrBlocked)}, fetchNotAllowed},
		{&url.Error{Op: "Get", URL: "http://10.0.0.1/x", Err: deadline.Err()}, fetchTimedOut},
		{&net.OpError{Op: "dial", Err: timeoutErr{}}, fetchTimedOut},
		{&url.Error{Op: "Get", URL: "http://10.0.0.1/x", Err: &net.OpError{Op: "dial", Err: errors.New("connection refused")}}, fetchRefused},
		{errors.New("no such host"), fetchRefused},
	} {
		if got := fetchFailure(c.err); got != c.want {
			t.Errorf("%v: %q, want %q", c.err, got, c.want)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }
