package platformsim

import (
	"errors"
	"testing"
)

// Catalogs and products seeded through the control API page like the
// provider's other lists, and read back through both APIs.
func TestCatalogSeedingAndPaging(t *testing.T) {
	f := setup(t, Config{})
	var ids []string
	for _, name := range []string{"A", "B", "C", "D", "E"} {
		code, out := f.do(t, "POST", "/_sim/catalogs", "", map[string]any{"business_account_id": f.ba.ID, "name": name})
		if code != 200 || out["id"] == "" {
			t.Fatalf("seed catalog: %d %v", code, out)
		}
		ids = append(ids, out["id"].(string))
	}
	code, out := f.do(t, "POST", "/_sim/catalogs", "", map[string]any{"business_account_id": "999", "name": "X"})
	if code != 404 {
		t.Fatalf("catalog of an unknown business account: %d %v", code, out)
	}
	for i := range 3 {
		code, out := f.do(t, "POST", "/_sim/catalogs/"+ids[0]+"/products", "", map[string]any{"retailer_id": "sku-" + itoa(i),
			"name": "P" + itoa(i), "price": 100 + i, "currency": "EUR"})
		if code != 200 || out["id"] == "" {
			t.Fatalf("seed product: %d %v", code, out)
		}
	}
	if code, _ := f.do(t, "POST", "/_sim/catalogs/"+ids[0]+"/products", "", map[string]any{"name": "no sku"}); code != 400 {
		t.Fatalf("a product without retailer_id was seeded: %d", code)
	}

	// Two catalogs a page: three pages, the last without next.
	var seen []string
	path := "/v21.0/" + f.ba.ID + "/owned_product_catalogs?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("paging does not end")
		}
		code, out := f.do(t, "GET", path, testToken, nil)
		if code != 200 {
			t.Fatalf("list: %d %v", code, out)
		}
		for _, c := range out["data"].([]any) {
			seen = append(seen, c.(map[string]any)["name"].(string))
		}
		path = ""
		if p, ok := out["paging"].(map[string]any); ok {
			if next, ok := p["next"].(string); ok {
				path = next
			}
		}
	}
	if len(seen) != 5 || seen[0] != "A" || seen[4] != "E" {
		t.Fatalf("paged catalogs %v", seen)
	}
	_, out = f.do(t, "GET", "/v21.0/"+ids[0]+"/products?limit=2&fields=name,price", testToken, nil)
	if d := out["data"].([]any); len(d) != 2 || d[0].(map[string]any)["price"] != float64(100) || out["paging"].(map[string]any)["next"] == nil {
		t.Fatalf("first product page %v", out)
	}

	if err := f.sim.RenameCatalog(ids[1], "B2"); err != nil {
		t.Fatal(err)
	}
	if c, ok := f.sim.Catalog(ids[1]); !ok || c.Name != "B2" || c.BusinessAccountID != f.ba.ID {
		t.Fatalf("renamed %+v %v", c, ok)
	}
	if c, _ := f.sim.Catalog(ids[0]); len(c.Products) != 3 || c.Products[2].Attrs["retailer_id"] != "sku-2" {
		t.Fatalf("products %+v", c.Products)
	}
	if err := f.sim.DeleteCatalog(ids[0]); err != nil {
		t.Fatal(err)
	}
	if len(f.sim.Catalogs(f.ba.ID)) != 4 {
		t.Fatalf("catalogs after delete: %+v", f.sim.Catalogs(f.ba.ID))
	}
	if err := f.sim.RenameCatalog(ids[0], "gone"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("rename of a deleted catalog: %v", err)
	}
	// The other business account's token sees none of them.
	code, out = f.do(t, "GET", "/v21.0/"+ids[1]+"/products", otherToken, nil)
	wantError(t, code, out, 401, 190)
}

// An injected fault answers matching requests with the provider's error
// and changes nothing; it ends after Times failures.
func TestInjectedFaults(t *testing.T) {
	f := setup(t, Config{})
	path := "/v21.0/" + f.ba.ID + "/owned_product_catalogs"
	if code, _ := f.do(t, "POST", "/_sim/faults", "", map[string]any{"method": "POST", "path": "/owned_product_catalogs", "code": 12345}); code != 400 {
		t.Fatalf("unsupported code accepted: %d", code)
	}
	if code, _ := f.do(t, "POST", "/_sim/faults", "", map[string]any{"method": "POST", "path": "/owned_product_catalogs", "code": 100,
		"details": "Catalog name is not allowed", "times": 1}); code != 200 {
		t.Fatal("fault refused")
	}
	code, out := f.do(t, "POST", path, testToken, map[string]any{"name": "Shop"})
	if e := wantError(t, code, out, 400, 100); e["error_data"].(map[string]any)["details"] != "Catalog name is not allowed" {
		t.Fatalf("fault details %v", e)
	}
	if n := len(f.sim.Catalogs(f.ba.ID)); n != 0 {
		t.Fatalf("a refused create stored %d catalogs", n)
	}
	// The GET of the same path is not matched; the fault is used up.
	if code, _ := f.do(t, "GET", path, testToken, nil); code != 200 {
		t.Fatalf("list under a POST fault: %d", code)
	}
	if code, out := f.do(t, "POST", path, testToken, map[string]any{"name": "Shop"}); code != 200 {
		t.Fatalf("create after the fault: %d %v", code, out)
	}
	if err := f.sim.InjectFault(Fault{Path: "/products", Code: 131000}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		code, out := f.do(t, "GET", "/v21.0/123/products", testToken, nil)
		wantError(t, code, out, 500, 131000)
	}
	f.do(t, "DELETE", "/_sim/faults", "", nil)
	code, out = f.do(t, "GET", "/v21.0/123/products", testToken, nil)
	wantError(t, code, out, 404, 100) // no such catalog: the provider's unknown-id error
}
