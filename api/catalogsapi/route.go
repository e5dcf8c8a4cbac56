package catalogsapi

import (
	"net/http"

	"wharf/api/web"
)

// Routes lists the catalogs and products routes. It reads no field of h, so
// a nil *Handlers lists the table too (documentation, OpenAPI). Changes are
// made at the provider first: its refusals are 400s with its message, its
// trouble 502. Sync imports catalogs: catalogs:create.
func (h *Handlers) Routes() []web.Route {
	mirrored := []int{http.StatusBadGateway}
	return []web.Route{
		{Method: "GET", Path: "/api/catalogs", Access: web.Perm("catalogs:read"), Handler: h.list,
			Summary: "List the organization's catalogs ordered by name, with their product counts", Query: listQuery{}, Response: listResp{}},
		{Method: "GET", Path: "/api/catalogs/:id", Access: web.Perm("catalogs:read"), Handler: h.get,
			Summary: "Get a catalog with its products", Response: catalogDetail{}},
		{Method: "POST", Path: "/api/catalogs", Access: web.Perm("catalogs:create"), Handler: h.create,
			Summary: "Create a catalog at the provider under the named account's business, then here", Request: createCatalogRequest{},
			Response: catalogResp{}, Status: http.StatusCreated, Errors: mirrored},
		{Method: "DELETE", Path: "/api/catalogs/:id", Access: web.Perm("catalogs:delete"), Handler: h.delete,
			Summary: "Delete a catalog at the provider and here, its products with it", Response: web.MessageResp{}, Errors: mirrored},
		{Method: "POST", Path: "/api/catalogs/sync", Access: web.Perm("catalogs:create"), Bulk: true, Handler: h.sync,
			Summary: "Sync the named account's catalogs and products from the provider, matched by provider id", Request: syncRequest{},
			Response: syncResp{}, Errors: mirrored},
		{Method: "GET", Path: "/api/catalogs/:id/products", Access: web.Perm("catalogs:read"), Handler: h.products,
			Summary: "List a catalog's products ordered by name", Response: productsResp{}},
		{Method: "POST", Path: "/api/catalogs/:id/products", Access: web.Perm("catalogs:create"), Handler: h.createProduct,
			Summary: "Add a product to a catalog at the provider, then here", Request: productRequest{}, Response: productResp{},
			Status: http.StatusCreated, Errors: mirrored},
		{Method: "GET", Path: "/api/products/:id", Access: web.Perm("catalogs:read"), Handler: h.getProduct,
			Summary: "Get a product", Response: productResp{}},
		{Method: "PUT", Path: "/api/products/:id", Access: web.Perm("catalogs:update"), Handler: h.updateProduct,
			Summary: "Change a product's non-empty fields at the provider (only those that change), then here", Request: productRequest{},
			Response: productResp{}, Errors: mirrored},
		{Method: "DELETE", Path: "/api/products/:id", Access: web.Perm("catalogs:delete"), Handler: h.deleteProduct,
			Summary: "Delete a product at the provider and here", Response: web.MessageResp{}, Errors: mirrored},
	}
}
