package messages

import (
	"context"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/paging"
	"wharf/internal/integration/docframe"
	"wharf/internal/pflows"
	"wharf/models"
)

// Platform Flows are mirrored to the provider through the core platform
// flows domain (internal/pflows) by two document methods, run with
// run_method: publish builds the flow JSON from the screens and fields
// rows, creates the core flow (or updates its draft), saves it to the
// provider and publishes it (Draft → Published, flow_id set); deprecate
// deprecates it (Published → Deprecated). The core flow is found by
// core_flow_id, else by the flow's name on its account, so a publish
// refused after the core flow was created (the provider found errors in
// its JSON) reuses it the next time. Provider calls are made by the core
// in transactions of its own: what the provider did is kept even when the
// document's change then fails.
type flowHook struct{ s *Service }

func (flowHook) Doctypes() []string { return []string{DoctypeFlow} }

func (flowHook) DocMethods(string) []string { return []string{"publish", "deprecate"} }

func (h flowHook) Handle(ctx context.Context, tx *gorm.DB, ev docframe.Event, doc *docframe.Doc) error {
	if ev != docframe.Validate {
		return nil
	}
	if c := str(doc.Get("category")); !slices.Contains(pflows.Categories, c) {
		return docframe.Validationf("category must be one of %s", strings.Join(pflows.Categories, ", "))
	}
	return nil
}

func (h flowHook) RunDocMethod(ctx context.Context, tx *gorm.DB, method string, doc *docframe.Doc, args map[string]any) (any, error) {
	s := h.s
	orgID := doc.OrganizationID
	account, accountID, err := s.accountOrDefault(ctx, orgID, str(doc.Get("platform_account")))
	if err != nil {
		return nil, err
	}
	switch method {
	case "publish":
		if st := str(doc.Get("status")); st != "Draft" {
			return nil, docframe.Validationf("only a Draft flow can be published; %s is %s", doc.Name, st)
		}
		f, err := s.coreFlow(ctx, orgID, accountID, doc)
		if err != nil {
			return nil, err
		}
		name, cats, def := doc.Name, []string{str(doc.Get("category"))}, flowJSON(doc)
		in := pflows.Input{Name: &name, Categories: &cats, JSONDefinition: def}
		if f == nil {
			in.AccountID = &accountID
			f, err = s.Flows.Create(ctx, orgID, in)
		} else if f.Status == models.FlowDraft {
			f, err = s.Flows.Update(ctx, orgID, f.ID, in)
		}
		if err != nil {
			return nil, err
		}
		if f.Status == models.FlowDraft {
			saved, err := s.Flows.SaveToProvider(ctx, orgID, f.ID)
			if err != nil {
				return nil, err
			}
			if n := len(saved.ValidationErrors); n > 0 {
				return nil, docframe.Validationf("the provider found %d errors in the flow JSON: %s", n, saved.ValidationErrors[0].Message)
			}
			if f, err = s.Flows.Publish(ctx, orgID, f.ID); err != nil {
				return nil, err
			}
		}
		doc.Set("status", "Published")
		doc.Set("flow_id", deref(f.ProviderFlowID))
		doc.Set("core_flow_id", f.ID.String())
		doc.Set("platform_account", account)
	case "deprecate":
		if st := str(doc.Get("status")); st != "Published" {
			return nil, docframe.Validationf("only a Published flow can be deprecated; %s is %s", doc.Name, st)
		}
		id, err := uuid.Parse(str(doc.Get("core_flow_id")))
		if err != nil {
			return nil, docframe.Validationf("%s has no core flow", doc.Name)
		}
		if _, err := s.Flows.Deprecate(ctx, orgID, id); err != nil {
			return nil, err
		}
		doc.Set("status", "Deprecated")
	}
	return map[string]any{"name": doc.Name, "status": doc.Get("status"), "flow_id": doc.Get("flow_id")}, nil
}

// coreFlow finds the document's core flow (nil: none yet).
func (s *Service) coreFlow(ctx context.Context, orgID, accountID uuid.UUID, doc *docframe.Doc) (*models.PlatformFlow, error) {
	if id, err := uuid.Parse(str(doc.Get("core_flow_id"))); err == nil {
		return s.Flows.Get(ctx, orgID, id)
	}
	for page := 1; ; page++ {
		rows, _, err := s.Flows.List(ctx, orgID, pflows.Filter{AccountID: &accountID}, paging.Params{Page: page, Limit: 100})
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if rows[i].Name == doc.Name {
				return &rows[i], nil
			}
		}
		if len(rows) < 100 {
			return nil, nil
		}
	}
}

// flowJSON builds the provider's flow JSON from the screens and fields
// rows: one screen per row in order, its fields as components, and a
// footer that goes to the next screen or, on a terminal screen (or the
// last), completes the flow with every field of the flow in its payload.
func flowJSON(doc *docframe.Doc) map[string]any {
	screens, _ := doc.Get("screens").([]map[string]any)
	fields, _ := doc.Get("fields").([]map[string]any)
	payload := map[string]any{}
	for _, f := range fields {
		if n := str(f["field_name"]); n != "" && !strings.HasPrefix(str(f["field_type"]), "Text") {
			payload[n] = "${form." + n + "}"
		}
	}
	var out []any
	for i, sc := range screens {
		id := str(sc["screen_id"])
		var children []any
		for _, f := range fields {
			if str(f["screen_id"]) != id {
				continue
			}
			children = append(children, component(f))
		}
		terminal, _ := sc["terminal"].(int64)
		footer := map[string]any{"type": "Footer", "label": "Continue"}
		if terminal == 1 || i == len(screens)-1 {
			footer["label"] = "Submit"
			footer["on-click-action"] = map[string]any{"name": "complete", "payload": payload}
		} else {
			footer["on-click-action"] = map[string]any{"name": "navigate", "next": map[string]any{"type": "screen",
				"name": str(screens[i+1]["screen_id"])}, "payload": map[string]any{}}
		}
		children = append(children, footer)
		screen := map[string]any{"id": id, "title": str(sc["title"]), "layout": map[string]any{"type": "SingleColumnLayout",
			"children": []any{map[string]any{"type": "Form", "name": "form", "children": children}}}}
		if terminal == 1 || i == len(screens)-1 {
			screen["terminal"] = true
		}
		out = append(out, screen)
	}
	return map[string]any{"version": "6.0", "screens": out}
}

func component(f map[string]any) map[string]any {
	typ, label := str(f["field_type"]), str(f["label"])
	if typ == "TextHeading" || typ == "TextBody" {
		return map[string]any{"type": typ, "text": label}
	}
	c := map[string]any{"type": typ, "name": str(f["field_name"]), "label": label}
	if req, _ := f["required"].(int64); req == 1 {
		c["required"] = true
	}
	if typ == "Dropdown" || typ == "RadioButtonsGroup" || typ == "CheckboxGroup" {
		var opts []any
		for _, o := range strings.Split(str(f["options"]), "\n") {
			if o = strings.TrimSpace(o); o != "" {
				opts = append(opts, map[string]any{"id": o, "title": o})
			}
		}
		c["data-source"] = opts
	}
	return c
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
