package campaigns

import (
	"context"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/phone"
	"wharf/models"
)

// MaxImport bounds one import request (JSON or CSV).
const MaxImport = 100_000

// The width of a recipient, like a row of an import file
// (internal/dataops): at most MaxRecipientFields fields (phone_number and
// name included) and MaxRecipientBytes of JSON. The api checks both while
// it reads a request, before the next recipient is parsed; Import and
// LaunchTx check the fields again for every other caller.
const (
	MaxRecipientFields = 200
	MaxRecipientBytes  = 64 << 10
)

// RecipientTooWide refuses recipient i (from 0) for its fields.
func RecipientTooWide(i int) error {
	return apperr.Invalidf("recipients[%d] has more than %d fields: a recipient may have at most %d", i, MaxRecipientFields, MaxRecipientFields)
}

// RecipientTooLarge refuses recipient i (from 0) for its size.
func RecipientTooLarge(i int) error {
	return apperr.Invalidf("recipients[%d] is larger than 64 KB: a recipient may have at most %d bytes of JSON", i, MaxRecipientBytes)
}

// checkWidth refuses a list with a recipient of more than
// MaxRecipientFields fields.
func checkWidth(in []RecipientInput) error {
	for i, r := range in {
		if len(r) > MaxRecipientFields {
			return RecipientTooWide(i)
		}
	}
	return nil
}

// RecipientInput is one imported recipient: phone_number, name, and any
// extra fields, kept as the recipient's data for the variable mapping.
type RecipientInput map[string]any

// InvalidRow explains a refused recipient.
type InvalidRow struct {
	Index       int    `json:"index"`
	PhoneNumber string `json:"phone_number"`
	Reason      string `json:"reason"`
}

// ImportResult counts an import.
type ImportResult struct {
	Imported    int
	Duplicates  int
	Invalid     int
	InvalidRows []InvalidRow // the first 100
}

// Import adds recipients to a draft campaign. Numbers are normalised to
// E.164; invalid numbers and numbers already in the campaign (or twice in
// the request) are counted and reported, not stored.
func (s *Service) Import(ctx context.Context, orgID, id uuid.UUID, in []RecipientInput) (*ImportResult, error) {
	c, err := s.Get(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	if c.Status != models.CampaignDraft {
		return nil, apperr.Conflictf("recipients can only be imported into a draft campaign; this one is %s", c.Status)
	}
	if c.Audience.V != nil {
		return nil, apperr.Conflictf("the campaign's recipients come from its audience when it starts: remove the audience to upload recipients")
	}
	if len(in) == 0 {
		return nil, apperr.Invalidf("recipients must be a non-empty array")
	}
	if len(in) > MaxImport {
		return nil, apperr.Invalidf("at most %d recipients per import; split the list", MaxImport)
	}
	if err := checkWidth(in); err != nil {
		return nil, err
	}
	res := &ImportResult{}
	seen := make(map[string]bool, len(in))
	rows := make([]models.CampaignRecipient, 0, len(in))
	for i, r := range in {
		raw, _ := r["phone_number"].(string)
		number, err := phone.Normalize(raw)
		if err != nil {
			res.Invalid++
			if len(res.InvalidRows) < 100 {
				reason := "not a valid phone number in international format"
				if strings.TrimSpace(raw) == "" {
					reason = "phone_number is missing"
				}
				res.InvalidRows = append(res.InvalidRows, InvalidRow{Index: i, PhoneNumber: raw, Reason: reason})
			}
			continue
		}
		if seen[number] {
			res.Duplicates++
			continue
		}
		seen[number] = true
		name, _ := r["name"].(string)
		data := make(map[string]any, len(r))
		for k, v := range r {
			if k != "phone_number" && k != "name" {
				data[k] = v
			}
		}
		row := models.CampaignRecipient{CampaignID: c.ID, OrganizationID: orgID, PhoneNumber: number, Name: strings.TrimSpace(name),
			Status: models.RecipientPending}
		row.Data.V = data
		rows = append(rows, row)
	}
	if err := s.store(ctx, c, rows, nil, res); err != nil {
		return nil, err
	}
	return res, nil
}

// store inserts rows into draft campaign c in one transaction (numbers it
// has already count as duplicates) and recounts it; a non-nil mapping
// becomes its variable_mapping.
func (s *Service) store(ctx context.Context, c *models.Campaign, rows []models.CampaignRecipient, mapping map[string]string, res *ImportResult) error {
	return s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for start := 0; start < len(rows); start += 1000 {
			chunk := rows[start:min(start+1000, len(rows))]
			ins := tx.Exec(insertRecipients(len(chunk)), recipientArgs(chunk)...)
			if ins.Error != nil {
				return ins.Error
			}
			res.Imported += int(ins.RowsAffected)
			res.Duplicates += len(chunk) - int(ins.RowsAffected)
		}
		set := map[string]any{
			"total_recipients": gorm.Expr(`(SELECT count(*) FROM campaign_recipients WHERE campaign_id = ?)`, c.ID),
			"pending_count":    gorm.Expr(`(SELECT count(*) FROM campaign_recipients WHERE campaign_id = ? AND status = 'pending')`, c.ID),
			"updated_at":       gorm.Expr("now()"),
		}
		if mapping != nil {
			vm := c.VariableMapping
			vm.V = mapping
			set["variable_mapping"] = vm
		}
		// Re-check the status under the row lock: an import racing a start
		// must not add recipients to a running campaign.
		up := tx.Model(&models.Campaign{}).Where("id = ? AND status = 'draft'", c.ID).Updates(set)
		if up.Error != nil {
			return up.Error
		}
		if up.RowsAffected == 0 {
			return apperr.Conflictf("the campaign left draft during the import")
		}
		return nil
	})
}

func insertRecipients(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO campaign_recipients (campaign_id, organization_id, phone_number, name, data, status) VALUES `)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`(?, ?, ?, ?, ?, 'pending')`)
	}
	b.WriteString(` ON CONFLICT (campaign_id, phone_number) DO NOTHING`)
	return b.String()
}

func recipientArgs(rows []models.CampaignRecipient) []any {
	args := make([]any, 0, len(rows)*5)
	for _, r := range rows {
		args = append(args, r.CampaignID, r.OrganizationID, r.PhoneNumber, r.Name, r.Data)
	}
	return args
}

// Recipients lists a campaign's recipients in import order, optionally of
// one status.
func (s *Service) Recipients(ctx context.Context, orgID, id uuid.UUID, status string, pg paging.Params) ([]models.CampaignRecipient, int64, error) {
	if _, err := s.Get(ctx, orgID, id); err != nil {
		return nil, 0, err
	}
	q := s.db.WithContext(ctx).Model(&models.CampaignRecipient{}).Where("campaign_id = ?", id)
	if status != "" {
		q = q.Where("status = ?", strings.ToLower(status))
	}
	recs, total, err := paging.Find[models.CampaignRecipient](q, pg, "seq")
	if err != nil {
		return nil, 0, err
	}
	return recs, total, s.fillReplies(ctx, s.db, recs)
}

// exportChunk is how many recipients EachRecipient reads at a time.
const exportChunk = 1000

// EachRecipient calls fn with every recipient of the campaign (optionally
// of one status) in import order, for the recipients export. It reads them
// a chunk at a time after the last one seen (seq), each chunk its own
// query: no transaction or connection is held while fn writes to a slow
// client. A recipient whose status changes meanwhile shows its status when
// its chunk was read.
func (s *Service) EachRecipient(ctx context.Context, orgID, id uuid.UUID, status string, fn func(*models.CampaignRecipient) error) error {
	if _, err := s.Get(ctx, orgID, id); err != nil {
		return err
	}
	var after int64
	for {
		q := s.db.WithContext(ctx).Where("campaign_id = ? AND organization_id = ? AND seq > ?", id, orgID, after)
		if status != "" {
			q = q.Where("status = ?", strings.ToLower(status))
		}
		var chunk []models.CampaignRecipient
		if err := q.Order("seq").Limit(exportChunk).Find(&chunk).Error; err != nil {
			return err
		}
		if err := s.fillReplies(ctx, s.db, chunk); err != nil {
			return err
		}
		for i := range chunk {
			if err := fn(&chunk[i]); err != nil {
				return err
			}
		}
		if len(chunk) < exportChunk {
			return nil
		}
		after = chunk[len(chunk)-1].Seq
	}
}
