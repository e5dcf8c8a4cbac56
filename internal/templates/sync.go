package templates

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/jobs"
	"wharf/models"
)

// SyncResult counts what a sync did.
type SyncResult struct {
	Synced  int `json:"synced"`  // templates the provider returned
	New     int `json:"new"`     // created here
	Updated int `json:"updated"` // changed here
}

// Sync reads every page of the account's templates at the provider and
// creates or updates them here (matched by name and language). Templates the
// provider does not return are left alone.
func (s *Service) Sync(ctx context.Context, orgID, accountID uuid.UUID) (*SyncResult, error) {
	defer s.recent.Clear() // after the change, for RecentSendable
	a, err := s.accounts.Get(ctx, orgID, accountID)
	if err != nil {
		return nil, err
	}
	all, err := s.provider.AllTemplates(ctx, a.Creds())
	if err != nil {
		return nil, providerError("listing the templates", err)
	}
	res := &SyncResult{Synced: len(all)}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, d := range all {
			var comps []map[string]any
			if err := json.Unmarshal(d.Components, &comps); err != nil {
				s.log.Warn("template with unreadable components skipped", "template", d.Name, "error", err)
				continue
			}
			status, reason := strings.ToUpper(d.Status), d.RejectedReason
			if reason == "NONE" {
				reason = ""
			}
			format := normalizeFormat(d.ParameterFormat)
			var t models.Template
			err := tx.Where("account_id = ? AND name = ? AND language = ?", a.ID, d.Name, d.Language).Take(&t).Error
			if errors.Is(err, gorm.ErrRecordNotFound) {
				t = models.Template{ID: uuid.New(), OrganizationID: orgID, AccountID: a.ID, ProviderTemplateID: d.ID, Name: d.Name,
					Language: d.Language, Category: strings.ToUpper(d.Category), Status: status, ParameterFormat: format, RejectedReason: reason}
				t.Components.V, t.SampleValues.V = comps, []map[string]any{}
				if err := tx.Create(&t).Error; err != nil {
					return err
				}
				res.New++
				continue
			}
			if err != nil {
				return err
			}
			if t.ProviderTemplateID == d.ID && t.Status == status && t.Category == strings.ToUpper(d.Category) &&
				t.RejectedReason == reason && t.ParameterFormat == format && reflect.DeepEqual(jsonNormal(t.Components.V), jsonNormal(comps)) {
				continue
			}
			if err := tx.Model(&t).Updates(map[string]any{"provider_template_id": d.ID, "status": status, "category": strings.ToUpper(d.Category),
				"rejected_reason": reason, "parameter_format": format, "components": models.JSON[[]map[string]any]{V: comps},
				"updated_at": s.now()}).Error; err != nil {
				return err
			}
			res.Updated++
		}
		return nil
	})
	return res, err
}

// jsonNormal makes two decodings of the same JSON comparable.
func jsonNormal(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// RequestSync runs the template:sync job for an account and waits up to
// wait for its counts. done is false when the job is still running (it
// finishes on its own); taskID names it in the job monitor.
func (s *Service) RequestSync(ctx context.Context, orgID, accountID uuid.UUID, wait time.Duration) (res *SyncResult, taskID string, done bool, err error) {
	if _, err := s.accounts.Get(ctx, orgID, accountID); err != nil {
		return nil, "", false, err
	}
	info, result, done, err := s.enq.EnqueueAndWait(ctx, jobs.TemplateSync{OrganizationID: orgID, AccountID: accountID}, wait)
	switch {
	case errors.Is(err, jobs.ErrTaskFailed):
		return nil, info.ID, true, apperr.Upstreamf("template sync failed: %s", info.LastErr)
	case err != nil:
		return nil, "", false, err
	case !done:
		return nil, info.ID, false, nil
	}
	res = &SyncResult{}
	return res, info.ID, true, json.Unmarshal(result, res)
}
