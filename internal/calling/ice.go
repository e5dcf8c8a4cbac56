package calling

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// DefaultSTUNURLs is used when the configuration names no STUN server: a
// browser behind a NAT needs one to learn its public address.
var DefaultSTUNURLs = []string{"stun:stun.l.google.com:19302"}

// DefaultTURNTTL and MaxTURNTTL bound how long TURN credentials handed to a
// browser stay valid.
const (
	DefaultTURNTTL = 24 * time.Hour
	MaxTURNTTL     = 7 * 24 * time.Hour
)

// ICEServer is one entry of a browser's RTCPeerConnection iceServers.
type ICEServer struct {
	URLs       []string
	Username   string // TURN only
	Credential string // TURN only
}

// ICEServers answers the STUN servers and, when TURN is configured, a TURN
// entry with credentials for userID that the relay checks without asking
// us: coturn's REST-API scheme (use-auth-secret), where the username is
// "<unix expiry>:<user id>" and the password base64(HMAC-SHA1(secret,
// username)). Each call derives fresh credentials, valid for TURN_TTL.
func (s *Service) ICEServers(userID uuid.UUID) []ICEServer {
	return iceServers(s.cfg, userID, time.Now())
}

func iceServers(cfg Config, userID uuid.UUID, now time.Time) []ICEServer {
	stun := cfg.STUNURLs
	if len(stun) == 0 {
		stun = DefaultSTUNURLs
	}
	out := []ICEServer{{URLs: slices.Clone(stun)}}
	if len(cfg.TURNURLs) == 0 || cfg.TURNSecret == "" {
		return out
	}
	username, credential := TURNCredentials(cfg.TURNSecret, userID, now.Add(turnTTL(cfg.TURNTTL)))
	return append(out, ICEServer{URLs: slices.Clone(cfg.TURNURLs), Username: username, Credential: credential})
}

// TURNCredentials derives the coturn REST-API credentials of userID valid
// until expiry.
func TURNCredentials(secret string, userID uuid.UUID, expiry time.Time) (username, credential string) {
	username = strconv.FormatInt(expiry.Unix(), 10) + ":" + userID.String()
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write([]byte(username))
	return username, base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func turnTTL(d time.Duration) time.Duration {
	switch {
	case d <= 0:
		return DefaultTURNTTL
	case d > MaxTURNTTL:
		return MaxTURNTTL
	}
	return d
}
