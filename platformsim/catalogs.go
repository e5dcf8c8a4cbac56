package platformsim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
)

// Catalogs belong to a business; the simulator lets the business account id
// stand for the business.
type catalog struct {
	waba     *waba
	id       string
	idNum    int64
	name     string
	products []*product
}

func (c *catalog) wabaID() string   { return c.waba.id }
func (c *catalog) nodeType() string { return "ProductCatalog" }

func (c *catalog) fields() map[string]any {
	return map[string]any{"id": c.id, "name": c.name, "product_count": len(c.products)}
}

func (c *catalog) update(body []byte) *apiError {
	var in struct {
		Name string `json:"name"`
	}
	if aerr := decodeBody(body, &in); aerr != nil {
		return aerr
	}
	if in.Name != "" {
		c.name = in.Name
	}
	return nil
}

type product struct {
	catalog *catalog
	id      string
	idNum   int64
	// attrs keeps what the client sent (retailer_id, name, price...) so that
	// it reads back exactly.
	attrs map[string]any
}

func (p *product) wabaID() string   { return p.catalog.waba.id }
func (p *product) nodeType() string { return "ProductItem" }

func (p *product) fields() map[string]any {
	m := maps.Clone(p.attrs)
	m["id"] = p.id
	return m
}

// productAttrs are the product fields the simulator stores.
var productAttrs = []string{"retailer_id", "name", "description", "price", "currency", "image_url", "url",
	"availability", "condition", "brand", "category", "sale_price"}

func decodeProduct(body []byte) (map[string]any, *apiError) {
	// UseNumber keeps prices (minor units) exact when they are echoed back.
	var raw map[string]any
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			return nil, errInvalid("the request body is not a JSON object: %v", err)
		}
	}
	out := map[string]any{}
	for _, k := range productAttrs {
		if v, ok := raw[k]; ok && v != nil {
			out[k] = v
		}
	}
	return out, nil
}

// handleCreateCatalog serves POST /{version}/{business_id}/owned_product_catalogs.
func (s *Simulator) handleCreateCatalog(w http.ResponseWriter, r *http.Request) {
	body := requestBody(r)
	var in struct {
		Name string `json:"name"`
	}
	parseErr := decodeBody(body, &in)
	s.mu.Lock()
	wb, aerr := objectAs[*waba](s, r, r.PathValue("id"), "owned_product_catalogs")
	switch {
	case aerr != nil:
	case parseErr != nil:
		aerr = parseErr
	case in.Name == "":
		aerr = errMissing("name")
	}
	var c *catalog
	if aerr == nil {
		c = &catalog{waba: wb, id: s.newIDLocked(), name: in.Name}
		c.idNum, _ = strconv.ParseInt(c.id, 10, 64)
		s.objects[c.id] = c
		wb.catalogs = append(wb.catalogs, c)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": c.id})
}

// handleListCatalogs serves GET /{version}/{business_id}/owned_product_catalogs.
func (s *Simulator) handleListCatalogs(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	wb, aerr := objectAs[*waba](s, r, r.PathValue("id"), "owned_product_catalogs")
	var page []map[string]any
	hasMore := false
	if aerr == nil {
		cs := wb.catalogs
		var start, end int
		start, end, aerr = pageBounds(len(cs), func(i int) int64 { return cs[i].idNum },
			r.URL.Query().Get("after"), r.URL.Query().Get("before"), queryLimit(r, 25))
		for _, c := range cs[start:end] {
			page = append(page, c.fields())
		}
		hasMore = end < len(cs)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, pagedList(r, s.base(r), page, func(m map[string]any) string { return m["id"].(string) }, hasMore))
}

// handleCreateProduct serves POST /{version}/{catalog_id}/products.
func (s *Simulator) handleCreateProduct(w http.ResponseWriter, r *http.Request) {
	body := requestBody(r)
	attrs, parseErr := decodeProduct(body)
	s.mu.Lock()
	c, aerr := objectAs[*catalog](s, r, r.PathValue("id"), "products")
	if aerr == nil {
		aerr = parseErr
	}
	if aerr == nil {
		retailerID, _ := attrs["retailer_id"].(string)
		name, _ := attrs["name"].(string)
		switch {
		case retailerID == "":
			aerr = errMissing("retailer_id")
		case name == "":
			aerr = errMissing("name")
		case slices.ContainsFunc(c.products, func(p *product) bool { return p.attrs["retailer_id"] == retailerID }):
			aerr = newError(http.StatusBadRequest, 10800, "Duplicate retailer_id",
				"a product with retailer_id "+retailerID+" already exists in this catalog")
		}
	}
	var p *product
	if aerr == nil {
		p = &product{catalog: c, id: s.newIDLocked(), attrs: attrs}
		p.idNum, _ = strconv.ParseInt(p.id, 10, 64)
		s.objects[p.id] = p
		c.products = append(c.products, p)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"id": p.id})
}

// handleListProducts serves GET /{version}/{catalog_id}/products.
func (s *Simulator) handleListProducts(w http.ResponseWriter, r *http.Request) {
	fields := queryFields(r.URL.Query())
	s.mu.Lock()
	c, aerr := objectAs[*catalog](s, r, r.PathValue("id"), "products")
	var page []map[string]any
	hasMore := false
	if aerr == nil {
		ps := c.products
		var start, end int
		start, end, aerr = pageBounds(len(ps), func(i int) int64 { return ps[i].idNum },
			r.URL.Query().Get("after"), r.URL.Query().Get("before"), queryLimit(r, 100))
		for _, p := range ps[start:end] {
			page = append(page, selectFields(p.fields(), fields))
		}
		hasMore = end < len(ps)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, pagedList(r, s.base(r), page, func(m map[string]any) string { return m["id"].(string) }, hasMore))
}

// update serves POST /{product_id}: the given attributes replace the stored
// ones.
func (p *product) update(body []byte) *apiError {
	attrs, aerr := decodeProduct(body)
	if aerr != nil {
		return aerr
	}
	if rid, ok := attrs["retailer_id"].(string); ok && rid != p.attrs["retailer_id"] {
		for _, other := range p.catalog.products {
			if other != p && other.attrs["retailer_id"] == rid {
				return newError(http.StatusBadRequest, 10800, "Duplicate retailer_id",
					"a product with retailer_id "+rid+" already exists in this catalog")
			}
		}
	}
	maps.Copy(p.attrs, attrs)
	return nil
}

func (s *Simulator) deleteCatalogLocked(c *catalog) {
	for _, p := range c.products {
		delete(s.objects, p.id)
	}
	delete(s.objects, c.id)
	c.waba.catalogs = slices.DeleteFunc(c.waba.catalogs, func(x *catalog) bool { return x == c })
}

func (s *Simulator) deleteProductLocked(p *product) {
	delete(s.objects, p.id)
	p.catalog.products = slices.DeleteFunc(p.catalog.products, func(x *product) bool { return x == p })
}

// queryLimit reads ?limit=, falling back to def for missing or bad values.
func queryLimit(r *http.Request, def int) int {
	n, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || n < 1 {
		return def
	}
	return min(n, 1000)
}

// CatalogState is a catalog as a test sees it: what the provider holds,
// products included, in creation order.
type CatalogState struct {
	ID                string         `json:"id"`
	BusinessAccountID string         `json:"business_account_id"`
	Name              string         `json:"name"`
	Products          []ProductState `json:"products"`
}

// ProductState is a product's stored attributes (retailer_id, name,
// price...), exactly as the client sent them, and its id.
type ProductState struct {
	ID    string         `json:"id"`
	Attrs map[string]any `json:"attrs"`
}

func (c *catalog) state() CatalogState {
	out := CatalogState{ID: c.id, BusinessAccountID: c.waba.id, Name: c.name, Products: make([]ProductState, 0, len(c.products))}
	for _, p := range c.products {
		out.Products = append(out.Products, ProductState{ID: p.id, Attrs: maps.Clone(p.attrs)})
	}
	return out
}

// AddCatalog creates a catalog for the business account directly, as if
// someone had made it in the provider's own tools (for sync tests).
func (s *Simulator) AddCatalog(businessAccountID, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("platformsim: a catalog needs a name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	wb, ok := s.objects[businessAccountID].(*waba)
	if !ok {
		return "", fmt.Errorf("platformsim: %w: business account %s", ErrNotFound, businessAccountID)
	}
	c := &catalog{waba: wb, id: s.newIDLocked(), name: name}
	c.idNum, _ = strconv.ParseInt(c.id, 10, 64)
	s.objects[c.id] = c
	wb.catalogs = append(wb.catalogs, c)
	return c.id, nil
}

// AddProduct adds a product to a catalog directly. attrs take the provider
// API's field names; retailer_id and name are required, as the API
// requires them.
func (s *Simulator) AddProduct(catalogID string, attrs map[string]any) (string, error) {
	b, err := json.Marshal(attrs)
	if err != nil {
		return "", err
	}
	clean, aerr := decodeProduct(b)
	if aerr != nil {
		return "", fmt.Errorf("platformsim: %s", aerr.details)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.objects[catalogID].(*catalog)
	if !ok {
		return "", fmt.Errorf("platformsim: %w: catalog %s", ErrNotFound, catalogID)
	}
	if clean["retailer_id"] == nil || clean["name"] == nil {
		return "", fmt.Errorf("platformsim: a product needs retailer_id and name")
	}
	p := &product{catalog: c, id: s.newIDLocked(), attrs: clean}
	p.idNum, _ = strconv.ParseInt(p.id, 10, 64)
	s.objects[p.id] = p
	c.products = append(c.products, p)
	return p.id, nil
}

// RenameCatalog changes a catalog's name at the provider, as an edit in the
// provider's own tools would.
func (s *Simulator) RenameCatalog(catalogID, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.objects[catalogID].(*catalog)
	if !ok {
		return fmt.Errorf("platformsim: %w: catalog %s", ErrNotFound, catalogID)
	}
	if name == "" {
		return fmt.Errorf("platformsim: a catalog needs a name")
	}
	c.name = name
	return nil
}

// DeleteCatalog removes a catalog and its products at the provider, as if
// someone had deleted it elsewhere.
func (s *Simulator) DeleteCatalog(catalogID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.objects[catalogID].(*catalog)
	if !ok {
		return fmt.Errorf("platformsim: %w: catalog %s", ErrNotFound, catalogID)
	}
	s.deleteCatalogLocked(c)
	return nil
}

// Catalog reports one catalog with its products; false when the provider
// has no such catalog.
func (s *Simulator) Catalog(catalogID string) (CatalogState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.objects[catalogID].(*catalog)
	if !ok {
		return CatalogState{}, false
	}
	return c.state(), true
}

// Catalogs reports the business account's catalogs in creation order.
func (s *Simulator) Catalogs(businessAccountID string) []CatalogState {
	s.mu.Lock()
	defer s.mu.Unlock()
	wb, ok := s.objects[businessAccountID].(*waba)
	if !ok {
		return nil
	}
	out := make([]CatalogState, 0, len(wb.catalogs))
	for _, c := range wb.catalogs {
		out = append(out, c.state())
	}
	return out
}

// Product reports one product's attributes; false when the provider has no
// such product.
func (s *Simulator) Product(productID string) (ProductState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.objects[productID].(*product)
	if !ok {
		return ProductState{}, false
	}
	return ProductState{ID: p.id, Attrs: maps.Clone(p.attrs)}, true
}
