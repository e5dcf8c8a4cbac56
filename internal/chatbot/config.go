package chatbot

import (
	"context"
	"errors"
	"sync"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/models"
)

// The organization's chatbot configuration (settings, enabled keyword
// rules, flows) as the evaluations read it: kept in memory per organization
// under the version PostgreSQL gives every change (migration 00030: a
// trigger on each of the three tables takes a new value of a sequence in
// the changing transaction). Every evaluation reads the version in its
// state statement (state.go) and loads the configuration again when it
// differs, so the very next message after a change, in any process, sees
// the change; an unchanged configuration costs no statement.

// config is one organization's configuration at a version. It is shared by
// concurrent evaluations: nothing may change it once loaded.
type config struct {
	version  int64
	settings *models.ChatbotSettings
	rules    []models.KeywordRule  // enabled, in match order
	triggers []*models.ChatbotFlow // enabled flows, in trigger order
	flows    map[uuid.UUID]*models.ChatbotFlow
}

// maxCachedOrgs bounds the cache: past it, it starts afresh (configurations
// are small and reloaded in three statements).
const maxCachedOrgs = 2000

// configCache holds each organization's latest configuration loaded.
type configCache struct {
	mu   sync.Mutex
	orgs map[uuid.UUID]*config
}

func (c *configCache) get(orgID uuid.UUID, version int64) *config {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cf := c.orgs[orgID]; cf != nil && cf.version == version {
		return cf
	}
	return nil
}

func (c *configCache) put(orgID uuid.UUID, cf *config) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.orgs == nil || len(c.orgs) >= maxCachedOrgs {
		c.orgs = map[uuid.UUID]*config{}
	}
	c.orgs[orgID] = cf
}

// configAt answers the organization's configuration at version (read in
// tx's state statement), from memory when it is unchanged. A load reads
// after the version, so what it reads is that version or newer: a newer
// one is kept under the older number and loaded again at the next message,
// never the reverse.
func (s *Service) configAt(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, version int64) (*config, error) {
	if cf := s.configs.get(orgID, version); cf != nil {
		return cf, nil
	}
	cf, err := loadConfig(ctx, tx, orgID)
	if err != nil {
		return nil, err
	}
	cf.version = version
	s.configs.put(orgID, cf)
	return cf, nil
}

// loadConfig reads an organization's configuration.
func loadConfig(ctx context.Context, tx *gorm.DB, orgID uuid.UUID) (*config, error) {
	db := tx.WithContext(ctx)
	st := defaults(orgID)
	if err := db.Take(&st, "organization_id = ?", orgID).Error; err != nil && !errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, err
	}
	normalize(&st)
	cf := &config{settings: &st, flows: map[uuid.UUID]*models.ChatbotFlow{}}
	if err := db.Where("organization_id = ? AND enabled", orgID).Order("priority DESC, created_at, id").Find(&cf.rules).Error; err != nil {
		return nil, err
	}
	// All flows: a session continues in a flow disabled since it started.
	var flows []models.ChatbotFlow
	if err := db.Where("organization_id = ?", orgID).Order("lower(name), id").Find(&flows).Error; err != nil {
		return nil, err
	}
	for i := range flows {
		f := &flows[i]
		cf.flows[f.ID] = f
		if f.Enabled {
			cf.triggers = append(cf.triggers, f)
		}
	}
	return cf, nil
}
