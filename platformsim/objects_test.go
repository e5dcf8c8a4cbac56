package platformsim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"
)

// upload posts a multipart form with one file.
func (f *fixture) upload(t *testing.T, path string, fields map[string]string, filename, ctype string, data []byte) (int, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{`form-data; name="file"; filename="` + filename + `"`}
	h["Content-Type"] = []string{ctype}
	fw, _ := mw.CreatePart(h)
	_, _ = fw.Write(data)
	_ = mw.Close()
	req, _ := http.NewRequest("POST", f.srv.URL+path, &buf)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

func (f *fixture) download(t *testing.T, url, token string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func TestMediaUploadFetchDelete(t *testing.T) {
	f := setup(t, Config{SentAfter: -1, DeliveredAfter: -1, ReadAfter: -1})
	data := []byte("%PDF-1.4 test")
	code, out := f.upload(t, "/v21.0/"+f.phone+"/media", map[string]string{"messaging_product": "whatsapp", "type": "application/pdf"},
		"a.pdf", "application/pdf", data)
	id, _ := out["id"].(string)
	if code != 200 || id == "" {
		t.Fatalf("upload: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v21.0/"+id, testToken, nil)
	sum := sha256.Sum256(data)
	if code != 200 || out["mime_type"] != "application/pdf" || out["sha256"] != hex.EncodeToString(sum[:]) ||
		out["file_size"] != float64(len(data)) || out["messaging_product"] != "whatsapp" || out["id"] != id {
		t.Fatalf("media: %d %v", code, out)
	}
	mediaURL := out["url"].(string)
	if code, b := f.download(t, mediaURL, testToken); code != 200 || !bytes.Equal(b, data) {
		t.Errorf("download: %d %q", code, b)
	}
	if code, _ := f.download(t, mediaURL, ""); code != 401 {
		t.Errorf("download without token: %d", code)
	}
	// Sending by id works for own media.
	code, out = f.do(t, "POST", "/v21.0/"+f.phone+"/messages", testToken, map[string]any{"messaging_product": "whatsapp",
		"to": "15551234567", "type": "document", "document": map[string]any{"id": id, "filename": "a.pdf"}})
	if code != 200 {
		t.Errorf("send by media id: %d %v", code, out)
	}
	code, out = f.upload(t, "/v21.0/"+f.phone+"/media", map[string]string{"type": "image/png"}, "a.png", "image/png", data)
	wantError(t, code, out, 400, 100) // no messaging_product
	code, out = f.do(t, "DELETE", "/v21.0/"+id, testToken, nil)
	if code != 200 || out["success"] != true {
		t.Fatalf("delete: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v21.0/"+id, testToken, nil)
	wantError(t, code, out, 404, 100)
}

func TestIncomingMessages(t *testing.T) {
	f := setup(t, Config{})
	ctx := context.Background()
	id, status, err := f.sim.Incoming(ctx, Incoming{PhoneNumberID: f.phone, From: "15550001111", ProfileName: "Ana",
		Type: "text", Text: "Hi there", Timestamp: 1700000000})
	if err != nil || status != 200 || !strings.HasPrefix(id, "wamid.") {
		t.Fatalf("incoming: %q %d %v", id, status, err)
	}
	hooks := f.recv.messageHooks()
	if len(hooks) != 1 {
		t.Fatalf("%d hooks", len(hooks))
	}
	h := hooks[0]
	if h.Metadata.PhoneNumberID != f.phone || h.Metadata.DisplayPhoneNumber != "15550100001" ||
		len(h.Contacts) != 1 || h.Contacts[0].WaID != "15550001111" || h.Contacts[0].Profile.Name != "Ana" {
		t.Errorf("value %+v", h)
	}
	m := h.Messages[0]
	if m["from"] != "15550001111" || m["id"] != id || m["timestamp"] != "1700000000" || m["type"] != "text" ||
		m["text"].(map[string]any)["body"] != "Hi there" {
		t.Errorf("message %v", m)
	}

	// Media: the webhook names a media object that can be fetched.
	_, status, err = f.sim.Incoming(ctx, Incoming{PhoneNumberID: f.phone, From: "15550001111", Type: "image", Caption: "look"})
	if err != nil || status != 200 {
		t.Fatalf("incoming image: %d %v", status, err)
	}
	img := f.recv.messageHooks()[1].Messages[0]["image"].(map[string]any)
	if img["mime_type"] != "image/jpeg" || img["caption"] != "look" || img["sha256"] == "" {
		t.Errorf("image %v", img)
	}
	code, media := f.do(t, "GET", "/v21.0/"+img["id"].(string), testToken, nil)
	if code != 200 || media["sha256"] != img["sha256"] {
		t.Fatalf("media: %d %v", code, media)
	}
	code, b := f.download(t, media["url"].(string), testToken)
	sum := sha256.Sum256(b)
	if code != 200 || hex.EncodeToString(sum[:]) != img["sha256"] || http.DetectContentType(b) != "image/jpeg" {
		t.Errorf("download: %d %d bytes", code, len(b))
	}

	// Replies, buttons and flows through the control API; a forced id for a
	// redelivery.
	for _, in := range []map[string]any{
		{"type": "interactive", "interactive": map[string]any{"type": "button_reply", "id": "yes", "title": "Yes"}, "context_message_id": "wamid.ctx"},
		{"type": "interactive", "interactive": map[string]any{"type": "nfm_reply", "response_json": `{"flow_token":"t"}`}},
		{"type": "button", "button": map[string]any{"payload": "STOP", "text": "Stop"}, "message_id": id},
		{"type": "document", "mime_type": "application/pdf", "filename": "a.pdf"},
		{"type": "unsupported"},
	} {
		in["phone_number_id"] = f.phone
		in["from"] = "15550001111"
		code, out := f.do(t, "POST", "/_sim/incoming", "", in)
		if code != 200 || out["status_code"] != float64(200) || out["message_id"] == "" {
			t.Fatalf("control incoming %v: %d %v", in, code, out)
		}
	}
	hooks = f.recv.messageHooks()
	if it := hooks[2].Messages[0]; it["interactive"].(map[string]any)["button_reply"].(map[string]any)["id"] != "yes" ||
		it["context"].(map[string]any)["id"] != "wamid.ctx" {
		t.Errorf("button reply %v", it)
	}
	if nfm := hooks[3].Messages[0]["interactive"].(map[string]any)["nfm_reply"].(map[string]any); nfm["response_json"] != `{"flow_token":"t"}` {
		t.Errorf("nfm %v", nfm)
	}
	if m := hooks[4].Messages[0]; m["id"] != id || m["button"].(map[string]any)["payload"] != "STOP" {
		t.Errorf("button %v", m)
	}
	if doc := hooks[5].Messages[0]["document"].(map[string]any); doc["filename"] != "a.pdf" {
		t.Errorf("document %v", doc)
	}
	code, out := f.do(t, "POST", "/_sim/incoming", "", map[string]any{"phone_number_id": "1", "from": "1", "text": "x"})
	if code != 404 {
		t.Errorf("unknown phone: %d %v", code, out)
	}

	// Asynchronously, through the queue.
	code, out = f.do(t, "POST", "/_sim/incoming?async=true", "", map[string]any{"phone_number_id": f.phone, "from": "15550001111", "text": "later"})
	if code != 200 || out["queued"] != true {
		t.Fatalf("async: %d %v", code, out)
	}
	waitFor(t, time.Second, "async incoming", func() bool { return len(f.recv.messageHooks()) == 8 })

	// A backend that answers 500 is reported, not hidden.
	f.recv.failNext.Store(1)
	_, status, err = f.sim.Incoming(ctx, Incoming{PhoneNumberID: f.phone, From: "15550001111", Text: "x"})
	if err != nil || status != 500 {
		t.Errorf("failing backend: %d %v", status, err)
	}
}

func TestFlows(t *testing.T) {
	f := setup(t, Config{})
	code, out := f.do(t, "POST", "/v21.0/"+f.ba.ID+"/flows", testToken, map[string]any{"name": "signup", "categories": []string{"SIGN_UP"}})
	id, _ := out["id"].(string)
	if code != 200 || id == "" || out["success"] != true || len(out["validation_errors"].([]any)) != 0 {
		t.Fatalf("create: %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v21.0/"+f.ba.ID+"/flows", testToken, map[string]any{"name": "x", "categories": []string{"NOPE"}})
	wantError(t, code, out, 400, 100)

	code, out = f.do(t, "POST", "/v21.0/"+id+"/publish", testToken, nil)
	wantError(t, code, out, 400, 139001) // no JSON yet

	asset := func(data string) (int, map[string]any) {
		return f.upload(t, "/v21.0/"+id+"/assets", map[string]string{"name": "flow.json", "asset_type": "FLOW_JSON"},
			"flow.json", "application/json", []byte(data))
	}
	code, out = asset("{\n  \"version\": \"5.0\",\n  \"screens\": [ nope ]\n}")
	errs := out["validation_errors"].([]any)
	if code != 200 || len(errs) != 1 {
		t.Fatalf("invalid JSON: %d %v", code, out)
	}
	e := errs[0].(map[string]any)
	if e["error"] != "INVALID_JSON" || e["line_start"] != float64(3) || e["message"] == "" || e["error_type"] == "" ||
		e["column_start"] == nil || e["line_end"] == nil || e["column_end"] == nil {
		t.Errorf("validation error %v", e)
	}
	_, out = asset(`{"version": 5, "screens": [{"id": "A"}]}`)
	if n := len(out["validation_errors"].([]any)); n != 2 {
		t.Errorf("schema errors: %v", out)
	}
	code, out = f.do(t, "POST", "/v21.0/"+id+"/publish", testToken, nil)
	wantError(t, code, out, 400, 139001)

	_, out = asset(`{"version": "5.0", "screens": [{"id": "WELCOME", "layout": {"type": "SingleColumnLayout", "children": []}}]}`)
	if n := len(out["validation_errors"].([]any)); n != 0 {
		t.Fatalf("valid JSON rejected: %v", out)
	}
	code, out = f.do(t, "POST", "/v21.0/"+id+"/publish", testToken, nil)
	if code != 200 || out["success"] != true {
		t.Fatalf("publish: %d %v", code, out)
	}
	code, out = f.do(t, "GET", "/v21.0/"+id+"?fields=id,name,status,categories,validation_errors", testToken, nil)
	if code != 200 || out["status"] != "PUBLISHED" || out["name"] != "signup" || len(out["categories"].([]any)) != 1 {
		t.Errorf("get: %d %v", code, out)
	}
	code, out = f.do(t, "DELETE", "/v21.0/"+id, testToken, nil)
	wantError(t, code, out, 400, 139001) // only drafts
	code, _ = f.do(t, "POST", "/v21.0/"+id+"/deprecate", testToken, nil)
	if code != 200 {
		t.Fatalf("deprecate: %d", code)
	}
	_, out = f.do(t, "GET", "/v21.0/"+f.ba.ID+"/flows", testToken, nil)
	if d := out["data"].([]any); len(d) != 1 || d[0].(map[string]any)["status"] != "DEPRECATED" {
		t.Errorf("list: %v", out)
	}
	// The provider's own moves (quality checks) come from the control API.
	if err := f.sim.SetFlowStatus(id, "blocked"); err != nil {
		t.Fatal(err)
	}
	if _, out = f.do(t, "GET", "/v21.0/"+id, testToken, nil); out["status"] != "BLOCKED" {
		t.Errorf("after SetFlowStatus: %v", out)
	}
	if err := f.sim.SetFlowStatus(id, "GONE"); err == nil {
		t.Error("an unknown status was set")
	}
	if err := f.sim.SetFlowStatus("404", "DRAFT"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown flow: %v", err)
	}
	_, out = f.do(t, "GET", "/v21.0/"+id+"/assets", testToken, nil)
	if d := out["data"].([]any); len(d) != 1 {
		t.Fatalf("assets %v", out)
	} else if code, b := f.download(t, d[0].(map[string]any)["download_url"].(string), ""); code != 200 || !strings.Contains(string(b), "WELCOME") {
		t.Errorf("asset download: %d %s", code, b)
	}
}

func TestCatalogs(t *testing.T) {
	f := setup(t, Config{})
	code, out := f.do(t, "POST", "/v21.0/"+f.ba.ID+"/owned_product_catalogs", testToken, map[string]any{"name": "Shop"})
	cat, _ := out["id"].(string)
	if code != 200 || cat == "" {
		t.Fatalf("catalog: %d %v", code, out)
	}
	product := map[string]any{"retailer_id": "sku-1", "name": "Mug", "description": "Blue", "price": 1299, "currency": "USD",
		"image_url": "https://example.com/mug.png", "url": "https://example.com/mug"}
	code, out = f.do(t, "POST", "/v21.0/"+cat+"/products", testToken, product)
	pid, _ := out["id"].(string)
	if code != 200 || pid == "" {
		t.Fatalf("product: %d %v", code, out)
	}
	code, out = f.do(t, "POST", "/v21.0/"+cat+"/products", testToken, product)
	wantError(t, code, out, 400, 10800)
	code, out = f.do(t, "POST", "/v21.0/"+pid, testToken, map[string]any{"price": 1499})
	if code != 200 || out["success"] != true {
		t.Fatalf("update: %d %v", code, out)
	}
	_, out = f.do(t, "GET", "/v21.0/"+cat+"/products", testToken, nil)
	items := out["data"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["price"] != float64(1499) || items[0].(map[string]any)["retailer_id"] != "sku-1" {
		t.Errorf("products %v", out)
	}
	_, out = f.do(t, "GET", "/v21.0/"+f.ba.ID+"/owned_product_catalogs", testToken, nil)
	if d := out["data"].([]any); len(d) != 1 || d[0].(map[string]any)["product_count"] != float64(1) || out["paging"] == nil {
		t.Errorf("catalogs %v", out)
	}
	if code, _ := f.do(t, "DELETE", "/v21.0/"+pid, testToken, nil); code != 200 {
		t.Errorf("delete product: %d", code)
	}
	if code, _ := f.do(t, "DELETE", "/v21.0/"+cat, testToken, nil); code != 200 {
		t.Errorf("delete catalog: %d", code)
	}
	code, out = f.do(t, "GET", "/v21.0/"+cat, testToken, nil)
	wantError(t, code, out, 404, 100)
	// Phone numbers cannot be deleted or updated.
	code, out = f.do(t, "DELETE", "/v21.0/"+f.phone, testToken, nil)
	wantError(t, code, out, 400, 100)
}

func TestCalls(t *testing.T) {
	f := setup(t, Config{})
	path := "/v21.0/" + f.phone + "/calls"
	connect := map[string]any{"messaging_product": "whatsapp", "to": "15550001111", "action": "connect",
		"session": map[string]any{"sdp_type": "offer", "sdp": "v=0..."}}

	code, out := f.do(t, "GET", path[:len(path)-len("calls")]+"call_permissions?user_wa_id=15550001111", testToken, nil)
	if code != 200 || out["permission"].(map[string]any)["status"] != "no_permission" {
		t.Fatalf("permissions: %d %v", code, out)
	}
	if a := out["actions"].([]any)[1].(map[string]any); a["action_name"] != "start_call" || a["can_perform_action"] != false {
		t.Errorf("actions %v", out["actions"])
	}
	code, out = f.do(t, "POST", path, testToken, connect)
	wantError(t, code, out, 400, 138006)

	code, _ = f.do(t, "PUT", "/_sim/call_permissions", "", map[string]any{"phone_number_id": f.phone, "user_wa_id": "15550001111", "status": "temporary"})
	if code != 200 {
		t.Fatalf("set permission: %d", code)
	}
	_, out = f.do(t, "GET", "/v21.0/"+f.phone+"/call_permissions?user_wa_id=15550001111", testToken, nil)
	perm := out["permission"].(map[string]any)
	if perm["status"] != "temporary" || perm["expiration_time"].(float64) < float64(time.Now().Unix()) {
		t.Errorf("permission %v", perm)
	}
	code, out = f.do(t, "POST", path, testToken, connect)
	if code != 200 || out["messaging_product"] != "whatsapp" {
		t.Fatalf("connect: %d %v", code, out)
	}
	callID := out["calls"].([]any)[0].(map[string]any)["id"].(string)
	if !strings.HasPrefix(callID, "wacid.") {
		t.Errorf("call id %q", callID)
	}
	code, out = f.do(t, "POST", path, testToken, map[string]any{"messaging_product": "whatsapp", "call_id": callID, "action": "terminate"})
	if code != 200 || out["success"] != true {
		t.Fatalf("terminate: %d %v", code, out)
	}
	code, out = f.do(t, "POST", path, testToken, map[string]any{"messaging_product": "whatsapp", "call_id": callID, "action": "terminate"})
	wantError(t, code, out, 400, 100)

	// A user calls in; the business accepts.
	code, out = f.do(t, "POST", "/_sim/calls", "", map[string]any{"phone_number_id": f.phone, "from": "15550002222"})
	if code != 200 || out["status_code"] != float64(200) {
		t.Fatalf("incoming call: %d %v", code, out)
	}
	inID := out["call_id"].(string)
	// The business-initiated call above may have rung (a status webhook);
	// only call events are counted.
	if hs := f.recv.callEventHooks(); len(hs) != 1 {
		t.Fatalf("calls event hooks %d", len(hs))
	}
	answer := map[string]any{"sdp_type": "answer", "sdp": "v=0..."}
	for _, action := range []string{"pre_accept", "accept"} {
		code, out = f.do(t, "POST", path, testToken, map[string]any{"messaging_product": "whatsapp", "call_id": inID, "action": action, "session": answer})
		if code != 200 {
			t.Fatalf("%s: %d %v", action, code, out)
		}
	}
	if status, err := f.sim.TerminateCall(context.Background(), inID); err != nil || status != 200 {
		t.Fatalf("user hang-up: %d %v", status, err)
	}
	hs := f.recv.callEventHooks()
	if ev := hs[1].Calls[0]; ev["event"] != "terminate" || ev["status"] != "COMPLETED" {
		t.Errorf("terminate event %v", ev)
	}
}

func TestRequestLog(t *testing.T) {
	f := setup(t, Config{SentAfter: -1, DeliveredAfter: -1, ReadAfter: -1})
	f.sendText(t, "15551234567", map[string]any{"biz_opaque_callback_data": "x"})
	f.do(t, "GET", "/v21.0/"+f.phone, testToken, nil)
	f.do(t, "GET", "/_sim/config", "", nil) // control calls are not recorded
	f.do(t, "POST", "/v21.0/"+f.phone+"/messages", "bad", "not json")

	all := f.sim.Requests(RequestFilter{})
	if len(all) != 3 {
		t.Fatalf("%d requests: %+v", len(all), all)
	}
	first := all[0]
	var body map[string]any
	if err := json.Unmarshal(first.Body, &body); err != nil || body["biz_opaque_callback_data"] != "x" {
		t.Errorf("body %s", first.Body)
	}
	if first.Method != "POST" || first.Path != "/v21.0/"+f.phone+"/messages" || first.Status != 200 || first.ErrorCode != 0 {
		t.Errorf("first %+v", first)
	}
	if last := all[2]; last.Status != 401 || last.ErrorCode != 190 || string(last.Body) != `"not json"` {
		t.Errorf("last %+v body %s", last, last.Body)
	}

	code, out := f.do(t, "GET", "/_sim/requests?method=post&path=/messages", "", nil)
	if d := out["data"].([]any); code != 200 || len(d) != 2 {
		t.Errorf("filtered: %d %v", code, out)
	}
	_, out = f.do(t, "GET", "/_sim/requests?since="+itoa(int(all[0].ID)), "", nil)
	if d := out["data"].([]any); len(d) != 2 {
		t.Errorf("since: %v", out)
	}
	_, out = f.do(t, "GET", "/_sim/requests/count?method=GET", "", nil)
	if out["count"] != float64(1) {
		t.Errorf("count: %v", out)
	}
	if n := f.sim.CountRequests(RequestFilter{}); n != 3 {
		t.Errorf("count all %d", n)
	}
	f.do(t, "DELETE", "/_sim/requests", "", nil)
	if n := f.sim.CountRequests(RequestFilter{}); n != 0 {
		t.Errorf("after clear %d", n)
	}
}

func TestControlConfigAndReset(t *testing.T) {
	f := setup(t, Config{SentAfter: time.Hour, DeliveredAfter: -1, ReadAfter: -1})
	code, out := f.do(t, "PUT", "/_sim/config", "", map[string]any{"sent_after_ms": 5, "fail_recipients": map[string]int{"15550000000": 131049}, "status_batch_size": 3})
	if code != 200 || out["sent_after_ms"] != float64(5) || out["delivered_after_ms"] != float64(-1) || out["status_batch_size"] != float64(3) ||
		out["throughput_per_second"] != float64(80) || out["template_approval_delay_ms"] != float64(2000) || out["webhook_url"] != f.hookURL {
		t.Fatalf("config: %d %v", code, out)
	}
	if c := f.sim.Config(); c.FailRecipients["15550000000"] != 131049 || c.SentAfter != 5*time.Millisecond {
		t.Errorf("Config() %+v", c)
	}
	if code, _ := f.do(t, "PUT", "/_sim/config", "", map[string]any{"error_rate": 2}); code != 400 {
		t.Errorf("bad error rate: %d", code)
	}
	if code, _ := f.do(t, "PUT", "/_sim/config", "", map[string]any{"nonsense": 1}); code != 400 {
		t.Errorf("unknown field: %d", code)
	}

	f.sendText(t, "15551234567", nil)
	waitFor(t, time.Second, "status", func() bool { return len(f.sim.Webhooks()) == 1 })
	f.sim.UpdateConfig(func(c *Config) { c.SentAfter = 50 * time.Millisecond })
	f.sendText(t, "15551234567", nil) // its status must not survive the reset
	code, _ = f.do(t, "POST", "/_sim/reset", "", nil)
	if code != 200 {
		t.Fatal(code)
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(f.sim.Messages(MessageFilter{})); n != 0 {
		t.Errorf("%d messages after reset", n)
	}
	if n := len(f.sim.Webhooks()); n != 0 {
		t.Errorf("%d webhooks after reset", n)
	}
	if n := f.sim.CountRequests(RequestFilter{}); n != 0 {
		t.Errorf("%d requests after reset", n)
	}
	// Accounts survive.
	if code, _ := f.do(t, "GET", "/v21.0/"+f.phone, testToken, nil); code != 200 {
		t.Errorf("phone after reset: %d", code)
	}
	code, out = f.do(t, "GET", "/_sim/messages", "", nil)
	if code != 200 || len(out["data"].([]any)) != 0 {
		t.Errorf("messages: %v", out)
	}
	code, out = f.do(t, "GET", "/_sim/webhooks", "", nil)
	if code != 200 || out["data"] == nil {
		t.Errorf("webhooks: %v", out)
	}
	code, out = f.do(t, "GET", "/_sim/health", "", nil)
	if code != 200 || out["status"] != "ok" {
		t.Errorf("health: %v", out)
	}
}
