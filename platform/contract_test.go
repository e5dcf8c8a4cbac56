package platform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"wharf/platform"
	"wharf/platformsim"
)

// The client and the simulator were both written from the provider's
// documentation; this test makes each call of the client against the
// simulator, so a disagreement about a URL or a JSON shape fails here.
func TestClientAgainstSimulator(t *testing.T) {
	sim := platformsim.New(platformsim.Config{AppSecret: "app-secret", TemplateApprovalDelay: 20 * time.Millisecond,
		ThroughputPerSecond: 3, SentAfter: -1, DeliveredAfter: -1, ReadAfter: -1})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	defer sim.Close()
	sim.SetBaseURL(srv.URL)
	waba := sim.AddBusinessAccount(platformsim.BusinessAccount{Name: "Acme", AccessToken: "tok",
		PhoneNumbers: []platformsim.PhoneNumber{{DisplayPhoneNumber: "+1 555-000-1234", VerifiedName: "Acme", MessagingLimitTier: "TIER_10K"}}})
	cr := platform.Creds{AccessToken: "tok", PhoneNumberID: waba.PhoneNumbers[0].ID, BusinessAccountID: waba.ID}
	c := platform.New(srv.URL, "v21.0", nil)
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// Phone numbers and onboarding.
	pn, err := c.PhoneNumber(ctx, cr)
	must(err)
	if pn.DisplayPhoneNumber != "+1 555-000-1234" || pn.Tier() != "TIER_10K" || pn.QualityRating != "GREEN" || pn.IsCoexistence() {
		t.Fatalf("phone %+v", pn)
	}
	phones, err := c.PhoneNumbers(ctx, "tok", waba.ID)
	must(err)
	if len(phones) != 1 || phones[0].ID != cr.PhoneNumberID {
		t.Fatalf("phones %+v", phones)
	}
	must(c.Register(ctx, cr, "123456"))
	must(c.SubscribeApp(ctx, "tok", waba.ID))
	sim.AddOAuthCode(platformsim.OAuthCode{Code: "code", AccessToken: "user-tok", WABAIDs: []string{waba.ID}})
	token, err := c.ExchangeCode(ctx, platformsim.DefaultAppID, "app-secret", "code")
	must(err)
	info, err := c.DebugToken(ctx, platformsim.DefaultAppID, "app-secret", token)
	must(err)
	if got := info.Targets("whatsapp_business_management"); len(got) != 1 || got[0] != waba.ID {
		t.Fatalf("debug_token %+v", info)
	}
	shared, err := c.SharedBusinessAccounts(ctx, token)
	must(err)
	if len(shared) != 1 || shared[0].ID != waba.ID {
		t.Fatalf("shared %+v", shared)
	}
	if _, err := c.ExchangeCode(ctx, platformsim.DefaultAppID, "app-secret", "code"); platform.ClassOf(err) != platform.Permanent {
		t.Fatalf("reused code: %v", err)
	}

	// Templates: create, approval, paging, delete.
	for i := 0; i < 30; i++ {
		comps, _ := json.Marshal([]map[string]any{{"type": "BODY", "text": "Hello {{1}}", "example": map[string]any{"body_text": [][]string{{"x"}}}}})
		_, err := c.CreateTemplate(ctx, cr, platform.TemplateDefinition{Name: fmt.Sprintf("t_%02d", i), Language: "en_US", Category: "UTILITY", Components: comps})
		must(err)
	}
	time.Sleep(100 * time.Millisecond)
	page, err := c.ListTemplates(ctx, cr, "", 25)
	must(err)
	if len(page.Data) != 25 || page.Paging.Next == "" {
		t.Fatalf("first page %d", len(page.Data))
	}
	all, err := c.AllTemplates(ctx, cr)
	must(err)
	if len(all) != 30 || all[0].Status != "APPROVED" {
		t.Fatalf("all templates %d", len(all))
	}
	must(c.DeleteTemplate(ctx, cr, "t_29", ""))

	// Sends: text, template, interactive; the throughput cap is classified as throttled.
	text := platform.NewMessage("15550001111", "text")
	text.Text = &platform.Text{Body: "hi"}
	res, err := c.Send(ctx, cr, text)
	must(err)
	if !strings.HasPrefix(res.MessageID, "wamid.") || res.WaID != "15550001111" {
		t.Fatalf("send %+v", res)
	}
	tm := platform.NewMessage("15550001111", "template")
	tm.Template = &platform.Template{Name: "t_00", Language: platform.TemplateLanguage{Code: "en_US"},
		Components: []platform.TemplateComponent{{Type: "body", Parameters: []platform.TemplateParameter{{Type: "text", Text: "Jo"}}}}}
	_, err = c.Send(ctx, cr, tm)
	must(err)
	im := platform.NewMessage("15550001111", "interactive")
	im.Interactive = &platform.Interactive{Type: "button", Body: &platform.InteractiveText{Text: "Pick"},
		Action: platform.InteractiveAction{Buttons: []platform.ReplyButton{{Type: "reply", Reply: platform.ReplyDetail{ID: "y", Title: "Yes"}}}}}
	_, err = c.Send(ctx, cr, im)
	must(err)
	_, err = c.Send(ctx, cr, text)
	if pe, ok := platform.AsError(err); !ok || pe.Code != platform.CodeThroughput || !platform.IsThrottled(err) {
		t.Fatalf("fourth send within a second: %v, want throttled 130429", err)
	}
	time.Sleep(1100 * time.Millisecond)
	_, err = c.Send(ctx, cr, text)
	must(err)
	tm.Template.Components = nil
	if _, err := c.Send(ctx, cr, tm); err == nil || platform.ClassOf(err) != platform.Permanent {
		t.Fatalf("template without its parameter: %v", err)
	} else if pe, _ := platform.AsError(err); pe.Code != platform.CodeTemplateParamCount {
		t.Fatalf("code %d", pe.Code)
	}
	must(c.MarkRead(ctx, cr, res.MessageID))

	// Media.
	mediaID, err := c.UploadMedia(ctx, cr, "a.png", "image/png", strings.NewReader("\x89PNG fake"))
	must(err)
	mi, err := c.Media(ctx, cr, mediaID)
	must(err)
	if mi.MimeType != "image/png" || mi.URL == "" {
		t.Fatalf("media %+v", mi)
	}
	must(c.DeleteMedia(ctx, cr, mediaID))

	// Flows.
	flowID, err := c.CreateFlow(ctx, cr, "Signup", []string{"SIGN_UP"})
	must(err)
	if data, err := c.FlowJSON(ctx, cr, flowID); err != nil || data != nil {
		t.Fatalf("flow JSON before any upload: %q, %v", data, err)
	}
	must(c.UpdateFlow(ctx, cr, flowID, "Sign up", []string{"SIGN_UP", "OTHER"}))
	verrs, err := c.UploadFlowJSON(ctx, cr, flowID, []byte(`{"version":"3.1"}`))
	must(err)
	if len(verrs) == 0 {
		t.Fatal("a flow without screens passed validation")
	}
	if err := c.PublishFlow(ctx, cr, flowID); err == nil {
		t.Fatal("an invalid flow was published")
	}
	verrs, err = c.UploadFlowJSON(ctx, cr, flowID, []byte(`{"version":"3.1","screens":[{"id":"A","title":"A","layout":{"type":"SingleColumnLayout","children":[]}}]}`))
	must(err)
	if len(verrs) != 0 {
		t.Fatalf("validation errors %+v", verrs)
	}
	if data, err := c.FlowJSON(ctx, cr, flowID); err != nil || !strings.Contains(string(data), `"SingleColumnLayout"`) {
		t.Fatalf("flow JSON: %q, %v", data, err)
	}
	must(c.PublishFlow(ctx, cr, flowID))
	if err := c.UpdateFlow(ctx, cr, flowID, "Renamed", nil); err == nil {
		t.Fatal("a published flow was renamed")
	}
	must(c.DeprecateFlow(ctx, cr, flowID))
	f, err := c.GetFlow(ctx, cr, flowID)
	must(err)
	flows, err := c.ListFlows(ctx, cr)
	must(err)
	if f.Status != "DEPRECATED" || f.Name != "Sign up" || len(f.Categories) != 2 || len(flows) != 1 {
		t.Fatalf("flow %+v, %d flows", f, len(flows))
	}

	// Catalogs and products, paged past one page of each.
	catID, err := c.CreateCatalog(ctx, cr, "Shop")
	must(err)
	for i := range 101 {
		_, err := sim.AddCatalog(waba.ID, fmt.Sprintf("Seeded %03d", i))
		must(err)
	}
	prodID, err := c.CreateProduct(ctx, cr, catID, platform.Product{RetailerID: "sku-1", Name: "Mug", Price: 1299, Currency: "USD"})
	must(err)
	for i := range 100 {
		_, err := sim.AddProduct(catID, map[string]any{"retailer_id": fmt.Sprintf("seeded-%d", i), "name": "Seeded", "price": 100})
		must(err)
	}
	must(c.UpdateProduct(ctx, cr, prodID, platform.Product{Price: 1499}))
	prods, err := c.AllProducts(ctx, cr, catID)
	must(err)
	cats, err := c.AllCatalogs(ctx, cr)
	must(err)
	if len(prods) != 101 || prods[0].Price != 1499 || prods[0].Name != "Mug" || prods[0].Currency != "USD" || prods[0].RetailerID != "sku-1" ||
		len(cats) != 102 || cats[0].ProductCount != 101 || cats[101].Name != "Seeded 100" {
		t.Fatalf("%d products (first %+v), %d catalogs", len(prods), prods[0], len(cats))
	}
	must(c.DeleteObject(ctx, cr, prodID))
	if err := c.DeleteObject(ctx, cr, prodID); !platform.IsUnknownObject(err) {
		t.Fatalf("second delete of a product: %v", err)
	}
	must(c.DeleteObject(ctx, cr, catID))
	if err := c.UpdateProduct(ctx, cr, "1", platform.Product{Name: "x"}); !platform.IsUnknownObject(err) {
		t.Fatalf("update of an unknown product: %v", err)
	}

	// Calls: no permission, then permission.
	if _, err := c.Connect(ctx, cr, "15550001111", platform.CallSession{SDPType: "offer", SDP: "v=0"}); err == nil {
		t.Fatal("call without permission")
	} else if pe, _ := platform.AsError(err); pe.Code != platform.CodeNoCallPermission {
		t.Fatalf("code %d", pe.Code)
	}
	must(sim.SetCallPermission(cr.PhoneNumberID, "15550001111", platformsim.PermissionTemporary))
	perm, err := c.CallPermissions(ctx, cr, "15550001111")
	must(err)
	callID, err := c.Connect(ctx, cr, "15550001111", platform.CallSession{SDPType: "offer", SDP: "v=0"})
	must(err)
	must(c.CallAction(ctx, cr, callID, "terminate", nil))
	if perm.Permission.Status != "temporary" || !strings.HasPrefix(callID, "wacid.") {
		t.Fatalf("permission %+v call %q", perm, callID)
	}

	// A bad token is the provider's 190, permanent.
	_, err = c.PhoneNumber(ctx, platform.Creds{AccessToken: "nope", PhoneNumberID: cr.PhoneNumberID})
	if pe, ok := platform.AsError(err); !ok || pe.Code != platform.CodeInvalidToken || pe.Class != platform.Permanent || pe.FBTraceID == "" {
		t.Fatalf("bad token: %v", err)
	}
}
