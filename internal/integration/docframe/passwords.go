package docframe

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Mask is what a set Password field reads as, everywhere. A save that
// sends it back keeps the stored secret.
const Mask = "*****"

// sealPasswords seals the new plaintexts of d into the stored map of
// sealed values (base64 of the Box's output); an empty plaintext clears.
func (s *Service) sealPasswords(stored map[string]string, d *Doc) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range stored {
		out[k] = v
	}
	for field, plain := range d.passwords {
		if plain == "" {
			delete(out, field)
			continue
		}
		sealed, err := s.box.SealString(plain)
		if err != nil {
			return nil, err
		}
		out[field] = base64.StdEncoding.EncodeToString(sealed)
	}
	return out, nil
}

// GetPassword answers a Password field's secret in clear, for the
// integration's own use (an account's token); never for an API answer.
func (s *Service) GetPassword(ctx context.Context, orgID uuid.UUID, doctype, name, field string) (string, error) {
	var raw []byte
	err := s.db.WithContext(ctx).Raw(`SELECT secrets FROM docframe_documents WHERE organization_id = ? AND doctype = ? AND name = ?`,
		orgID, doctype, name).Row().Scan(&raw)
	if errors.Is(err, gorm.ErrRecordNotFound) || errors.Is(err, errNoRows) {
		return "", notFoundf("%s %s not found", doctype, name)
	}
	if err != nil {
		return "", err
	}
	var sealed map[string]string
	if err := json.Unmarshal(raw, &sealed); err != nil {
		return "", err
	}
	enc, ok := sealed[field]
	if !ok {
		return "", nil
	}
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return "", err
	}
	return s.box.OpenString(b)
}
