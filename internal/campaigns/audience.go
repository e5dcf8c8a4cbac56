package campaigns

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// Audiences compiles contact filters into SQL over the contacts table
// (internal/contacts): a campaign whose recipients come from its
// organization's contacts resolves them with one INSERT ... SELECT.
type Audiences interface {
	CheckAudience(ctx context.Context, orgID uuid.UUID, a *models.Audience) error
	AudienceCondition(ctx context.Context, orgID uuid.UUID, a *models.Audience) (string, []any, error)
	CountAudience(ctx context.Context, orgID uuid.UUID, a *models.Audience) (int64, error)
}

// maxAudienceValue bounds one fixed placeholder value.
const maxAudienceValue = 1000

// applyAudience sets (or, with nil, clears) a draft campaign's audience.
// Its recipients then come from contacts at the start, so a campaign that
// already has uploaded recipients cannot take one. A fixed value fills its
// placeholder through the variable mapping (DataField), as a CSV import's
// fixed values do.
func (s *Service) applyAudience(ctx context.Context, c *models.Campaign, a *models.CampaignAudience) error {
	if a == nil {
		c.Audience.V = nil
		return nil
	}
	if s.audiences == nil {
		return apperr.Invalidf("audiences are not available here")
	}
	if c.ID != uuid.Nil {
		var n int64
		if err := s.db.WithContext(ctx).Model(&models.CampaignRecipient{}).Where("campaign_id = ?", c.ID).Count(&n).Error; err != nil {
			return err
		}
		if n > 0 {
			return apperr.Conflictf("the campaign already has %d uploaded recipients: its recipients cannot also come from an audience (create another campaign)", n)
		}
	}
	if err := s.audiences.CheckAudience(ctx, c.OrganizationID, &a.Audience); err != nil {
		return err
	}
	if c.VariableMapping.V == nil {
		c.VariableMapping.V = map[string]string{}
	}
	values := map[string]string{}
	for k, v := range a.Values {
		k = strings.TrimSpace(k)
		if k == "" || strings.TrimSpace(v) == "" {
			return apperr.Invalidf("audience.values keys and values must be non-empty")
		}
		if utf8.RuneCountInString(v) > maxAudienceValue {
			return apperr.Invalidf("audience.values.%s is longer than %d characters", k, maxAudienceValue)
		}
		values[k] = v
		c.VariableMapping.V[k] = DataField(k)
	}
	a.Values = values
	c.Audience.V = a
	return nil
}

// CountAudience counts the contacts the campaign's audience selects now
// (nothing is created): the size an admin previews before the start.
func (s *Service) CountAudience(ctx context.Context, orgID uuid.UUID, a *models.Audience) (int64, error) {
	if s.audiences == nil {
		return 0, apperr.Invalidf("audiences are not available here")
	}
	return s.audiences.CountAudience(ctx, orgID, a)
}

// fromAudience tells whether the campaign's recipients are still to be
// resolved from its audience.
func fromAudience(c *models.Campaign) bool {
	return c.Audience.V != nil && c.AudienceResolvedAt == nil
}

// startFromAudience resolves a campaign's audience into its recipients and
// moves it from status from to sending (with set), in one transaction: the
// snapshot is taken exactly once, by the start that wins the campaign's row
// lock, and a refusal (no contact matches, a placeholder no recipient can
// fill) leaves nothing behind. The recipients are inserted by one
// set-based statement in the order of their numbers (which is their send
// order, and keeps the (campaign_id, phone_number) index's inserts at its
// right edge); a contact's name (or its
// profile name) is the recipient's name, its metadata the recipient's
// fields, and the audience's fixed values are added to each.
func (s *Service) startFromAudience(ctx context.Context, c *models.Campaign, from models.CampaignStatus, set map[string]any) (*models.Campaign, error) {
	if s.audiences == nil {
		return nil, apperr.Invalidf("audiences are not available here")
	}
	a := c.Audience.V
	cond, args, err := s.audiences.AudienceCondition(ctx, c.OrganizationID, &a.Audience)
	if err != nil {
		return nil, err
	}
	fixed := map[string]string{}
	for k, v := range a.Values {
		fixed[DataField(k)] = v
	}
	extra, err := json.Marshal(fixed)
	if err != nil {
		return nil, err
	}
	t, err := s.templates.Sendable(ctx, c.OrganizationID, c.AccountID, c.TemplateID, "")
	if err != nil {
		return nil, err
	}
	var started models.Campaign
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		cur, err := get(ctx, tx.Clauses(clause.Locking{Strength: "UPDATE"}), c.OrganizationID, c.ID)
		if err != nil {
			return err
		}
		if cur.Status != from || !fromAudience(cur) {
			return apperr.Conflictf("cannot start a campaign that is %s", cur.Status)
		}
		// Sorting half a million recipients by number, and hashing the
		// tag's contacts, spill to disk at the default 4 MB (an external
		// merge of ~50 MB); this transaction's statement may use more.
		if err := tx.Exec(`SET LOCAL work_mem = '64MB'`).Error; err != nil {
			return err
		}
		res := tx.Exec(`INSERT INTO campaign_recipients (campaign_id, organization_id, phone_number, name, data)
			SELECT ?, c.organization_id, c.phone_number, COALESCE(NULLIF(c.name, ''), c.profile_name, ''),
			       CASE WHEN jsonb_typeof(c.metadata) = 'object' THEN c.metadata ELSE '{}'::jsonb END || CAST(? AS jsonb)
			FROM contacts c WHERE `+cond+`
			ORDER BY c.phone_number
			ON CONFLICT (campaign_id, phone_number) DO NOTHING`, append([]any{c.ID, string(extra)}, args...)...)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return apperr.Invalidf("the campaign's audience matches no contact")
		}
		if err := s.checkMapping(ctx, tx, cur, t); err != nil {
			return err
		}
		set["audience_resolved_at"] = s.now()
		set["total_recipients"] = res.RowsAffected
		set["pending_count"] = res.RowsAffected
		set["updated_at"] = s.now()
		return tx.Model(&started).Where("id = ?", c.ID).Clauses(returningAll).Updates(set).Error
	})
	if err != nil {
		return nil, err
	}
	s.announce(ctx, &started)
	return &started, nil
}
