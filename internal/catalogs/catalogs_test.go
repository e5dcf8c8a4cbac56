package catalogs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"wharf/internal/accounts"
	"wharf/internal/catalogs"
	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
	"wharf/platform"
	"wharf/platformsim"
)

func ptr[T any](v T) *T { return &v }

type testBundle struct {
	f        *testfactory.Factory
	provider *testfactory.Provider
	org      *testfactory.Org
	account  models.PlatformAccount
}

// setup builds the catalogs domain (and the accounts domain it reads
// credentials from) with the simulator as the provider.
func setup(t *testing.T) (*catalogs.Service, *testBundle) {
	t.Helper()
	f := testfactory.New(t, testenv.DB(t))
	p := f.Provider(nil)
	q := testenv.NewQueue(t)
	accts := accounts.NewService(f.DB, f.Box, p.Client, orgsettings.NewService(f.DB, f.Box, nil, nil), q.Enqueuer, testenv.Quiet())
	org := f.Org()
	return catalogs.NewService(f.DB, accts, p.Client), &testBundle{f: f, provider: p, org: org, account: f.AccountAt(p, org.ID)}
}

func (b *testBundle) calls(method, path string) int {
	return b.provider.Sim.CountRequests(platformsim.RequestFilter{Method: method, Path: path})
}

func product() catalogs.ProductInput {
	return catalogs.ProductInput{Name: ptr("Mug"), Price: ptr(int64(1299)), Description: ptr("Blue"), URL: ptr("https://shop.example/mug"),
		ImageURL: ptr("https://shop.example/mug.png")}
}

func TestParsePrice(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw  string
		want int64
		err  string
	}{
		{"1999", 1999, ""}, {"-1", -1, ""}, {"0", 0, ""}, {" 42 ", 42, ""},
		{"19.99", 0, "integer in the currency's smallest unit"}, {"1e3", 0, "integer"}, {`"100"`, 0, "not a string"},
		{"99999999999999999999", 0, "integer"}, {"true", 0, "integer"},
	} {
		got, err := catalogs.ParsePrice([]byte(c.raw))
		if c.err != "" {
			testfactory.WantError(t, err, apperr.Invalid, c.err)
			continue
		}
		if err != nil || got == nil || *got != c.want {
			t.Errorf("%s: %v %v", c.raw, got, err)
		}
	}
	if got, err := catalogs.ParsePrice([]byte("null")); got != nil || err != nil {
		t.Errorf("null: %v %v", got, err)
	}
}

// A catalog is created at the provider and then here; a refused one is
// stored nowhere.
func TestCreateCatalogMirrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	for _, c := range []struct {
		account, name string
		kind          apperr.Kind
		msg           string
	}{
		{"", "Shop", apperr.Invalid, "platform_account is required"},
		{b.account.Name, " ", apperr.Invalid, "name is required"},
		{"Nope", "Shop", apperr.Invalid, `no account named "Nope"`},
		{b.f.Account(b.f.Org().ID).Name, "Shop", apperr.Invalid, "no account named"}, // another organization's
	} {
		_, err := s.CreateCatalog(ctx, b.org.ID, c.account, c.name)
		testfactory.WantError(t, err, c.kind, c.msg)
	}
	if err := b.provider.Sim.InjectFault(platformsim.Fault{Method: "POST", Path: "/owned_product_catalogs", Code: 100,
		Details: "Name not allowed", Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := s.CreateCatalog(ctx, b.org.ID, b.account.Name, "Shop")
	testfactory.WantError(t, err, apperr.Invalid, "Name not allowed")
	if err := b.provider.Sim.InjectFault(platformsim.Fault{Method: "POST", Path: "/owned_product_catalogs", Code: 131000, Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = s.CreateCatalog(ctx, b.org.ID, b.account.Name, "Shop")
	testfactory.WantError(t, err, apperr.Upstream, "the provider failed while creating the catalog")
	if n := b.f.Count("catalogs", "true"); n != 0 || len(b.provider.Sim.Catalogs(b.provider.WABA.ID)) != 0 {
		t.Fatalf("refused creates stored %d catalogs", n)
	}

	c, err := s.CreateCatalog(ctx, b.org.ID, "  "+b.account.Name+" ", " Shop ")
	if err != nil {
		t.Fatal(err)
	}
	at, ok := b.provider.Sim.Catalog(c.ProviderCatalogID)
	if !ok || at.Name != "Shop" || at.BusinessAccountID != b.account.BusinessAccountID {
		t.Fatalf("at the provider: %+v %v", at, ok)
	}
	if c.Name != "Shop" || c.PlatformAccount != b.account.Name || c.ProductCount != 0 || !c.IsActive || c.AccountID != b.account.ID {
		t.Fatalf("created %+v", c)
	}
	// Another organization's catalog is not found.
	other := b.f.Org()
	_, err = s.Get(ctx, other.ID, c.ID)
	testfactory.WantError(t, err, apperr.NotFound, "catalog not found")
	testfactory.WantError(t, s.DeleteCatalog(ctx, other.ID, c.ID), apperr.NotFound, "catalog not found")
	_, err = s.CreateProduct(ctx, other.ID, c.ID, product())
	testfactory.WantError(t, err, apperr.NotFound, "catalog not found")
}

// Products: validated before the provider is called, mirrored on create,
// update (changed fields only) and delete; listed by name with their count.
func TestProductsMirror(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	c, err := s.CreateCatalog(ctx, b.org.ID, b.account.Name, "Shop")
	if err != nil {
		t.Fatal(err)
	}
	before := b.calls("POST", "/products")
	for _, c2 := range []struct {
		edit func(*catalogs.ProductInput)
		msg  string
	}{
		{func(in *catalogs.ProductInput) { in.Name = nil }, "name is required"},
		{func(in *catalogs.ProductInput) { in.Price = nil }, "price is required"},
		{func(in *catalogs.ProductInput) { in.Price = ptr(int64(0)) }, "price must be above 0"},
		{func(in *catalogs.ProductInput) { in.Price = ptr(int64(-1)) }, "price must be above 0"},
		{func(in *catalogs.ProductInput) { in.Currency = ptr("XYZ") }, "currency must be an ISO 4217 code"},
		{func(in *catalogs.ProductInput) { in.Currency = ptr("dollars") }, "currency must be an ISO 4217 code"},
		{func(in *catalogs.ProductInput) { in.URL = ptr("ftp://shop.example/x") }, "url must be an http or https URL"},
		{func(in *catalogs.ProductInput) { in.ImageURL = ptr("/mug.png") }, "image_url must be an http or https URL"},
	} {
		in := product()
		c2.edit(&in)
		_, err := s.CreateProduct(ctx, b.org.ID, c.ID, in)
		testfactory.WantError(t, err, apperr.Invalid, c2.msg)
	}
	if n := b.calls("POST", "/products"); n != before {
		t.Fatalf("refused products reached the provider %d times", n-before)
	}
	mug, err := s.CreateProduct(ctx, b.org.ID, c.ID, product())
	if err != nil {
		t.Fatal(err)
	}
	if mug.Currency != "USD" || mug.Price != 1299 || mug.RetailerID != mug.ID.String() || !mug.IsActive {
		t.Fatalf("mug %+v", mug)
	}
	at, ok := b.provider.Sim.Product(mug.ProviderProductID)
	if !ok || at.Attrs["name"] != "Mug" || fmt.Sprint(at.Attrs["price"]) != "1299" || at.Attrs["currency"] != "USD" ||
		at.Attrs["retailer_id"] != mug.ID.String() || at.Attrs["url"] != "https://shop.example/mug" {
		t.Fatalf("at the provider: %+v", at)
	}
	in := product()
	in.Name, in.Currency, in.RetailerID = ptr("Bowl"), ptr("eur"), ptr("sku-bowl")
	bowl, err := s.CreateProduct(ctx, b.org.ID, c.ID, in)
	if err != nil || bowl.Currency != "EUR" || bowl.RetailerID != "sku-bowl" {
		t.Fatalf("bowl %+v %v", bowl, err)
	}
	// The provider refuses a duplicate retailer id: nothing is stored.
	_, err = s.CreateProduct(ctx, b.org.ID, c.ID, in)
	testfactory.WantError(t, err, apperr.Invalid, "Duplicate retailer_id")
	list, err := s.Products(ctx, b.org.ID, c.ID)
	if err != nil || len(list) != 2 || list[0].Name != "Bowl" || list[1].Name != "Mug" {
		t.Fatalf("products %+v %v", list, err)
	}
	got, _ := s.Get(ctx, b.org.ID, c.ID)
	if got.ProductCount != 2 {
		t.Fatalf("product_count %d", got.ProductCount)
	}

	// Update: only the changed fields go to the provider; a zero price and
	// empty fields are not applied; a refusal changes nothing.
	since := b.provider.Sim.Requests(platformsim.RequestFilter{})
	last := int64(0)
	if len(since) > 0 {
		last = since[len(since)-1].ID
	}
	up, err := s.UpdateProduct(ctx, b.org.ID, mug.ID, catalogs.ProductInput{Name: ptr("Big mug"), Price: ptr(int64(0)), Description: ptr(""),
		Currency: ptr("USD")})
	if err != nil || up.Name != "Big mug" || up.Price != 1299 || up.Description != "Blue" {
		t.Fatalf("updated %+v %v", up, err)
	}
	reqs := b.provider.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/" + mug.ProviderProductID, Since: last})
	if len(reqs) != 1 || string(reqs[0].Body) != `{"name":"Big mug"}` {
		t.Fatalf("update sent %+v", reqs)
	}
	if _, err := s.UpdateProduct(ctx, b.org.ID, mug.ID, catalogs.ProductInput{Name: ptr("Big mug")}); err != nil {
		t.Fatal(err)
	}
	if n := len(b.provider.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/" + mug.ProviderProductID, Since: last})); n != 1 {
		t.Fatalf("an update without changes reached the provider (%d requests)", n)
	}
	_, err = s.UpdateProduct(ctx, b.org.ID, mug.ID, catalogs.ProductInput{Currency: ptr("ABC")})
	testfactory.WantError(t, err, apperr.Invalid, "currency")
	if err := b.provider.Sim.InjectFault(platformsim.Fault{Method: "POST", Path: "/" + mug.ProviderProductID, Code: 131000, Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = s.UpdateProduct(ctx, b.org.ID, mug.ID, catalogs.ProductInput{Price: ptr(int64(1500))})
	testfactory.WantError(t, err, apperr.Upstream, "updating the product")
	if p, _ := s.Product(ctx, b.org.ID, mug.ID); p.Price != 1299 {
		t.Fatalf("a failed update changed the price to %d", p.Price)
	}
	up, err = s.UpdateProduct(ctx, b.org.ID, mug.ID, catalogs.ProductInput{Price: ptr(int64(1500))})
	if err != nil || up.Price != 1500 {
		t.Fatalf("price update %+v %v", up, err)
	}
	if at, _ := b.provider.Sim.Product(mug.ProviderProductID); fmt.Sprint(at.Attrs["price"]) != "1500" || at.Attrs["name"] != "Big mug" {
		t.Fatalf("at the provider after updates: %+v", at)
	}

	// Another organization sees and changes none of it.
	other := b.f.Org()
	_, err = s.Product(ctx, other.ID, mug.ID)
	testfactory.WantError(t, err, apperr.NotFound, "product not found")
	_, err = s.UpdateProduct(ctx, other.ID, mug.ID, catalogs.ProductInput{Name: ptr("x")})
	testfactory.WantError(t, err, apperr.NotFound, "product not found")
	testfactory.WantError(t, s.DeleteProduct(ctx, other.ID, mug.ID), apperr.NotFound, "product not found")
	_, err = s.Products(ctx, other.ID, c.ID)
	testfactory.WantError(t, err, apperr.NotFound, "catalog not found")

	// Delete: mirrored; a product already gone at the provider is deleted here.
	if err := s.DeleteProduct(ctx, b.org.ID, mug.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.provider.Sim.Product(mug.ProviderProductID); ok {
		t.Fatal("the deleted product is still at the provider")
	}
	if cat, _ := b.provider.Sim.Catalog(c.ProviderCatalogID); len(cat.Products) != 1 {
		t.Fatalf("provider catalog %+v", cat)
	}
	// bowl disappears at the provider behind our back.
	if code := deleteAtProvider(t, b, bowl.ProviderProductID); code != nil {
		t.Fatal(code)
	}
	if err := s.DeleteProduct(ctx, b.org.ID, bowl.ID); err != nil {
		t.Fatalf("delete of a product the provider no longer has: %v", err)
	}
	if n := b.f.Count("products", "true"); n != 0 {
		t.Fatalf("%d products left", n)
	}
}

func deleteAtProvider(t *testing.T, b *testBundle, id string) error {
	t.Helper()
	return b.provider.Client.DeleteObject(context.Background(), creds(b.account), id)
}

// Deleting a catalog deletes it at the provider and its products here.
func TestDeleteCatalogCascades(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	c, err := s.CreateCatalog(ctx, b.org.ID, b.account.Name, "Shop")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		in := product()
		in.RetailerID = ptr(fmt.Sprint("sku-", i))
		if _, err := s.CreateProduct(ctx, b.org.ID, c.ID, in); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.provider.Sim.InjectFault(platformsim.Fault{Method: "DELETE", Code: 131000, Times: 1}); err != nil {
		t.Fatal(err)
	}
	testfactory.WantError(t, s.DeleteCatalog(ctx, b.org.ID, c.ID), apperr.Upstream, "deleting the catalog")
	if b.f.Count("catalogs", "true") != 1 || b.f.Count("products", "true") != 3 {
		t.Fatal("a failed delete removed rows")
	}
	if err := s.DeleteCatalog(ctx, b.org.ID, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := b.provider.Sim.Catalog(c.ProviderCatalogID); ok {
		t.Fatal("the catalog is still at the provider")
	}
	if b.f.Count("catalogs", "true") != 0 || b.f.Count("products", "true") != 0 {
		t.Fatal("rows left after the delete")
	}
	_, err = s.Get(ctx, b.org.ID, c.ID)
	testfactory.WantError(t, err, apperr.NotFound, "catalog not found")
}

// Sync walks every page of catalogs and products, creates, renames in
// place, deactivates what the provider no longer has and reactivates it,
// counts right, and two concurrent syncs store nothing twice.
func TestSync(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, b := setup(t)
	sim, waba := b.provider.Sim, b.provider.WABA.ID
	var ids []string
	for i := range 105 { // two pages of catalogs
		id, err := sim.AddCatalog(waba, fmt.Sprintf("Catalog %03d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for i := range 130 { // two pages of products
		if _, err := sim.AddProduct(ids[0], map[string]any{"retailer_id": fmt.Sprint("sku-", i), "name": fmt.Sprint("P", i),
			"price": 100 + i, "currency": "EUR"}); err != nil {
			t.Fatal(err)
		}
	}
	// Not importable: no price.
	if _, err := sim.AddProduct(ids[1], map[string]any{"retailer_id": "free", "name": "Free"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Sync(ctx, b.org.ID, "")
	testfactory.WantError(t, err, apperr.Invalid, "platform_account is required")
	_, err = s.Sync(ctx, b.org.ID, "Nope")
	testfactory.WantError(t, err, apperr.Invalid, "no account named")

	var wg sync.WaitGroup
	results := make([]*catalogs.SyncResult, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.Sync(ctx, b.org.ID, b.account.Name)
		}()
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
	}
	if b.f.Count("catalogs", "true") != 105 || b.f.Count("products", "true") != 130 {
		t.Fatalf("after two concurrent syncs: %d catalogs, %d products", b.f.Count("catalogs", "true"), b.f.Count("products", "true"))
	}
	if results[0].Total != 105 || results[1].Total != 105 || results[0].Synced+results[1].Synced < 105 {
		t.Fatalf("results %+v %+v", results[0], results[1])
	}
	list, err := s.List(ctx, b.org.ID, b.account.Name)
	if err != nil || len(list) != 105 || list[0].Name != "Catalog 000" || list[0].ProductCount != 130 || list[1].ProductCount != 0 {
		t.Fatalf("list %d %+v %v", len(list), list[0], err)
	}
	again, err := s.Sync(ctx, b.org.ID, b.account.Name)
	if err != nil || again.Synced != 0 || again.Total != 105 {
		t.Fatalf("a sync without changes: %+v %v", again, err)
	}

	// Renamed at the provider: updated in place; deleted there: inactive.
	if err := sim.RenameCatalog(ids[2], "Renamed"); err != nil {
		t.Fatal(err)
	}
	if err := sim.DeleteCatalog(ids[3]); err != nil {
		t.Fatal(err)
	}
	prods, _ := s.Products(ctx, b.org.ID, list[0].ID)
	if err := b.provider.Client.DeleteObject(ctx, creds(b.account), prods[0].ProviderProductID); err != nil {
		t.Fatal(err)
	}
	res, err := s.Sync(ctx, b.org.ID, b.account.Name)
	if err != nil || res.Synced != 3 || res.Total != 104 {
		t.Fatalf("sync after changes: %+v %v", res, err)
	}
	var renamed models.Catalog
	b.f.DB.Where("provider_catalog_id = ?", ids[2]).Take(&renamed)
	if renamed.Name != "Renamed" || renamed.ID != list[2].ID {
		t.Fatalf("renamed %+v (was %s)", renamed, list[2].ID)
	}
	if n := b.f.Count("catalogs", "provider_catalog_id = ? AND NOT is_active", ids[3]); n != 1 {
		t.Fatal("the catalog the provider no longer has is not inactive")
	}
	if n := b.f.Count("products", "id = ? AND NOT is_active", prods[0].ID); n != 1 {
		t.Fatal("the product the provider no longer has is not inactive")
	}
	if got, _ := s.Get(ctx, b.org.ID, list[0].ID); got.ProductCount != 129 {
		t.Fatalf("product_count after a product left: %d", got.ProductCount)
	}
	if b.f.Count("catalogs", "true") != 105 {
		t.Fatal("sync duplicated catalogs")
	}

	// A provider failure in the middle stores nothing.
	if err := sim.RenameCatalog(ids[4], "Renamed too"); err != nil {
		t.Fatal(err)
	}
	if err := sim.InjectFault(platformsim.Fault{Path: ids[50] + "/products", Code: 131000, Times: 1}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Sync(ctx, b.org.ID, b.account.Name)
	testfactory.WantError(t, err, apperr.Upstream, "listing the products of catalog "+ids[50])
	if n := b.f.Count("catalogs", "name = 'Renamed too'"); n != 0 {
		t.Fatal("a failed sync wrote")
	}
	// Another organization cannot sync this account by name.
	_, err = s.Sync(ctx, b.f.Org().ID, b.account.Name)
	testfactory.WantError(t, err, apperr.Invalid, "no account named")
}

func creds(a models.PlatformAccount) platform.Creds {
	return platform.Creds{AccessToken: testfactory.Token, BusinessAccountID: a.BusinessAccountID, PhoneNumberID: a.PhoneNumberID}
}
