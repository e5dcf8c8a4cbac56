package customactions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"wharf/internal/infra/apperr"
	"wharf/models"
)

// A URL action's run answers a path of this service, not the target
// itself: the browser opens the path, which needs no credentials, and is
// redirected once. The filled-in URL waits in Redis under a token of 256
// random bits (unguessable; the public route is rate limited per address
// as well), for a short while, and is taken with GETDEL, so two opens
// cannot both get it.
const (
	RedirectTTL    = 5 * time.Minute
	RedirectPrefix = "/api/custom-actions/redirect/"
	tokenBytes     = 32
	redirectKey    = "wharf:custom_actions:redirect:"
)

const msgRedirectGone = "This link has expired or was already used"

// redirect stores the filled-in URL of a URL action under a new token.
func (s *Service) redirect(ctx context.Context, a *models.CustomAction, v Values) (*Result, error) {
	fail := func(msg string) (*Result, error) {
		return &Result{Success: false, Message: msg, Toast: &Toast{Message: a.Name + ": " + msg, Type: "error"}}, nil
	}
	target, err := fillURL(urlOf(a.Config.V).URL, v)
	if err != nil {
		return fail("the URL cannot be filled in: " + err.Error())
	}
	if err := checkTarget(target); err != nil {
		// Values cannot change the scheme or host (they are escaped into
		// the path and query), so this is a stored URL gone bad.
		return fail("the URL " + err.Error())
	}
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	token := hex.EncodeToString(b)
	if err := s.redis.Set(ctx, redirectKey+token, target, RedirectTTL).Err(); err != nil {
		return nil, err
	}
	return &Result{Success: true, Message: "Redirect ready", RedirectURL: RedirectPrefix + token}, nil
}

// Redirect consumes a token and answers its URL; an unknown, used or
// expired token is a 404 (which of them is not said).
func (s *Service) Redirect(ctx context.Context, token string) (string, error) {
	if len(token) != 2*tokenBytes {
		return "", apperr.NotFoundf(msgRedirectGone)
	}
	if _, err := hex.DecodeString(token); err != nil {
		return "", apperr.NotFoundf(msgRedirectGone)
	}
	target, err := s.redis.GetDel(ctx, redirectKey+token).Result()
	if errors.Is(err, redis.Nil) {
		return "", apperr.NotFoundf(msgRedirectGone)
	}
	return target, err
}
