package chatbot

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// Match types of keyword rules.
var MatchTypes = []string{"exact", "contains", "starts_with", "regex"}

// Regex bounds: Go's regexp runs in time linear in the input (RE2: no
// backtracking), so a bounded pattern and a bounded input bound the time.
const (
	maxPattern   = 500
	maxMatchText = 4096
)

// RuleInput creates or changes a keyword rule; nil fields are unchanged.
type RuleInput struct {
	Name         *string
	Keywords     *[]string
	MatchType    *string
	ResponseType *string
	Response     *string
	Priority     *int
	Enabled      *bool
}

// Rules lists the organization's keyword rules, highest priority first.
func (s *Service) Rules(ctx context.Context, orgID uuid.UUID) ([]models.KeywordRule, error) {
	var rows []models.KeywordRule
	err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Order("priority DESC, created_at, id").Find(&rows).Error
	return rows, err
}

// CreateRule validates and stores a keyword rule.
func (s *Service) CreateRule(ctx context.Context, orgID uuid.UUID, in RuleInput) (*models.KeywordRule, error) {
	r := models.KeywordRule{OrganizationID: orgID, ResponseType: "text", Enabled: true}
	if in.Name == nil || in.Keywords == nil || in.MatchType == nil || in.Response == nil {
		return nil, apperr.Invalidf("name, keywords, match_type and response are required")
	}
	if err := applyRule(&r, in); err != nil {
		return nil, err
	}
	return &r, s.db.WithContext(ctx).Create(&r).Error
}

// UpdateRule validates and saves the fields given.
func (s *Service) UpdateRule(ctx context.Context, orgID, id uuid.UUID, in RuleInput) (*models.KeywordRule, error) {
	var r models.KeywordRule
	if err := s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Take(&r, "id = ?", id).Error; err != nil {
		return nil, notFound(err, "keyword rule not found")
	}
	if err := applyRule(&r, in); err != nil {
		return nil, err
	}
	r.UpdatedAt = s.now()
	return &r, s.db.WithContext(ctx).Save(&r).Error
}

// DeleteRule removes a keyword rule.
func (s *Service) DeleteRule(ctx context.Context, orgID, id uuid.UUID) error {
	return deleted(s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Delete(&models.KeywordRule{}, "id = ?", id), "keyword rule not found")
}

func applyRule(r *models.KeywordRule, in RuleInput) error {
	if in.Name != nil {
		r.Name = strings.TrimSpace(*in.Name)
	}
	if r.Name == "" || len([]rune(r.Name)) > 100 {
		return apperr.Invalidf("name is required (at most 100 characters)")
	}
	if in.MatchType != nil {
		r.MatchType = strings.TrimSpace(*in.MatchType)
	}
	if !slices.Contains(MatchTypes, r.MatchType) {
		return apperr.Invalidf("match_type must be one of %s", strings.Join(MatchTypes, ", "))
	}
	if in.Keywords != nil {
		kw, err := keywords("keywords", *in.Keywords, true)
		if err != nil {
			return err
		}
		r.Keywords.V = kw
	}
	if len(r.Keywords.V) == 0 {
		return apperr.Invalidf("keywords must have at least one keyword")
	}
	if r.MatchType == "regex" {
		// Validated at every save (a type change re-checks old keywords).
		for _, k := range r.Keywords.V {
			if len(k) > maxPattern {
				return apperr.Invalidf("keywords: a regular expression is longer than %d characters", maxPattern)
			}
			if _, err := regexp.Compile("(?i)" + k); err != nil {
				return apperr.Invalidf("keywords: invalid regular expression %q: %v", k, err)
			}
		}
	}
	if in.ResponseType != nil {
		r.ResponseType = strings.TrimSpace(*in.ResponseType)
	}
	if r.ResponseType != "text" {
		return apperr.Invalidf("response_type must be text")
	}
	if in.Response != nil {
		r.Response = *in.Response
	}
	if strings.TrimSpace(r.Response) == "" || len([]rune(r.Response)) > maxText {
		return apperr.Invalidf("response is required (at most %d characters)", maxText)
	}
	if in.Priority != nil {
		r.Priority = *in.Priority
	}
	if in.Enabled != nil {
		r.Enabled = *in.Enabled
	}
	return nil
}

// matches matches text against keywords the way a rule says; regular
// expressions are compiled once per pattern and process.
func matches(matchType string, keywords []string, text string) bool {
	if len(text) > maxMatchText {
		text = text[:maxMatchText]
	}
	t := strings.ToLower(strings.TrimSpace(text))
	for _, k := range keywords {
		kl := strings.ToLower(k)
		switch matchType {
		case "exact":
			if t == kl {
				return true
			}
		case "contains":
			if strings.Contains(t, kl) {
				return true
			}
		case "starts_with":
			if strings.HasPrefix(t, kl) {
				return true
			}
		case "regex":
			if re := compiled(k); re != nil && re.MatchString(text) {
				return true
			}
		}
	}
	return false
}

// patterns caches compiled regular expressions by pattern (nil for an
// invalid one); bounded: past maxCachedPatterns it starts over.
var patterns = struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}{m: map[string]*regexp.Regexp{}}

const maxCachedPatterns = 10000

func compiled(pattern string) *regexp.Regexp {
	patterns.Lock()
	defer patterns.Unlock()
	if re, ok := patterns.m[pattern]; ok {
		return re
	}
	re, err := regexp.Compile("(?i)" + pattern)
	if err != nil {
		re = nil
	}
	if len(patterns.m) >= maxCachedPatterns {
		patterns.m = map[string]*regexp.Regexp{}
	}
	patterns.m[pattern] = re
	return re
}

// notFound turns gorm's not-found into the domain's 404.
func notFound(err error, msg string) error {
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return apperr.NotFoundf("%s", msg)
	}
	return err
}

// deleted turns a delete that removed nothing into the domain's 404.
func deleted(res *gorm.DB, msg string) error {
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("%s", msg)
	}
	return nil
}
