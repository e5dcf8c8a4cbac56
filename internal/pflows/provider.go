package pflows

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/infra/apperr"
	"wharf/models"
	"wharf/platform"
)

var forUpdate = clause.Locking{Strength: "UPDATE"}

// Saved is the answer of a save to the provider.
type Saved struct {
	ProviderFlowID   string
	ValidationErrors []platform.FlowValidationError
	Flow             *models.PlatformFlow
}

// SaveToProvider creates the flow at the provider under its account's
// business account (with its name and categories) when it has no provider
// id yet, or brings the provider's name and categories up to date, then
// uploads its flow JSON. The provider's validation errors are stored and
// answered: the flow stays DRAFT, and publishing is refused until a save
// comes back clean.
//
// The provider id is kept as soon as the provider created the flow, even
// when the upload then fails, so that a retry uploads to the same flow
// instead of creating another one.
func (s *Service) SaveToProvider(ctx context.Context, orgID, id uuid.UUID) (*Saved, error) {
	var (
		out     Saved
		failure error // a provider failure after the flow's creation was recorded
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		f, err := s.locked(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if f.Status != models.FlowDraft {
			return apperr.Conflictf("only DRAFT flows can be saved to the provider; this one is %s", f.Status)
		}
		if len(f.JSONDefinition.V) == 0 {
			return apperr.Invalidf("json_definition is empty: there is no flow JSON to upload")
		}
		// Indented, so that the provider's line and column numbers point
		// into a readable document.
		def, err := json.MarshalIndent(f.JSONDefinition.V, "", "  ")
		if err != nil {
			return err
		}
		a, err := s.accounts.Get(ctx, orgID, f.AccountID)
		if err != nil {
			return err
		}
		cr := a.Creds()
		if f.ProviderFlowID == nil {
			pid, err := s.provider.CreateFlow(ctx, cr, f.Name, f.Categories.V)
			if err != nil {
				return providerError("creating the flow", err)
			}
			if err := tx.Model(f).Updates(map[string]any{"provider_flow_id": pid, "updated_at": s.now()}).Error; err != nil {
				return err
			}
			f.ProviderFlowID = &pid
		} else if err := s.provider.UpdateFlow(ctx, cr, *f.ProviderFlowID, f.Name, f.Categories.V); err != nil {
			failure = providerError("updating the flow's name and categories", err)
			return nil
		}
		verrs, err := s.provider.UploadFlowJSON(ctx, cr, *f.ProviderFlowID, def)
		if err != nil {
			failure = providerError("uploading the flow JSON", err)
			return nil
		}
		if verrs == nil {
			verrs = []platform.FlowValidationError{}
		}
		stored := models.JSON[[]map[string]any]{V: make([]map[string]any, 0, len(verrs))}
		for _, v := range verrs {
			b, _ := json.Marshal(v)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			stored.V = append(stored.V, m)
		}
		now := s.now()
		out.ProviderFlowID, out.ValidationErrors = *f.ProviderFlowID, verrs
		return tx.Model(f).Updates(map[string]any{"validation_errors": stored, "needs_save": false, "saved_at": now, "updated_at": now}).Error
	})
	if err != nil {
		return nil, err
	}
	if failure != nil {
		return nil, failure
	}
	out.Flow, err = s.Get(ctx, orgID, id)
	return &out, err
}

// Publish makes a DRAFT flow PUBLISHED at the provider, then here. It is
// refused here, without asking the provider, when the flow is in another
// state, was never saved, changed since its last save, or the provider
// found errors in its JSON.
func (s *Service) Publish(ctx context.Context, orgID, id uuid.UUID) (*models.PlatformFlow, error) {
	return s.transition(ctx, orgID, id, func(f *models.PlatformFlow) error {
		switch {
		case f.Status != models.FlowDraft:
			return apperr.Conflictf("only DRAFT flows can be published; this one is %s", f.Status)
		case f.ProviderFlowID == nil:
			return apperr.Invalidf("the flow was never saved to the provider: save it (POST /api/flows/{id}/save-to-meta) before publishing")
		case f.NeedsSave:
			return apperr.Invalidf("the flow changed since it was saved to the provider: save it again before publishing")
		case len(f.ValidationErrors.V) > 0:
			return apperr.Invalidf("the provider found %d validation errors in the flow JSON: fix them and save again before publishing", len(f.ValidationErrors.V))
		}
		return nil
	}, func(ctx context.Context, cr platform.Creds, providerID string) error {
		return providerError("publishing the flow", s.provider.PublishFlow(ctx, cr, providerID))
	}, models.FlowPublished)
}

// Deprecate makes a PUBLISHED flow DEPRECATED at the provider, then here.
// DEPRECATED is final.
func (s *Service) Deprecate(ctx context.Context, orgID, id uuid.UUID) (*models.PlatformFlow, error) {
	return s.transition(ctx, orgID, id, func(f *models.PlatformFlow) error {
		if f.Status != models.FlowPublished || f.ProviderFlowID == nil {
			return apperr.Conflictf("only PUBLISHED flows can be deprecated; this one is %s", f.Status)
		}
		return nil
	}, func(ctx context.Context, cr platform.Creds, providerID string) error {
		return providerError("deprecating the flow", s.provider.DeprecateFlow(ctx, cr, providerID))
	}, models.FlowDeprecated)
}

// transition checks the flow under its row lock, asks the provider, and
// records the new status.
func (s *Service) transition(ctx context.Context, orgID, id uuid.UUID, check func(*models.PlatformFlow) error,
	call func(context.Context, platform.Creds, string) error, to string) (*models.PlatformFlow, error) {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		f, err := s.locked(ctx, tx, orgID, id)
		if err != nil {
			return err
		}
		if err := check(f); err != nil {
			return err
		}
		a, err := s.accounts.Get(ctx, orgID, f.AccountID)
		if err != nil {
			return err
		}
		if err := call(ctx, a.Creds(), *f.ProviderFlowID); err != nil {
			return err
		}
		return tx.Model(f).Updates(map[string]any{"status": to, "updated_at": s.now()}).Error
	})
	if err != nil {
		return nil, err
	}
	return s.Get(ctx, orgID, id)
}

// SyncResult counts what a sync did.
type SyncResult struct {
	Synced  int // flows the provider listed
	New     int // created here
	Updated int // changed here
}

// Sync reads the account's flows at the provider and matches them to the
// rows here by provider id. A flow not known here is created with its flow
// JSON (downloaded from the provider); a known one takes the provider's
// status, and its name and categories unless it has changes not yet saved
// to the provider. Its definition here is not replaced: the provider only
// changes a flow's JSON by our uploads. Flows the provider does not list
// are left alone, and so are flows in a status this service does not know.
func (s *Service) Sync(ctx context.Context, orgID, accountID uuid.UUID) (*SyncResult, error) {
	a, err := s.accounts.Get(ctx, orgID, accountID)
	if err != nil {
		return nil, err
	}
	cr := a.Creds()
	listed, err := s.provider.ListFlows(ctx, cr)
	if err != nil {
		return nil, providerError("listing the flows", err)
	}
	var known []string
	if err := s.db.WithContext(ctx).Model(&models.PlatformFlow{}).Where("account_id = ? AND provider_flow_id IS NOT NULL", a.ID).
		Pluck("provider_flow_id", &known).Error; err != nil {
		return nil, err
	}
	// The JSON of new flows is fetched before the transaction, which then
	// holds no connection while the provider answers.
	definitions := map[string]map[string]any{}
	for _, pf := range listed {
		if slices.Contains(known, pf.ID) || !slices.Contains(Statuses, pf.Status) {
			continue
		}
		data, err := s.provider.FlowJSON(ctx, cr, pf.ID)
		if err != nil {
			return nil, providerError("downloading the JSON of flow "+pf.ID, err)
		}
		def := map[string]any{}
		if len(data) > 0 && json.Unmarshal(data, &def) != nil {
			def = map[string]any{} // not an object: the provider's validation errors say why
		}
		definitions[pf.ID] = def
	}
	res := &SyncResult{Synced: len(listed)}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, pf := range listed {
			if !slices.Contains(Statuses, pf.Status) {
				continue
			}
			cats := pf.Categories
			if cats == nil {
				cats = []string{}
			}
			var f models.PlatformFlow
			err := tx.Clauses(forUpdate).Where("account_id = ? AND provider_flow_id = ?", a.ID, pf.ID).Limit(1).Find(&f).Error
			if err != nil {
				return err
			}
			if f.ID == uuid.Nil {
				def, ok := definitions[pf.ID]
				if !ok {
					continue // created here since the list above, by a save or another sync
				}
				pid := pf.ID
				f = models.PlatformFlow{ID: uuid.New(), OrganizationID: orgID, AccountID: a.ID, ProviderFlowID: &pid, Name: pf.Name,
					Status: pf.Status, NeedsSave: false}
				f.Categories.V, f.JSONDefinition.V, f.ValidationErrors.V = cats, def, []map[string]any{}
				ins := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&f)
				if ins.Error != nil {
					return ins.Error
				}
				res.New += int(ins.RowsAffected)
				continue
			}
			updates := map[string]any{}
			if f.Status != pf.Status {
				updates["status"] = pf.Status
			}
			if !f.NeedsSave && f.Name != pf.Name {
				updates["name"] = pf.Name
			}
			if !f.NeedsSave && !slices.Equal(f.Categories.V, cats) {
				updates["categories"] = models.JSON[[]string]{V: cats}
			}
			if len(updates) == 0 {
				continue
			}
			updates["updated_at"] = s.now()
			if err := tx.Model(&f).Updates(updates).Error; err != nil {
				return err
			}
			res.Updated++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
