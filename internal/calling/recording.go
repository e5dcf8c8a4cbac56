package calling

import (
	"context"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// RecordingTTL is how long a recording URL works (the spec's sample: 900 s).
const RecordingTTL = 900 * time.Second

// ErrNoObjectStorage answers recording requests on a server built without
// a store that signs URLs.
var ErrNoObjectStorage = apperr.Unavailablef("recordings need object storage: this server has no store that can sign recording URLs")

// RecordingURL answers a URL that serves the call's recording without
// credentials until expiresAt (at most RecordingTTL from now), and the
// recording's duration in seconds.
func (s *Service) RecordingURL(ctx context.Context, orgID, callLogID uuid.UUID) (url string, expiresAt time.Time, duration int, err error) {
	l, err := tenant.Get[models.CallLog](ctx, s.db, orgID, callLogID, MsgCallLogNotFound)
	if err != nil {
		return "", time.Time{}, 0, err
	}
	if l.RecordingKey == "" {
		return "", time.Time{}, 0, apperr.NotFoundf("this call has no recording (it was not recorded, or its recording is not stored yet)")
	}
	if s.store == nil {
		return "", time.Time{}, 0, ErrNoObjectStorage
	}
	url, expiresAt, err = s.store.SignedURL(ctx, l.RecordingKey, RecordingTTL)
	if err != nil {
		return "", time.Time{}, 0, err
	}
	return url, expiresAt.UTC(), l.RecordingDuration, nil
}
