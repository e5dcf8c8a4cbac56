package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

// TestWharfAppMessaging drives the framework's messaging integration over
// the real router, worker and simulator: a Platform Account mirrored into
// the core (and its default flags), incoming messages as Incoming Platform
// Messages, send_message (text, buttons as a list) and get_message_status
// following the simulator's status webhooks, the webhook on the framework's
// paths, and the refusals (an Agent, another organization).
func TestWharfAppMessaging(t *testing.T) {
	e := apptest.NewWithSim(t, nil, nil)
	e.StartWorker()
	admin := e.Admin()
	c := frappeClient{t: t, e: e.Env, auth: admin.Auth()}
	var orgID string
	e.DB.Raw(`SELECT id FROM organizations ORDER BY created_at LIMIT 1`).Scan(&orgID)

	// The account, mirrored: the core account has the document's ids and
	// becomes active once the refresh job verified it with the simulator.
	acc := c.data("POST", "/api/resource/Platform%20Account", map[string]any{"account_name": "Main", "token": e.WABA.AccessToken,
		"phone_id": e.PhoneNumberID(), "business_id": e.WABA.ID, "app_id": "123", "webhook_verify_token": "wharf-verify",
		"is_default_outgoing": 1, "is_default_incoming": 1}, 201)
	// Secrets are never answered, only whether they are set.
	_, token := acc["token"]
	_, verify := acc["webhook_verify_token"]
	if acc["name"] != "Main" || token || verify || acc["has_token"] != json.Number("1") || acc["has_webhook_verify_token"] != json.Number("1") ||
		acc["has_app_secret"] != json.Number("0") || acc["version"] != "v17.0" {
		t.Fatalf("account doc %v", acc)
	}
	var core models.PlatformAccount
	apptest.Eventually(t, 10*time.Second, "core account active", func() bool {
		return e.DB.Take(&core, "organization_id = ? AND name = ?", orgID, "Main").Error == nil && core.Status == models.AccountActive
	})
	if core.PhoneNumberID != e.PhoneNumberID() || core.BusinessAccountID != e.WABA.ID || core.WebhookVerifyToken != "wharf-verify" {
		t.Fatalf("core account %+v", core)
	}
	// A second account taking the default outgoing flag clears the first's.
	second := e.Sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Second", AccessToken: "token-second-wharf",
		PhoneNumbers: []platformsim.PhoneNumber{{DisplayPhoneNumber: "+1 555-010-0002", VerifiedName: "Second"}}})
	c.data("POST", "/api/resource/Platform%20Account", map[string]any{"account_name": "Second", "token": second.AccessToken,
		"phone_id": second.PhoneNumbers[0].ID, "business_id": second.ID, "app_id": "123", "webhook_verify_token": "wharf-verify-2",
		"is_default_outgoing": 1}, 201)
	if got := c.data("GET", "/api/resource/Platform%20Account/Main", nil, 200); got["is_default_outgoing"] != json.Number("0") ||
		got["is_default_incoming"] != json.Number("1") {
		t.Fatalf("Main after Second took the default: %v", got)
	}
	c.data("PUT", "/api/resource/Platform%20Account/Main", map[string]any{"is_default_outgoing": 1}, 200)
	if got := c.data("GET", "/api/resource/Platform%20Account/Second", nil, 200); got["is_default_outgoing"] != json.Number("0") {
		t.Fatalf("Second after Main took the default back: %v", got)
	}
	// A changed verify token reaches the core account.
	c.data("PUT", "/api/resource/Platform%20Account/Second", map[string]any{"webhook_verify_token": "wharf-verify-2b"}, 200)
	var vt string
	e.DB.Raw(`SELECT webhook_verify_token FROM platform_accounts WHERE organization_id = ? AND name = 'Second'`, orgID).Scan(&vt)
	if vt != "wharf-verify-2b" {
		t.Fatalf("core verify token %q", vt)
	}

	// Incoming messages become Incoming Platform Messages.
	user := "15550002222"
	e.Incoming(platformsim.Incoming{From: user, ProfileName: "Ann", Type: "text", Text: "hello there"})
	e.Incoming(platformsim.Incoming{From: user, Type: "interactive", Interactive: &platformsim.IncomingInteractive{Type: "button_reply",
		ID: "yes-id", Title: "Yes"}})
	e.Incoming(platformsim.Incoming{From: user, Type: "button", Button: &platformsim.IncomingButton{Payload: "STOP", Text: "Stop"}})
	e.Incoming(platformsim.Incoming{From: user, Type: "image", Caption: "a photo", MimeType: "image/jpeg", Data: []byte("jpegbytes")})
	var incoming []any
	apptest.Eventually(t, 10*time.Second, "4 Incoming Platform Messages", func() bool {
		incoming, _ = c.do("GET", "/api/resource/Platform%20Message?fields="+url.QueryEscape(`["*"]`)+"&filters="+
			url.QueryEscape(`[["type","=","Incoming"]]`)+"&order_by="+url.QueryEscape("creation asc"), nil, 200)["data"].([]any)
		return len(incoming) == 4
	})
	want := [][3]string{{"text", "hello there", ""}, {"button", "yes-id", "Yes"}, {"button", "STOP", "Stop"}, {"image", "a photo", ""}}
	for i, r := range incoming {
		d := r.(map[string]any)
		if d["content_type"] != want[i][0] || d["message"] != want[i][1] || fmt.Sprint(d["button_text"]) != fmt.Sprint(orNil(want[i][2])) ||
			d["message_type"] != "received" || d["from_number"] != "+"+user || d["platform_account"] != "Main" || d["message_id"] == "" {
			t.Errorf("incoming %d: %v, want %v", i, d, want[i])
		}
		if i == 3 && (d["media_id"] == nil || d["media_id"] == "" || d["mime_type"] != "image/jpeg") {
			t.Errorf("media message keeps no media id: %v", d)
		}
	}

	// send_message: a text, accepted by the simulator within the wait.
	sent := c.do("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+" + user, "message": "hi Ann"}, 200)["message"].(map[string]any)
	if sent["status"] != "sent" || sent["message_id"] == "" || sent["name"] == "" {
		t.Fatalf("send_message: %v", sent)
	}
	msgID := sent["message_id"].(string)
	sims := e.Sim.Messages(platformsim.MessageFilter{To: user})
	if len(sims) != 1 || sims[0].ID != msgID || sims[0].Type != "text" || !strings.Contains(string(sims[0].Body), "hi Ann") {
		t.Fatalf("simulator got %+v", sims)
	}
	// The simulator's status webhooks (sent, delivered, read) move it to read.
	apptest.Eventually(t, 10*time.Second, "status read", func() bool {
		st := c.do("GET", "/api/method/wharf.api.get_message_status?message_id="+url.QueryEscape(msgID), nil, 200)["message"].(map[string]any)
		return st["status"] == "read" && st["message_id"] == msgID
	})
	// Buttons: more than 3 go out as a list.
	list := c.do("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+" + user, "message": "pick one",
		"buttons": []map[string]string{{"type": "reply", "title": "A", "id": "a"}, {"type": "reply", "title": "B", "id": "b"},
			{"type": "reply", "title": "C", "id": "c"}, {"type": "reply", "title": "D", "id": "d"}}}, 200)["message"].(map[string]any)
	three := c.do("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+" + user, "message": "yes or no",
		"buttons": `[{"type":"reply","title":"Yes","id":"y"},{"type":"reply","title":"No","id":"n"}]`}, 200)["message"].(map[string]any)
	sims = e.Sim.Messages(platformsim.MessageFilter{To: user})
	if len(sims) != 3 || sims[1].ID != list["message_id"] || !strings.Contains(string(sims[1].Body), `"type":"list"`) ||
		sims[2].ID != three["message_id"] || !strings.Contains(string(sims[2].Body), `"type":"button"`) {
		t.Fatalf("interactive sends: %+v", sims)
	}
	doc := c.data("GET", "/api/resource/Platform%20Message/"+list["name"].(string), nil, 200)
	if doc["type"] != "Outgoing" || doc["content_type"] != "interactive" || doc["platform_account"] != "Main" || doc["to"] != "+"+user {
		t.Fatalf("list doc %v", doc)
	}

	// Several statuses in one webhook, with an unknown id: all applied.
	post := func(path string, body []byte) *http.Response {
		req, _ := http.NewRequest("POST", e.Server.URL+path, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(platform.SignatureHeader, platform.Sign(e.AppSecret, body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	statusesBody := func(ids ...[2]string) []byte {
		var sts []map[string]any
		for _, x := range ids {
			sts = append(sts, map[string]any{"id": x[0], "status": x[1], "timestamp": fmt.Sprint(time.Now().Unix()), "recipient_id": user})
		}
		b, _ := json.Marshal(map[string]any{"object": "whatsapp_business_account", "entry": []any{map[string]any{"id": e.WABA.ID,
			"changes": []any{map[string]any{"field": "messages", "value": map[string]any{"messaging_product": "whatsapp",
				"metadata": map[string]any{"phone_number_id": e.PhoneNumberID()}, "statuses": sts}}}}}})
		return b
	}
	// Signed POST on the framework's path.
	if resp := post("/api/method/wharf.utils.webhook.webhook", statusesBody([2]string{"wamid.unknown", "read"},
		[2]string{list["message_id"].(string), "read"}, [2]string{three["message_id"].(string), "read"})); resp.StatusCode != 200 {
		t.Fatalf("framework webhook POST: %d", resp.StatusCode)
	}
	for _, id := range []string{list["message_id"].(string), three["message_id"].(string)} {
		apptest.Eventually(t, 10*time.Second, "read from one webhook", func() bool {
			st := c.do("GET", "/api/method/wharf.api.get_message_status?message_id="+url.QueryEscape(id), nil, 200)["message"].(map[string]any)
			return st["status"] == "read"
		})
	}
	// A bad signature on the alias path is refused and changes nothing.
	req, _ := http.NewRequest("POST", e.Server.URL+"/api/method/wharf.webhook", strings.NewReader(string(statusesBody())))
	req.Header.Set(platform.SignatureHeader, "sha256=00")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 401 {
		t.Fatalf("unsigned framework webhook: %v %v", resp, err)
	}
	c.refused("GET", "/api/method/wharf.api.get_message_status?message_id=wamid.nope", nil, 404, "DoesNotExistError", "not found")

	// The handshake on both framework paths, against the accounts' tokens.
	for _, p := range []string{"/api/method/wharf.utils.webhook.webhook", "/api/method/wharf.webhook"} {
		for token, status := range map[string]int{"wharf-verify": 200, "wharf-verify-2b": 200, "wrong": 403} {
			resp, err := http.Get(e.Server.URL + p + "?hub.mode=subscribe&hub.verify_token=" + token + "&hub.challenge=ch4ll")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != status || (status == 200 && string(b) != "ch4ll") {
				t.Errorf("handshake %s token %s: %d %q", p, token, resp.StatusCode, b)
			}
		}
	}

	// Refusals follow the core permissions: an Agent cannot create accounts
	// (accounts:create); a role that may read messages but not send them
	// (no messages:create) cannot send; nothing is sent. Bad input is a 417
	// and sends nothing.
	agent := e.CreateUser(admin.Auth(), "agent-wharf@example.com", "Agent")
	ac := frappeClient{t: t, e: e.Env, auth: agent.Auth()}
	ac.refused("POST", "/api/resource/Platform%20Account", map[string]any{"account_name": "X"}, 403, "PermissionError", "accounts:create")
	e.Do("POST", "/api/roles", map[string]any{"name": "Reader", "permissions": []string{"messages:read"}}, admin.Auth()).Expect(t, 201)
	rc := frappeClient{t: t, e: e.Env, auth: e.CreateUser(admin.Auth(), "reader-wharf@example.com", "Reader").Auth()}
	rc.refused("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+" + user, "message": "no"}, 403, "PermissionError",
		"create on Platform Message for role Reader (needs the permission messages:create)")
	c.refused("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "not a number", "message": "x"}, 417, "ValidationError", "to")
	c.refused("POST", "/api/method/wharf.api.send_message", map[string]any{"to": "+" + user, "message": "x",
		"buttons": `[{"title":""}]`}, 417, "ValidationError", "title")
	if n := len(e.Sim.Messages(platformsim.MessageFilter{To: user})); n != 3 {
		t.Fatalf("refused sends reached the simulator: %d messages", n)
	}
	var pending int64
	e.DB.Raw(`SELECT count(*) FROM messages WHERE direction = 'outgoing'`).Scan(&pending)
	if pending != 3 {
		t.Fatalf("%d outgoing core messages, want 3", pending)
	}
	// Another organization does not see these documents.
	oc := frappeClient{t: t, e: e.Env, auth: newOrg(t, e, admin, "wharfother").Auth()}
	oc.refused("GET", "/api/resource/Platform%20Message/"+list["name"].(string), nil, 404, "DoesNotExistError", "not found")
	oc.refused("GET", "/api/method/wharf.api.get_message_status?message_id="+url.QueryEscape(msgID), nil, 404, "DoesNotExistError", "not found")
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}
