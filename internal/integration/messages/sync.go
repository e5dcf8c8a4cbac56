package messages

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/infra/paging"
	"wharf/internal/integration/docframe"
	"wharf/internal/templates"
	"wharf/models"
)

// SyncResult is what wharf.api.sync_templates did.
type SyncResult struct {
	Accounts int `json:"accounts"` // Platform Accounts synced
	Synced   int `json:"synced"`   // templates the provider returned, over all of them
	New      int `json:"new"`      // Platform Templates created
	Updated  int `json:"updated"`  // Platform Templates changed
}

// syncTemplates is wharf.api.sync_templates: for every Platform Account of
// the organization (not only the first), the core sync reads all pages of
// the account's templates at the provider; then each core template is
// reflected into the Platform Template with its template_id, created or
// updated as the caller (create, write on Platform Template).
func (s *Service) syncTemplates(ctx context.Context, c *docframe.Call) (any, error) {
	if err := s.Ensure(ctx, c.OrganizationID); err != nil {
		return nil, err
	}
	for _, right := range []string{docframe.PermCreate, docframe.PermWrite} {
		if err := c.Frame.Require(ctx, c.Actor, c.OrganizationID, DoctypeTemplate, right); err != nil {
			return nil, err
		}
	}
	// Every account's templates, whether or not the caller may read the
	// accounts (the core's sync needs templates:update alone); only counts
	// are answered.
	rows, err := c.Frame.List(ctx, system, c.OrganizationID, DoctypeAccount, docframe.ListArgs{Fields: "name", Limit: docframe.MaxLimit,
		OrderBy: "name asc"})
	if err != nil {
		return nil, err
	}
	res := SyncResult{}
	for _, r := range rows {
		account := str(r.(map[string]any)["name"])
		coreID, err := s.core(ctx, nil, c.OrganizationID, account)
		if err != nil {
			return nil, err
		}
		sr, err := s.Templates.Sync(ctx, c.OrganizationID, coreID)
		if err != nil {
			return nil, err
		}
		res.Accounts++
		res.Synced += sr.Synced
		if err := s.reflectTemplates(ctx, c, account, coreID, &res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

func (s *Service) reflectTemplates(ctx context.Context, c *docframe.Call, account string, coreID uuid.UUID, res *SyncResult) error {
	for page := 1; ; page++ {
		ts, _, err := s.Templates.List(ctx, c.OrganizationID, templates.Filter{AccountID: &coreID}, paging.Params{Page: page, Limit: 100})
		if err != nil {
			return err
		}
		ids := make([]string, len(ts))
		for i := range ts {
			ids[i] = ts[i].ProviderTemplateID
		}
		names, err := s.frame.NamesBy(ctx, nil, c.OrganizationID, DoctypeTemplate, "template_id", ids)
		if err != nil {
			return err
		}
		for i := range ts {
			fields := templateFields(&ts[i], account)
			name := names[ts[i].ProviderTemplateID]
			if name == "" {
				if _, err := c.Frame.Insert(ctx, c.Actor, c.OrganizationID, DoctypeTemplate, fields); err != nil {
					return err
				}
				res.New++
				continue
			}
			doc, err := s.frame.GetDoc(ctx, nil, c.OrganizationID, DoctypeTemplate, name)
			if err != nil {
				return err
			}
			change := map[string]any{}
			for k, v := range fields {
				if k != "buttons" && str(doc.Get(k)) != v {
					change[k] = v
				}
			}
			if len(change) == 0 {
				continue
			}
			if _, err := c.Frame.Update(ctx, c.Actor, c.OrganizationID, DoctypeTemplate, name, change); err != nil {
				return err
			}
			res.Updated++
		}
		if len(ts) < 100 {
			return nil
		}
	}
}

// templateFields are a core template's Platform Template fields.
func templateFields(t *models.Template, account string) map[string]any {
	f := map[string]any{"template_name": t.Name, "language_code": t.Language, "category": t.Category, "status": t.Status,
		"template_id": t.ProviderTemplateID, "platform_account": account}
	var buttons []map[string]any
	for _, c := range t.Components.V {
		text, _ := c["text"].(string)
		switch strings.ToUpper(str(c["type"])) {
		case "HEADER":
			f["header_type"] = strings.ToUpper(str(c["format"]))
			f["header"] = text
		case "BODY":
			f["template"] = text
		case "FOOTER":
			f["footer"] = text
		case "BUTTONS":
			list, _ := c["buttons"].([]any)
			for _, x := range list {
				b, _ := x.(map[string]any)
				row := map[string]any{"button_label": str(b["text"]), "button_type": "Quick Reply"}
				switch strings.ToUpper(str(b["type"])) {
				case "URL":
					row["button_type"], row["url"] = "URL", str(b["url"])
				case "PHONE_NUMBER":
					row["button_type"], row["phone_number"] = "Call", str(b["phone_number"])
				}
				buttons = append(buttons, row)
			}
		}
	}
	if _, ok := f["template"]; !ok {
		f["template"] = "(" + t.Name + ")" // a template without a body: the field is mandatory
	}
	if len(buttons) > 0 {
		f["buttons"] = buttons
	}
	return f
}
