package ai

import "time"

// SetClock replaces the context cache's clock.
func (s *Service) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}
