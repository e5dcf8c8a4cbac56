package platformsim

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// object is anything a numeric id can name. Every object belongs to one
// business account (WABA), which is what access tokens are granted on.
type object interface {
	wabaID() string
	// nodeType is the provider's name for the type, used in error details.
	nodeType() string
}

type waba struct {
	id             string
	name           string
	phones         []*phone
	templates      []*template // creation order, which is id order
	flows          []*flow
	catalogs       []*catalog
	subscribedApps []string
}

func (w *waba) wabaID() string   { return w.id }
func (w *waba) nodeType() string { return "WhatsAppBusinessAccount" }

type phone struct {
	waba              *waba
	id                string
	display           string // "+1 555-000-0001"
	displayDigits     string // "15550000001", as webhooks carry it
	verifiedName      string
	qualityRating     string
	messagingLimit    string
	bmMessagingLimit  string
	platformType      string
	isOnBizApp        bool
	throughputLevel   string
	registerErrorCode int
	registered        bool
	sendErrorCode     int // SetSendError: every send answers this error
	window            sendWindow
}

func (p *phone) wabaID() string   { return p.waba.id }
func (p *phone) nodeType() string { return "WhatsAppBusinessPhoneNumber" }

// grant is what an access token may touch.
type grant struct {
	wabas map[string]bool
	// granular and shared feed debug_token and /me/whatsapp_business_accounts.
	granular []string
	shared   []string
	user     bool // obtained through an oauth code, not seeded with an account
}

// BusinessAccount seeds a business account (WABA). Empty ids are generated;
// an empty AccessToken gets a generated one. AddBusinessAccount returns it
// with ids and defaults filled in.
type BusinessAccount struct {
	ID             string        `json:"id"`
	Name           string        `json:"name"`
	AccessToken    string        `json:"access_token"`
	PhoneNumbers   []PhoneNumber `json:"phone_numbers"`
	SubscribedApps []string      `json:"subscribed_apps,omitempty"` // reported, not seeded
}

// PhoneNumber seeds a business phone number. Defaults: QualityRating GREEN,
// MessagingLimitTier TIER_1K, PlatformType CLOUD_API, ThroughputLevel
// STANDARD, VerifiedName the account's name, DisplayPhoneNumber generated.
type PhoneNumber struct {
	ID                 string `json:"id"`
	DisplayPhoneNumber string `json:"display_phone_number"`
	VerifiedName       string `json:"verified_name"`
	QualityRating      string `json:"quality_rating"`
	MessagingLimitTier string `json:"messaging_limit_tier"`
	// BusinessManagerMessagingLimit, when set, is reported as
	// whatsapp_business_manager_messaging_limit (newer API versions).
	BusinessManagerMessagingLimit string `json:"whatsapp_business_manager_messaging_limit,omitempty"`
	PlatformType                  string `json:"platform_type"`
	IsOnBizApp                    bool   `json:"is_on_biz_app,omitempty"`
	ThroughputLevel               string `json:"throughput_level"`
	// RegisterErrorCode makes every register call fail with that code
	// (133005 PIN mismatch, 133010 not registered...).
	RegisterErrorCode int  `json:"register_error_code,omitempty"`
	Registered        bool `json:"registered"` // reported, not seeded
}

// OAuthCode seeds an authorization code for the code exchange. WABAIDs are
// the granular target ids debug_token reports (leave empty to exercise the
// client's fallback); SharedWABAIDs are what /me/whatsapp_business_accounts
// lists (WABAIDs when empty). The token gets access to both sets once the
// code is exchanged.
type OAuthCode struct {
	Code          string   `json:"code"`
	AccessToken   string   `json:"access_token"`
	WABAIDs       []string `json:"waba_ids"`
	SharedWABAIDs []string `json:"shared_waba_ids"`
}

// AddBusinessAccount seeds a business account and its phone numbers. Adding
// an account whose id exists updates its name, grants the token and adds the
// phone numbers not seen before. It panics when an id already names an
// object of another kind, which is a mistake in the test's setup.
func (s *Simulator) AddBusinessAccount(ba BusinessAccount) BusinessAccount {
	out, err := s.addBusinessAccount(ba)
	if err != nil {
		panic("platformsim: " + err.Error())
	}
	return out
}

func (s *Simulator) addBusinessAccount(ba BusinessAccount) (BusinessAccount, error) {
	if ba.ID != "" && !isDigits(ba.ID) {
		return ba, fmt.Errorf("business account id %q is not numeric", ba.ID)
	}
	for _, p := range ba.PhoneNumbers {
		if p.ID != "" && !isDigits(p.ID) {
			return ba, fmt.Errorf("phone number id %q is not numeric", p.ID)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()

	// Check every id before changing anything so that a failure leaves no
	// half-seeded account.
	if ba.ID != "" {
		if o, ok := s.objects[ba.ID]; ok {
			if _, isWABA := o.(*waba); !isWABA {
				return ba, fmt.Errorf("id %s already names a %s", ba.ID, o.nodeType())
			}
		}
	}
	for _, p := range ba.PhoneNumbers {
		if p.ID == "" {
			continue
		}
		if o, ok := s.objects[p.ID]; ok {
			ph, isPhone := o.(*phone)
			if !isPhone || ph.waba.id != ba.ID {
				return ba, fmt.Errorf("id %s already names a %s of another account", p.ID, o.nodeType())
			}
		}
	}

	var w *waba
	if ba.ID != "" {
		if o, ok := s.objects[ba.ID]; ok {
			w = o.(*waba)
		} else {
			s.reserveIDLocked(ba.ID)
		}
	} else {
		ba.ID = s.newIDLocked()
	}
	if w == nil {
		w = &waba{id: ba.ID}
		s.objects[w.id] = w
	}
	if ba.Name == "" {
		ba.Name = w.name
	}
	if ba.Name == "" {
		ba.Name = "Business " + w.id
	}
	w.name = ba.Name
	if ba.AccessToken == "" {
		ba.AccessToken = "sim-token-" + w.id
	}
	s.grantLocked(ba.AccessToken, []string{w.id}, []string{w.id}, false)

	for i := range ba.PhoneNumbers {
		p := &ba.PhoneNumbers[i]
		if p.ID != "" {
			if o, ok := s.objects[p.ID]; ok {
				*p = o.(*phone).view()
				continue
			}
			s.reserveIDLocked(p.ID)
		} else {
			p.ID = s.newIDLocked()
		}
		if p.DisplayPhoneNumber == "" {
			// Digits derived from the id keep generated numbers unique.
			tail := p.ID[max(0, len(p.ID)-7):]
			p.DisplayPhoneNumber = fmt.Sprintf("+1 555-%s-%s", tail[:3], tail[3:])
		}
		p.VerifiedName = cmpOr(p.VerifiedName, w.name)
		p.QualityRating = cmpOr(p.QualityRating, "GREEN")
		p.MessagingLimitTier = cmpOr(p.MessagingLimitTier, "TIER_1K")
		p.PlatformType = cmpOr(p.PlatformType, "CLOUD_API")
		p.ThroughputLevel = cmpOr(p.ThroughputLevel, "STANDARD")
		ph := &phone{
			waba:              w,
			id:                p.ID,
			display:           p.DisplayPhoneNumber,
			displayDigits:     digitsOnly(p.DisplayPhoneNumber),
			verifiedName:      p.VerifiedName,
			qualityRating:     p.QualityRating,
			messagingLimit:    p.MessagingLimitTier,
			bmMessagingLimit:  p.BusinessManagerMessagingLimit,
			platformType:      p.PlatformType,
			isOnBizApp:        p.IsOnBizApp,
			throughputLevel:   p.ThroughputLevel,
			registerErrorCode: p.RegisterErrorCode,
		}
		s.objects[ph.id] = ph
		w.phones = append(w.phones, ph)
		*p = ph.view()
	}
	return s.accountViewLocked(w, ba.AccessToken), nil
}

func (p *phone) view() PhoneNumber {
	return PhoneNumber{
		ID:                            p.id,
		DisplayPhoneNumber:            p.display,
		VerifiedName:                  p.verifiedName,
		QualityRating:                 p.qualityRating,
		MessagingLimitTier:            p.messagingLimit,
		BusinessManagerMessagingLimit: p.bmMessagingLimit,
		PlatformType:                  p.platformType,
		IsOnBizApp:                    p.isOnBizApp,
		ThroughputLevel:               p.throughputLevel,
		RegisterErrorCode:             p.registerErrorCode,
		Registered:                    p.registered,
	}
}

func (s *Simulator) accountViewLocked(w *waba, token string) BusinessAccount {
	out := BusinessAccount{ID: w.id, Name: w.name, AccessToken: token, SubscribedApps: slices.Clone(w.subscribedApps)}
	for _, p := range w.phones {
		out.PhoneNumbers = append(out.PhoneNumbers, p.view())
	}
	return out
}

// BusinessAccounts lists the seeded accounts with their current state
// (registration, subscribed apps). AccessToken is the first seeded token
// found for the account.
func (s *Simulator) BusinessAccounts() []BusinessAccount {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []BusinessAccount
	for _, o := range s.objects {
		w, ok := o.(*waba)
		if !ok {
			continue
		}
		token := ""
		for t, g := range s.tokens {
			if !g.user && g.wabas[w.id] && (token == "" || t < token) {
				token = t
			}
		}
		out = append(out, s.accountViewLocked(w, token))
	}
	slices.SortFunc(out, func(a, b BusinessAccount) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// grantLocked gives token access to wabas, merging with earlier grants.
func (s *Simulator) grantLocked(token string, granular, shared []string, user bool) {
	g := s.tokens[token]
	if g == nil {
		g = &grant{wabas: make(map[string]bool), user: user}
		s.tokens[token] = g
	}
	for _, id := range granular {
		g.wabas[id] = true
		if !slices.Contains(g.granular, id) {
			g.granular = append(g.granular, id)
		}
	}
	for _, id := range shared {
		g.wabas[id] = true
		if !slices.Contains(g.shared, id) {
			g.shared = append(g.shared, id)
		}
	}
}

// AddOAuthCode seeds a single-use authorization code.
func (s *Simulator) AddOAuthCode(c OAuthCode) {
	c.WABAIDs = slices.Clone(c.WABAIDs)
	c.SharedWABAIDs = slices.Clone(c.SharedWABAIDs)
	if len(c.SharedWABAIDs) == 0 {
		c.SharedWABAIDs = slices.Clone(c.WABAIDs)
	}
	s.mu.Lock()
	s.codes[c.Code] = c
	s.mu.Unlock()
}

// bearerToken reads the token from the Authorization header or, as the
// provider also allows, the access_token query parameter.
func bearerToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if t, ok := strings.CutPrefix(h, "Bearer "); ok {
			return strings.TrimSpace(t)
		}
		if t, ok := strings.CutPrefix(h, "OAuth "); ok {
			return strings.TrimSpace(t)
		}
		return ""
	}
	return r.URL.Query().Get("access_token")
}

// grantLocked-side lookup: the token's grant, or 190.
func (s *Simulator) authLocked(r *http.Request) (*grant, *apiError) {
	g := s.tokens[bearerToken(r)]
	if g == nil {
		return nil, errInvalidToken()
	}
	return g, nil
}

// objectLocked resolves id for the request's token: 190 without a valid
// token or without access to the object's account, 404 for unknown ids.
func (s *Simulator) objectLocked(r *http.Request, id string) (object, *apiError) {
	g, aerr := s.authLocked(r)
	if aerr != nil {
		return nil, aerr
	}
	o, ok := s.objects[id]
	if !ok {
		return nil, errNoObject(id)
	}
	if !g.wabas[o.wabaID()] {
		return nil, errInvalidToken()
	}
	return o, nil
}

// objectAs resolves id and requires it to be a T; edge names what was asked
// for, for the error details.
func objectAs[T object](s *Simulator, r *http.Request, id, edge string) (T, *apiError) {
	var zero T
	o, aerr := s.objectLocked(r, id)
	if aerr != nil {
		return zero, aerr
	}
	t, ok := o.(T)
	if !ok {
		return zero, errWrongNode(edge, o.nodeType())
	}
	return t, nil
}

func cmpOr(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// sendWindow enforces "at most n sends in any rolling second" exactly: it
// keeps the times of the last n accepted sends in a ring and admits a send
// only when the oldest of them is more than a second old. O(1) per send.
type sendWindow struct {
	times []int64 // unix nanoseconds, ring
	head  int     // oldest entry once full
	n     int
}

func (w *sendWindow) allow(now time.Time, rate int) bool {
	if rate < 0 {
		return true
	}
	if len(w.times) != rate {
		// The rate changed: start over rather than reinterpret the ring.
		w.times, w.head, w.n = make([]int64, rate), 0, 0
	}
	if rate == 0 {
		return false
	}
	t := now.UnixNano()
	if w.n < rate {
		w.times[(w.head+w.n)%rate] = t
		w.n++
		return true
	}
	if t-w.times[w.head] < int64(time.Second) {
		return false
	}
	w.times[w.head] = t
	w.head = (w.head + 1) % rate
	return true
}

func (w *sendWindow) reset() { w.times, w.head, w.n = nil, 0, 0 }
