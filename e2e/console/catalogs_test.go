package console

import (
	"testing"

	"wharf/internal/apptest"
)

type productRow struct {
	ID                string `json:"id"`
	ProviderProductID string `json:"provider_product_id"`
	Name              string `json:"name"`
	Description       string `json:"description"`
	Price             int64  `json:"price"`
	Currency          string `json:"currency"`
	URL               string `json:"url"`
	ImageURL          string `json:"image_url"`
	RetailerID        string `json:"retailer_id"`
}

// TestConsoleCatalogs drives the catalogs pages against the real system and
// the provider's simulator: a catalog created under the account; a product
// added (a price with too many decimals refused in the form, an image URL
// that is not http refused by the API under Image URL), its price entered
// as on a price tag and held in the currency's smallest unit; the product
// edited (price and currency); deleted, then the catalog deleted, each after
// asking; an Agent (catalogs:read) sees the products without controls.
func TestConsoleCatalogs(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	type catalogRow struct {
		ID                string `json:"id"`
		Name              string `json:"name"`
		ProviderCatalogID string `json:"provider_catalog_id"`
		PlatformAccount   string `json:"platform_account"`
	}
	catalogs := func() []catalogRow {
		var out struct {
			Catalogs []catalogRow `json:"catalogs"`
		}
		f.Do("GET", "/api/catalogs", nil, admin).Expect(t, 200).Into(t, &out)
		return out.Catalogs
	}
	var catalogID string
	products := func() map[string]productRow {
		var out struct {
			Products []productRow `json:"products"`
		}
		f.Do("GET", "/api/catalogs/"+catalogID+"/products", nil, admin).Expect(t, 200).Into(t, &out)
		m := map[string]productRow{}
		for _, x := range out.Products {
			m[x.Name] = x
		}
		return m
	}

	t.Run("a catalog created under the account", func(t *testing.T) {
		p.in(t)
		p.click("link", "Catalogs")
		p.seeRole("heading", "Catalogs")
		p.see("No catalog yet.")
		p.click("button", "New catalog")
		p.seeRole("heading", "New catalog")
		p.choose("Account", "Main")
		p.fill("Name", "Spring shop")
		p.axe("new catalog")
		p.submitDialog()
		p.see("Catalog Spring shop created.")
		cs := catalogs()
		if len(cs) != 1 || cs[0].Name != "Spring shop" || cs[0].PlatformAccount != "Main" || cs[0].ProviderCatalogID == "" {
			t.Fatalf("the server holds %+v", cs)
		}
		catalogID = cs[0].ID
		if at := f.Sim.Catalogs(f.WABA.ID); len(at) != 1 || at[0].Name != "Spring shop" {
			t.Fatalf("the provider holds %+v", at)
		}
	})

	t.Run("a product added; bad price and image URL refused next to them", func(t *testing.T) {
		p.in(t)
		p.click("link", "Products of Spring shop")
		p.seeRole("heading", "Spring shop")
		p.see("No product in this catalog yet.")
		p.click("button", "Add product")
		p.seeRole("heading", "Add product")
		p.fill("Name", "Blue mug")
		p.fill("Price", "12.505")
		p.fill("Description", "Stoneware, 350 ml")
		p.fill("Product page URL", "https://shop.example.com/blue-mug")
		p.fill("Image URL", "ftp://shop.example.com/blue-mug.jpg")
		p.fill("Retailer ID", "MUG-BLUE")
		p.submitDialog()
		seeErrorAt(p, "Price", "Price has at most 2 decimals in USD.")
		p.fill("Price", "12.50")
		p.submitDialog()
		seeErrorAt(p, "Image URL", "image_url must be an http or https URL")
		if e := errorOf(p, "Price"); e != "As written on a price tag: 19.99." {
			t.Fatalf("the Price field still says %q", e)
		}
		p.fill("Image URL", "https://shop.example.com/blue-mug.jpg")
		p.axe("add product")
		p.submitDialog()
		p.see("Product Blue mug added.")
		p.see("$12.50")
		got := products()["Blue mug"]
		if got.Price != 1250 || got.Currency != "USD" || got.RetailerID != "MUG-BLUE" || got.ImageURL != "https://shop.example.com/blue-mug.jpg" ||
			got.URL != "https://shop.example.com/blue-mug" || got.Description != "Stoneware, 350 ml" || got.ProviderProductID == "" {
			t.Fatalf("the server holds %+v", got)
		}
		if at, ok := f.Sim.Product(got.ProviderProductID); !ok || at.Attrs["name"] != "Blue mug" {
			t.Fatalf("the provider holds %+v", at)
		}
	})

	t.Run("edited: price and currency", func(t *testing.T) {
		p.in(t)
		p.click("button", "Edit Blue mug")
		p.seeRole("heading", "Edit Blue mug")
		if v := eval[string](p, `labelled('Price').value`); v != "12.50" {
			t.Fatalf("the form shows the price %q", v)
		}
		p.fill("Price", "14")
		p.fill("Currency", "EUR")
		p.submitDialog()
		p.see("Product Blue mug saved.")
		p.see("€14.00")
		p.shot("catalog")
		if got := products()["Blue mug"]; got.Price != 1400 || got.Currency != "EUR" || got.Name != "Blue mug" {
			t.Fatalf("the server holds %+v", got)
		}
	})

	t.Run("an Agent reads the products but is offered no change", func(t *testing.T) {
		a := signInAs(t, b, f, "agent", "agent@wharf.test", "Agent")
		a.click("link", "Catalogs")
		a.click("link", "Products of Spring shop")
		a.see("Blue mug")
		for _, c := range []string{"Add product", "Edit Blue mug", "Delete Blue mug"} {
			if a.has("button", c) {
				t.Fatalf("an Agent is shown %q", c)
			}
		}
		a.click("link", "← Catalogs")
		a.see("Spring shop")
		for _, c := range []string{"New catalog", "Delete Spring shop", "Sync from provider"} {
			if a.has("button", c) {
				t.Fatalf("an Agent is shown %q", c)
			}
		}
		a.axe("catalogs, read only")
	})

	t.Run("a clerk (catalogs:read and :update) edits only; the other pages are not offered", func(t *testing.T) {
		f.Do("POST", "/api/roles", map[string]any{"name": "Clerk", "permissions": []string{"catalogs:read", "catalogs:update"}}, admin).Expect(t, 201)
		c := signInAs(t, b, f, "clerk", "clerk@wharf.test", "Clerk")
		c.seeRole("link", "Catalogs")
		for _, l := range []string{"Canned responses", "Custom actions", "Platform flows"} {
			if c.has("link", l) {
				t.Fatalf("the clerk's navigation offers %q", l)
			}
		}
		c.open("/console/canned-responses")
		c.seeRole("heading", "You cannot open this page")
		c.open("/console/catalogs")
		c.click("link", "Products of Spring shop")
		c.seeRole("button", "Edit Blue mug")
		for _, x := range []string{"Add product", "Delete Blue mug"} {
			if c.has("button", x) {
				t.Fatalf("the clerk is shown %q", x)
			}
		}
	})

	t.Run("the product, then the catalog, deleted after asking", func(t *testing.T) {
		p.in(t)
		p.click("button", "Delete Blue mug")
		p.seeRole("heading", "Delete this product?")
		clickInDialog(p, "Keep it")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Delete this product?')`)
		if len(products()) != 1 {
			t.Fatal("Keep it deleted the product")
		}
		p.click("button", "Delete Blue mug")
		clickInDialog(p, "Delete product")
		p.see("Product Blue mug deleted.")
		if len(products()) != 0 {
			t.Fatalf("the server still holds %+v", products())
		}
		p.click("link", "← Catalogs")
		p.click("button", "Delete Spring shop")
		clickInDialog(p, "Delete catalog")
		p.see("Catalog Spring shop deleted.")
		if cs := catalogs(); len(cs) != 0 {
			t.Fatalf("the server still holds %+v", cs)
		}
		if at := f.Sim.Catalogs(f.WABA.ID); len(at) != 0 {
			t.Fatalf("the provider still holds %+v", at)
		}
	})
}
