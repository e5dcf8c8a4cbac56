package webhooks

import (
	"strings"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/secrets"
	"wharf/models"
)

// A webhook's custom headers and the credentials in its URL are
// write-only (docs/API.md, "Secrets in configurations"): answered masked
// to every reader (webhooks:read is the Manager's too, who cannot change
// webhooks), and an update that sends the mask back keeps the stored
// value while the URL's scheme, host and port stay the same.

// Masked is v as the API answers it.
func Masked(v View) View {
	v.URL = secrets.MaskURL(v.URL)
	v.Headers.V = secrets.MaskHeaders(v.Headers.V)
	return v
}

// keepSecrets resolves the masked values of in against the stored webhook
// (the zero webhook on create: nothing to keep).
func keepSecrets(stored *models.Webhook, in *Input) error {
	newURL := stored.URL
	if in.URL != nil {
		kept, err := secrets.KeepURL(strings.TrimSpace(*in.URL), stored.URL)
		if err != nil {
			return apperr.Invalidf("url: %v", err)
		}
		in.URL, newURL = &kept, kept
	}
	if in.Headers != nil {
		kept, err := secrets.KeepHeaders(*in.Headers, stored.Headers.V, secrets.SameOrigin(newURL, stored.URL))
		if err != nil {
			return apperr.Invalidf("headers.%v", err)
		}
		in.Headers = &kept
	}
	return nil
}
