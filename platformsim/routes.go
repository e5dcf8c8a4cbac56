package platformsim

import (
	"fmt"
	"net/http"
	"time"
)

// providerRoutes is the provider API. Object ids share one counter, so the
// bare /{id} routes dispatch on the type of the object the id names.
func (s *Simulator) providerRoutes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{version}/{id}/messages", s.handleMessages)
	mux.HandleFunc("POST /{version}/{id}/media", s.handleUploadMedia)

	mux.HandleFunc("GET /{version}/{id}/message_templates", s.handleListTemplates)
	mux.HandleFunc("POST /{version}/{id}/message_templates", s.handleCreateTemplate)
	mux.HandleFunc("DELETE /{version}/{id}/message_templates", s.handleDeleteTemplates)

	mux.HandleFunc("GET /{version}/{id}/phone_numbers", s.handlePhoneNumbers)
	mux.HandleFunc("POST /{version}/{id}/register", s.handleRegister)
	mux.HandleFunc("POST /{version}/{id}/deregister", s.handleDeregister)
	mux.HandleFunc("GET /{version}/{id}/subscribed_apps", s.handleSubscribedApps)
	mux.HandleFunc("POST /{version}/{id}/subscribed_apps", s.handleSubscribedApps)
	mux.HandleFunc("DELETE /{version}/{id}/subscribed_apps", s.handleSubscribedApps)

	mux.HandleFunc("GET /{version}/oauth/access_token", s.handleAccessToken)
	mux.HandleFunc("GET /{version}/debug_token", s.handleDebugToken)
	mux.HandleFunc("GET /{version}/me/whatsapp_business_accounts", s.handleSharedAccounts)

	mux.HandleFunc("GET /{version}/{id}/flows", s.handleListFlows)
	mux.HandleFunc("POST /{version}/{id}/flows", s.handleCreateFlow)
	mux.HandleFunc("GET /{version}/{id}/assets", s.handleFlowAssets)
	mux.HandleFunc("POST /{version}/{id}/assets", s.handleUploadFlowJSON)
	mux.HandleFunc("POST /{version}/{id}/publish", s.handlePublishFlow)
	mux.HandleFunc("POST /{version}/{id}/deprecate", s.handleDeprecateFlow)

	mux.HandleFunc("GET /{version}/{id}/owned_product_catalogs", s.handleListCatalogs)
	mux.HandleFunc("POST /{version}/{id}/owned_product_catalogs", s.handleCreateCatalog)
	mux.HandleFunc("GET /{version}/{id}/products", s.handleListProducts)
	mux.HandleFunc("POST /{version}/{id}/products", s.handleCreateProduct)

	mux.HandleFunc("POST /{version}/{id}/calls", s.handleCalls)
	mux.HandleFunc("GET /{version}/{id}/call_permissions", s.handleCallPermissions)

	mux.HandleFunc("GET /{version}/{id}", s.handleGetObject)
	mux.HandleFunc("POST /{version}/{id}", s.handleUpdateObject)
	mux.HandleFunc("DELETE /{version}/{id}", s.handleDeleteObject)

	// Anything else gets the provider's error shape, not a text 404.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newError(http.StatusBadRequest, 2500, "Unknown path components",
			fmt.Sprintf("Unknown path components: %s %s", r.Method, r.URL.Path)))
	})
	return mux
}

// handleGetObject serves GET /{version}/{id} for every object type, honouring
// ?fields=.
func (s *Simulator) handleGetObject(w http.ResponseWriter, r *http.Request) {
	base := s.base(r)
	s.mu.Lock()
	o, aerr := s.objectLocked(r, r.PathValue("id"))
	var view map[string]any
	if aerr == nil {
		fields := queryFields(r.URL.Query())
		switch o := o.(type) {
		case *waba:
			view = map[string]any{"id": o.id, "name": o.name, "currency": "USD", "timezone_id": "1",
				"message_template_namespace": "sim_" + o.id}
		case *phone:
			view = o.fields(fields != nil)
		case *media:
			view = o.fields(base)
		case *template:
			t := o.view()
			view = map[string]any{"id": t.ID, "name": t.Name, "language": t.Language, "category": t.Category,
				"status": t.Status, "components": t.Components, "parameter_format": t.ParameterFormat,
				"rejected_reason": t.RejectedReason}
		case *flow:
			view = o.fields()
		case *catalog:
			view = o.fields()
		case *product:
			view = o.fields()
		}
		view = selectFields(view, fields)
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, view)
}

// handleUpdateObject serves POST /{version}/{id}: product, catalog, flow and
// template updates.
func (s *Simulator) handleUpdateObject(w http.ResponseWriter, r *http.Request) {
	body := requestBody(r)
	delay := s.config().TemplateApprovalDelay
	s.mu.Lock()
	o, aerr := s.objectLocked(r, r.PathValue("id"))
	var review *template
	if aerr == nil {
		switch o := o.(type) {
		case *product:
			aerr = o.update(body)
		case *catalog:
			aerr = o.update(body)
		case *flow:
			aerr = o.update(body)
		case *template:
			var resubmitted bool
			resubmitted, aerr = s.updateTemplateLocked(o, body)
			if resubmitted {
				review = o
			}
		default:
			aerr = errInvalid("Unsupported post request: a %s cannot be updated here", o.nodeType())
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if review != nil && delay >= 0 {
		s.sched.push(event{at: time.Now().Add(delay), kind: evTemplate, tmpl: review})
	}
	writeJSON(w, http.StatusOK, success)
}

// handleDeleteObject serves DELETE /{version}/{id}.
func (s *Simulator) handleDeleteObject(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	o, aerr := s.objectLocked(r, r.PathValue("id"))
	if aerr == nil {
		switch o := o.(type) {
		case *media:
			delete(s.objects, o.id)
		case *flow:
			aerr = s.deleteFlowLocked(o)
		case *catalog:
			s.deleteCatalogLocked(o)
		case *product:
			s.deleteProductLocked(o)
		case *template:
			s.deleteTemplateLocked(o)
		default:
			aerr = errInvalid("Unsupported delete request: a %s cannot be deleted", o.nodeType())
		}
	}
	s.mu.Unlock()
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	writeJSON(w, http.StatusOK, success)
}
