package contacts

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// Audience selects contacts of an organization (models.Audience): a
// campaign's recipients when they are not uploaded, and what a segment
// saves under a name.
type Audience = models.Audience

// Bounds of an audience, so that a filter stays a cheap query.
const (
	maxAudienceTags     = 20
	maxAudienceMetadata = 10
	maxAudienceDays     = 3650
	maxAudienceText     = 500
)

var metadataOps = map[string]bool{"eq": true, "neq": true, "contains": true, "exists": true, "missing": true}

// validate checks the audience's shape (not whether its tags exist);
// inSegment is set for a segment's own filter, which may not name a
// segment.
func validateAudience(a *Audience, inSegment bool) error {
	for field, names := range map[string][]string{"tags_any": a.TagsAny, "tags_all": a.TagsAll, "tags_none": a.TagsNone} {
		if len(names) > maxAudienceTags {
			return apperr.Invalidf("%s has more than %d tags", field, maxAudienceTags)
		}
		for _, n := range names {
			if strings.TrimSpace(n) == "" || len(n) > 100 {
				return apperr.Invalidf("%s holds an empty or overlong tag name", field)
			}
		}
	}
	if len(a.Metadata) > maxAudienceMetadata {
		return apperr.Invalidf("metadata has more than %d conditions", maxAudienceMetadata)
	}
	for i, m := range a.Metadata {
		if strings.TrimSpace(m.Key) == "" || len(m.Key) > 100 {
			return apperr.Invalidf("metadata[%d].key is required (at most 100 characters)", i)
		}
		if !metadataOps[m.Op] {
			return apperr.Invalidf("metadata[%d].op must be one of eq, neq, contains, exists, missing", i)
		}
		needsValue := m.Op == "eq" || m.Op == "neq" || m.Op == "contains"
		if needsValue && m.Value == "" {
			return apperr.Invalidf("metadata[%d].value is required for %s", i, m.Op)
		}
		if len(m.Value) > maxAudienceText {
			return apperr.Invalidf("metadata[%d].value is longer than %d characters", i, maxAudienceText)
		}
	}
	for field, d := range map[string]*int{"active_within_days": a.ActiveWithinDays, "inactive_for_days": a.InactiveForDays} {
		if d != nil && (*d < 1 || *d > maxAudienceDays) {
			return apperr.Invalidf("%s must be between 1 and %d", field, maxAudienceDays)
		}
	}
	if inSegment && a.SegmentID != nil {
		return apperr.Invalidf("a segment's filter cannot name another segment")
	}
	return nil
}

// CheckAudience validates an audience before it is saved on a campaign:
// its shape, its account, its segment and that every tag it names exists
// in the organization (a misspelt tag would silently select nobody).
func (s *Service) CheckAudience(ctx context.Context, orgID uuid.UUID, a *Audience) error {
	return s.checkAudience(ctx, orgID, a, false)
}

func (s *Service) checkAudience(ctx context.Context, orgID uuid.UUID, a *Audience, inSegment bool) error {
	if err := validateAudience(a, inSegment); err != nil {
		return err
	}
	if a.AccountID != nil {
		var n int64
		if err := s.db.WithContext(ctx).Model(&models.PlatformAccount{}).Scopes(tenant.Scope(orgID)).
			Where("id = ?", *a.AccountID).Count(&n).Error; err != nil {
			return err
		}
		if n == 0 {
			return apperr.Invalidf("account_id does not name an account of this organization")
		}
	}
	if a.SegmentID != nil {
		if _, err := s.GetSegment(ctx, orgID, *a.SegmentID); err != nil {
			if apperr.Is(err, apperr.NotFound) {
				return apperr.Invalidf("segment_id does not name a segment of this organization")
			}
			return err
		}
	}
	names := append(append(append([]string{}, a.TagsAny...), a.TagsAll...), a.TagsNone...)
	ids, err := s.tagIDs(ctx, orgID, names)
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, ok := ids[strings.ToLower(strings.TrimSpace(n))]; !ok {
			return apperr.Invalidf("no tag is named %q", n)
		}
	}
	return nil
}

// tagIDs maps the lower-cased names that exist in the organization to their
// tag ids.
func (s *Service) tagIDs(ctx context.Context, orgID uuid.UUID, names []string) (map[string]uuid.UUID, error) {
	out := map[string]uuid.UUID{}
	if len(names) == 0 {
		return out, nil
	}
	lower := make([]string, len(names))
	for i, n := range names {
		lower[i] = strings.ToLower(strings.TrimSpace(n))
	}
	var rows []struct {
		ID   uuid.UUID
		Name string
	}
	if err := s.db.WithContext(ctx).Raw(`SELECT id, lower(name) AS name FROM tags WHERE organization_id = ? AND lower(name) IN ?`,
		orgID, lower).Scan(&rows).Error; err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.Name] = r.ID
	}
	return out, nil
}

// AudienceCondition compiles the audience into a WHERE condition over the
// contacts table under the alias c, with its arguments; the organization
// is part of it. Tags are looked up now (a tag deleted since the audience
// was saved holds no contact); a segment contributes its filter of the
// moment, and a segment that no longer exists is an error, so a campaign
// never starts with an audience that lost its meaning. The condition is
// set-based: whoever uses it (a count, an INSERT ... SELECT) reads the
// contacts in one statement.
func (s *Service) AudienceCondition(ctx context.Context, orgID uuid.UUID, a *Audience) (string, []any, error) {
	conds := []string{"c.organization_id = ?"}
	args := []any{orgID}
	if err := s.addAudience(ctx, orgID, a, &conds, &args, false); err != nil {
		return "", nil, err
	}
	return strings.Join(conds, " AND "), args, nil
}

func (s *Service) addAudience(ctx context.Context, orgID uuid.UUID, a *Audience, conds *[]string, args *[]any, inSegment bool) error {
	if err := validateAudience(a, inSegment); err != nil {
		return err
	}
	add := func(c string, v ...any) { *conds = append(*conds, c); *args = append(*args, v...) }
	if a.AccountID != nil {
		add("c.account_id = ?", *a.AccountID)
	}
	ids, err := s.tagIDs(ctx, orgID, append(append(append([]string{}, a.TagsAny...), a.TagsAll...), a.TagsNone...))
	if err != nil {
		return err
	}
	known := func(names []string) []uuid.UUID {
		var out []uuid.UUID
		for _, n := range names {
			if id, ok := ids[strings.ToLower(strings.TrimSpace(n))]; ok {
				out = append(out, id)
			}
		}
		return out
	}
	const hasTag = "EXISTS (SELECT 1 FROM contact_tags ct WHERE ct.contact_id = c.id AND ct.tag_id IN ?)"
	if len(a.TagsAny) > 0 {
		if k := known(a.TagsAny); len(k) > 0 {
			add(hasTag, k)
		} else {
			add("false")
		}
	}
	if len(a.TagsAll) > 0 {
		k := known(a.TagsAll)
		if len(k) < len(a.TagsAll) {
			add("false")
		}
		for _, id := range k {
			add(hasTag, []uuid.UUID{id})
		}
	}
	if k := known(a.TagsNone); len(k) > 0 {
		add("NOT "+hasTag, k)
	}
	for _, m := range a.Metadata {
		switch m.Op {
		case "eq":
			add("c.metadata ->> ? = ?", m.Key, m.Value)
		case "neq":
			add("c.metadata ->> ? IS DISTINCT FROM ?", m.Key, m.Value)
		case "contains":
			add("c.metadata ->> ? ILIKE ?", m.Key, paging.Contains(m.Value))
		case "exists":
			add("jsonb_exists(c.metadata, ?)", m.Key)
		case "missing":
			add("NOT jsonb_exists(c.metadata, ?)", m.Key)
		default:
			return fmt.Errorf("metadata op %q passed validation", m.Op)
		}
	}
	if a.ActiveWithinDays != nil {
		add("c.last_message_at >= now() - make_interval(days => ?)", *a.ActiveWithinDays)
	}
	if a.InactiveForDays != nil {
		add("(c.last_message_at IS NULL OR c.last_message_at < now() - make_interval(days => ?))", *a.InactiveForDays)
	}
	if a.SegmentID != nil {
		seg, err := s.GetSegment(ctx, orgID, *a.SegmentID)
		if err != nil {
			if apperr.Is(err, apperr.NotFound) {
				return apperr.Invalidf("the audience's segment no longer exists: choose another one")
			}
			return err
		}
		return s.addAudience(ctx, orgID, &seg.Filter.V, conds, args, true)
	}
	return nil
}

// CountAudience counts the audience's contacts now, creating nothing: the
// size an admin previews before starting a campaign.
func (s *Service) CountAudience(ctx context.Context, orgID uuid.UUID, a *Audience) (int64, error) {
	if err := s.CheckAudience(ctx, orgID, a); err != nil {
		return 0, err
	}
	cond, args, err := s.AudienceCondition(ctx, orgID, a)
	if err != nil {
		return 0, err
	}
	var n int64
	err = s.db.WithContext(ctx).Raw("SELECT count(*) FROM contacts c WHERE "+cond, args...).Scan(&n).Error
	return n, err
}
