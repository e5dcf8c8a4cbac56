package catalogs

import (
	"bytes"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"wharf/internal/infra/apperr"
)

// Limits on names and texts. The provider's own limits are not published
// for every field; these keep rows and provider calls reasonable.
const (
	maxName        = 200
	maxDescription = 5000
	maxURL         = 2000
	maxRetailerID  = 100
)

// DefaultCurrency is a product's currency when none is given (spec).
const DefaultCurrency = "USD"

// ParsePrice reads a price as the client sent it in JSON: an integer in the
// currency's smallest unit. A decimal (19.99), a string ("100") or a number
// too large is refused with a message that says what is expected; nil means
// absent or null. The sign is checked by the caller, as create and update
// treat it differently.
func ParsePrice(raw []byte) (*int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		return nil, apperr.Invalidf("price must be a JSON integer in the currency's smallest unit (1999 for 19.99), not a string")
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		if _, ferr := strconv.ParseFloat(string(raw), 64); ferr == nil {
			return nil, apperr.Invalidf("price must be an integer in the currency's smallest unit (1999 for 19.99), got %s", raw)
		}
		return nil, apperr.Invalidf("price must be an integer in the currency's smallest unit (1999 for 19.99)")
	}
	return &n, nil
}

// normalizeCurrency upper-cases a currency code and checks it against ISO
// 4217's active codes.
func normalizeCurrency(s string) (string, error) {
	c := strings.ToUpper(strings.TrimSpace(s))
	if len(c) != 3 || !slices.Contains(currencies, c) {
		return "", apperr.Invalidf("currency must be an ISO 4217 code such as USD or EUR, got %q", s)
	}
	return c, nil
}

// checkName trims a name and checks it is present and not too long.
func checkName(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", apperr.Invalidf("%s is required", field)
	}
	if len([]rune(s)) > maxName {
		return "", apperr.Invalidf("%s must be at most %d characters", field, maxName)
	}
	return s, nil
}

// checkURL accepts an absolute http or https URL.
func checkURL(field, s string) (string, error) {
	s = strings.TrimSpace(s)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", apperr.Invalidf("%s must be an http or https URL", field)
	}
	if len(s) > maxURL {
		return "", apperr.Invalidf("%s must be at most %d characters", field, maxURL)
	}
	return s, nil
}

// ProductInput creates or changes a product. On create, nil fields take
// their defaults; on update, nil and empty fields (and a price that is not
// above zero) leave the product as it is (spec).
type ProductInput struct {
	Name        *string
	Description *string
	Price       *int64
	Currency    *string
	URL         *string
	ImageURL    *string
	RetailerID  *string
}

// productFields are a product's provider-facing values after validation.
type productFields struct {
	name, description, currency, url, imageURL, retailerID string
	price                                                  int64
}

// given reports whether an update sets this string field.
func given(p *string) bool { return p != nil && strings.TrimSpace(*p) != "" }

// apply validates in over cur (the product's current values, or the
// defaults of a new one). create makes name and price required.
func (in ProductInput) apply(cur productFields, create bool) (productFields, error) {
	out := cur
	var err error
	if create || given(in.Name) {
		name := ""
		if in.Name != nil {
			name = *in.Name
		}
		if out.name, err = checkName("name", name); err != nil {
			return out, err
		}
	}
	switch {
	case create && in.Price == nil:
		return out, apperr.Invalidf("price is required: an integer above 0 in the currency's smallest unit (1999 for 19.99)")
	case create && *in.Price <= 0:
		return out, apperr.Invalidf("price must be above 0 (in the currency's smallest unit), got %d", *in.Price)
	case in.Price != nil && *in.Price > 0:
		out.price = *in.Price
	}
	if given(in.Description) {
		d := strings.TrimSpace(*in.Description)
		if len([]rune(d)) > maxDescription {
			return out, apperr.Invalidf("description must be at most %d characters", maxDescription)
		}
		out.description = d
	}
	if given(in.Currency) {
		if out.currency, err = normalizeCurrency(*in.Currency); err != nil {
			return out, err
		}
	}
	if given(in.URL) {
		if out.url, err = checkURL("url", *in.URL); err != nil {
			return out, err
		}
	}
	if given(in.ImageURL) {
		if out.imageURL, err = checkURL("image_url", *in.ImageURL); err != nil {
			return out, err
		}
	}
	if given(in.RetailerID) {
		r := strings.TrimSpace(*in.RetailerID)
		if len(r) > maxRetailerID {
			return out, apperr.Invalidf("retailer_id must be at most %d characters", maxRetailerID)
		}
		out.retailerID = r
	}
	return out, nil
}
