package e2e_test

import (
	"fmt"
	"strings"
	"testing"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

type catalogOut struct {
	ID                string       `json:"id"`
	ProviderCatalogID string       `json:"provider_catalog_id"`
	PlatformAccount   string       `json:"platform_account"`
	Name              string       `json:"name"`
	IsActive          bool         `json:"is_active"`
	ProductCount      int          `json:"product_count"`
	Products          []productOut `json:"products"`
}

type productOut struct {
	ID                string `json:"id"`
	ProviderProductID string `json:"provider_product_id"`
	Name              string `json:"name"`
	Description       string `json:"description"`
	Price             int64  `json:"price"`
	Currency          string `json:"currency"`
	URL               string `json:"url"`
	RetailerID        string `json:"retailer_id"`
	IsActive          bool   `json:"is_active"`
}

// Catalogs and products through the router and the simulator: mirrored to
// the provider first (a refusal or provider trouble stores nothing), price
// and currency rules, permissions by role, another organization sees
// nothing, deletes reach the provider and cascade here.
func TestCatalogsThroughTheRouter(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	admin := f.admin.Auth()
	manager := f.CreateUser(admin, "catalogs-manager@example.test", "Manager").Auth()
	agent := f.CreateUser(admin, "catalogs-agent@example.test", "Agent").Auth()
	stored := func(table string) int64 {
		var n int64
		if err := f.DB.Table(table).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		return n
	}
	atProvider := func() []platformsim.CatalogState { return f.Sim.Catalogs(f.WABA.ID) }

	create := map[string]any{"platform_account": "Main", "name": "Shop"}
	f.Do("POST", "/api/catalogs", create, agent).Expect(t, 403)
	f.Do("POST", "/api/catalogs", map[string]any{"name": "Shop"}, manager).Expect(t, 400)
	f.Do("POST", "/api/catalogs", map[string]any{"platform_account": "Main"}, manager).Expect(t, 400)
	if r := f.Do("POST", "/api/catalogs", map[string]any{"platform_account": "Nope", "name": "Shop"}, manager).Expect(t, 400); !strings.Contains(r.Message, `no account named "Nope"`) {
		t.Fatalf("unknown account: %q", r.Message)
	}
	// The provider refuses, then fails: nothing is stored either time.
	if err := f.Sim.InjectFault(platformsim.Fault{Method: "POST", Path: "/owned_product_catalogs", Code: 100, Details: "Catalog name is reserved", Times: 1}); err != nil {
		t.Fatal(err)
	}
	if r := f.Do("POST", "/api/catalogs", create, manager).Expect(t, 400); !strings.Contains(r.Message, "Catalog name is reserved") {
		t.Fatalf("provider refusal: %q", r.Message)
	}
	if err := f.Sim.InjectFault(platformsim.Fault{Method: "POST", Path: "/owned_product_catalogs", Code: 131000, Times: 1}); err != nil {
		t.Fatal(err)
	}
	f.Do("POST", "/api/catalogs", create, manager).Expect(t, 502)
	if stored("catalogs") != 0 || len(atProvider()) != 0 {
		t.Fatalf("refused creates stored %d catalogs here, %d at the provider", stored("catalogs"), len(atProvider()))
	}

	var cat catalogOut
	f.Do("POST", "/api/catalogs", create, manager).Expect(t, 201).Into(t, &cat)
	if cat.Name != "Shop" || cat.PlatformAccount != "Main" || cat.ProductCount != 0 || !cat.IsActive || cat.ProviderCatalogID == "" {
		t.Fatalf("created %+v", cat)
	}
	if at := atProvider(); len(at) != 1 || at[0].ID != cat.ProviderCatalogID || at[0].Name != "Shop" {
		t.Fatalf("at the provider %+v", at)
	}

	// Products: bad prices and currencies are refused before the provider.
	products := "/api/catalogs/" + cat.ID + "/products"
	productCalls := func() int {
		return f.Sim.CountRequests(platformsim.RequestFilter{Method: "POST", Path: cat.ProviderCatalogID + "/products"})
	}
	for _, c := range []struct {
		body string
		want string
	}{
		{`{"name":"Mug","price":19.99}`, "1999 for 19.99"},
		{`{"name":"Mug","price":0}`, "price must be above 0"},
		{`{"name":"Mug","price":-1}`, "price must be above 0"},
		{`{"name":"Mug","price":"100"}`, "not a string"},
		{`{"name":"Mug"}`, "price is required"},
		{`{"price":100}`, "name is required"},
		{`{"name":"Mug","price":100,"currency":"XYZ"}`, "ISO 4217"},
		{`{"name":"Mug","price":100,"currency":"dollars"}`, "ISO 4217"},
		{`{"name":"Mug","price":100,"url":"javascript:alert(1)"}`, "url must be an http or https URL"},
	} {
		if r := f.Do("POST", products, c.body, manager).Expect(t, 400); !strings.Contains(r.Message, c.want) {
			t.Errorf("%s: %q, want %q", c.body, r.Message, c.want)
		}
	}
	if stored("products") != 0 || productCalls() != 0 {
		t.Fatalf("refused products: %d stored, %d provider calls", stored("products"), productCalls())
	}
	f.Do("POST", products, `{"name":"Mug","price":100}`, agent).Expect(t, 403)
	var mug productOut
	f.Do("POST", products, map[string]any{"name": "Mug", "price": 1299, "description": "Blue", "url": "https://shop.example/mug"}, manager).
		Expect(t, 201).Into(t, &mug)
	if mug.Currency != "USD" || mug.Price != 1299 || mug.RetailerID != mug.ID || !mug.IsActive {
		t.Fatalf("mug %+v", mug)
	}
	at, ok := f.Sim.Product(mug.ProviderProductID)
	if !ok || at.Attrs["name"] != "Mug" || fmt.Sprint(at.Attrs["price"]) != "1299" || at.Attrs["currency"] != "USD" || at.Attrs["retailer_id"] != mug.ID {
		t.Fatalf("mug at the provider %+v", at)
	}
	var bowl productOut
	f.Do("POST", products, map[string]any{"name": "Bowl", "price": 850, "currency": "EUR", "retailer_id": "sku-bowl"}, manager).
		Expect(t, 201).Into(t, &bowl)
	if bowl.Currency != "EUR" {
		t.Fatalf("bowl %+v", bowl)
	}

	// Update: a decimal is refused; a zero price and empty fields are not
	// applied; only what changes reaches the provider.
	product := "/api/products/" + mug.ID
	f.Do("PUT", product, `{"price":12.5}`, manager).Expect(t, 400)
	f.Do("PUT", product, `{"currency":"ABC"}`, manager).Expect(t, 400)
	f.Do("PUT", product, map[string]any{"name": "x"}, agent).Expect(t, 403)
	since := f.Sim.Requests(platformsim.RequestFilter{})
	var up productOut
	f.Do("PUT", product, map[string]any{"name": "Big mug", "price": 0, "description": ""}, manager).Expect(t, 200).Into(t, &up)
	if up.Name != "Big mug" || up.Price != 1299 || up.Description != "Blue" {
		t.Fatalf("updated %+v", up)
	}
	sent := f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/" + mug.ProviderProductID, Since: since[len(since)-1].ID})
	if len(sent) != 1 || string(sent[0].Body) != `{"name":"Big mug"}` {
		t.Fatalf("update sent %+v", sent)
	}
	f.Do("PUT", product, map[string]any{"price": 1500}, manager).Expect(t, 200).Into(t, &up)
	if at, _ := f.Sim.Product(mug.ProviderProductID); fmt.Sprint(at.Attrs["price"]) != "1500" || at.Attrs["name"] != "Big mug" || up.Price != 1500 {
		t.Fatalf("after the price update: here %+v, at the provider %+v", up, at)
	}

	// The agent reads everything.
	var list struct {
		Catalogs []catalogOut `json:"catalogs"`
	}
	f.Do("GET", "/api/catalogs?platform_account=Main", nil, agent).Expect(t, 200).Into(t, &list)
	if len(list.Catalogs) != 1 || list.Catalogs[0].ProductCount != 2 {
		t.Fatalf("list %+v", list)
	}
	f.Do("GET", "/api/catalogs?platform_account=Nope", nil, agent).Expect(t, 400)
	var detail catalogOut
	f.Do("GET", "/api/catalogs/"+cat.ID, nil, agent).Expect(t, 200).Into(t, &detail)
	if len(detail.Products) != 2 || detail.Products[0].Name != "Big mug" || detail.Products[1].Name != "Bowl" {
		t.Fatalf("detail %+v", detail)
	}
	var plist struct {
		Products []productOut `json:"products"`
	}
	f.Do("GET", products, nil, agent).Expect(t, 200).Into(t, &plist)
	if len(plist.Products) != 2 {
		t.Fatalf("products %+v", plist)
	}
	f.Do("GET", product, nil, agent).Expect(t, 200)
	f.Do("DELETE", product, nil, agent).Expect(t, 403)
	f.Do("DELETE", "/api/catalogs/"+cat.ID, nil, agent).Expect(t, 403)

	// Another organization's admin finds none of it.
	var orgB struct{ ID string }
	f.Do("POST", "/api/organizations", map[string]string{"name": "Catalogs B"}, admin).Expect(t, 201).Into(t, &orgB)
	var inB apptest.Session
	f.Do("POST", "/api/auth/switch-org", map[string]string{"organization_id": orgB.ID}, admin).Expect(t, 200).Into(t, &inB)
	b := f.CreateUser(inB.Auth(), "catalogs-b@example.test", "Admin").Auth()
	for _, c := range []struct{ method, path string }{
		{"GET", "/api/catalogs/" + cat.ID}, {"DELETE", "/api/catalogs/" + cat.ID}, {"GET", products}, {"POST", products},
		{"GET", product}, {"PUT", product}, {"DELETE", product},
	} {
		f.Do(c.method, c.path, map[string]any{"name": "mine", "price": 100}, b).Expect(t, 404)
	}
	f.Do("GET", "/api/catalogs", nil, b).Expect(t, 200).Into(t, &list)
	if len(list.Catalogs) != 0 {
		t.Fatalf("organization B lists %+v", list)
	}
	f.Do("POST", "/api/catalogs", create, b).Expect(t, 400) // "Main" is not B's account
	f.Do("POST", "/api/catalogs/sync", map[string]any{"platform_account": "Main"}, b).Expect(t, 400)

	// Deletes reach the provider; a catalog's delete takes its products.
	f.Do("DELETE", product, nil, manager).Expect(t, 200)
	if _, ok := f.Sim.Product(mug.ProviderProductID); ok {
		t.Fatal("the deleted product is still at the provider")
	}
	f.Do("GET", product, nil, manager).Expect(t, 404)
	f.Do("DELETE", "/api/catalogs/"+cat.ID, nil, manager).Expect(t, 200)
	if len(atProvider()) != 0 {
		t.Fatalf("the deleted catalog is still at the provider: %+v", atProvider())
	}
	if stored("catalogs") != 0 || stored("products") != 0 {
		t.Fatalf("after the delete: %d catalogs, %d products", stored("catalogs"), stored("products"))
	}
	f.Do("GET", "/api/products/"+bowl.ID, nil, manager).Expect(t, 404)
}

// Sync over several pages of catalogs and products, run twice: nothing is
// duplicated, a catalog renamed at the provider is updated in place, one
// deleted there becomes inactive, and the counts say what changed.
func TestCatalogSyncTwice(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil, nil)
	admin := f.admin.Auth()
	agent := f.CreateUser(admin, "sync-agent@example.test", "Agent").Auth()
	var ids []string
	for i := range 120 { // the client asks 100 a page: two pages
		id, err := f.Sim.AddCatalog(f.WABA.ID, fmt.Sprintf("Catalog %03d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for i := range 150 {
		if _, err := f.Sim.AddProduct(ids[7], map[string]any{"retailer_id": fmt.Sprint("sku-", i), "name": fmt.Sprintf("Item %03d", i),
			"price": 100 + i, "currency": "GBP"}); err != nil {
			t.Fatal(err)
		}
	}
	f.Do("POST", "/api/catalogs/sync", map[string]any{"platform_account": "Main"}, agent).Expect(t, 403)
	f.Do("POST", "/api/catalogs/sync", map[string]any{}, admin).Expect(t, 400)
	f.Do("POST", "/api/catalogs/sync", map[string]any{"platform_account": "Nope"}, admin).Expect(t, 400)

	type syncOut struct {
		Message string `json:"message"`
		Synced  int    `json:"synced"`
		Total   int    `json:"total"`
	}
	var first, second, third syncOut
	f.Do("POST", "/api/catalogs/sync", map[string]any{"platform_account": "Main"}, admin).Expect(t, 200).Into(t, &first)
	if first.Synced != 120 || first.Total != 120 || first.Message == "" {
		t.Fatalf("first sync %+v", first)
	}
	pages := f.Sim.CountRequests(platformsim.RequestFilter{Method: "GET", Path: "/owned_product_catalogs"})
	productPages := f.Sim.CountRequests(platformsim.RequestFilter{Method: "GET", Path: ids[7] + "/products"})
	if pages != 2 || productPages != 2 {
		t.Fatalf("%d catalog pages, %d product pages read", pages, productPages)
	}
	var list struct {
		Catalogs []catalogOut `json:"catalogs"`
	}
	f.Do("GET", "/api/catalogs", nil, agent).Expect(t, 200).Into(t, &list)
	if len(list.Catalogs) != 120 || list.Catalogs[7].Name != "Catalog 007" || list.Catalogs[7].ProductCount != 150 {
		t.Fatalf("%d catalogs, [7] %+v", len(list.Catalogs), list.Catalogs[7])
	}
	renamedID := list.Catalogs[3].ID

	f.Do("POST", "/api/catalogs/sync", map[string]any{"platform_account": "main"}, admin).Expect(t, 200).Into(t, &second)
	if second.Synced != 0 || second.Total != 120 {
		t.Fatalf("second sync %+v", second)
	}
	if err := f.Sim.RenameCatalog(ids[3], "Renamed"); err != nil {
		t.Fatal(err)
	}
	if err := f.Sim.DeleteCatalog(ids[5]); err != nil {
		t.Fatal(err)
	}
	f.Do("POST", "/api/catalogs/sync", map[string]any{"platform_account": "Main"}, admin).Expect(t, 200).Into(t, &third)
	if third.Synced != 2 || third.Total != 119 {
		t.Fatalf("third sync %+v", third)
	}
	var renamed catalogOut
	f.Do("GET", "/api/catalogs/"+renamedID, nil, agent).Expect(t, 200).Into(t, &renamed)
	if renamed.Name != "Renamed" || renamed.ProviderCatalogID != ids[3] {
		t.Fatalf("renamed %+v", renamed)
	}
	var n, inactive, products int64
	f.DB.Table("catalogs").Count(&n)
	f.DB.Table("catalogs").Where("NOT is_active AND provider_catalog_id = ?", ids[5]).Count(&inactive)
	f.DB.Table("products").Count(&products)
	if n != 120 || inactive != 1 || products != 150 {
		t.Fatalf("%d catalogs (%d inactive), %d products", n, inactive, products)
	}
}
