package calling

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/paging"
	"wharf/internal/infra/phone"
	"wharf/internal/infra/tenant"
	"wharf/models"
)

// The answers of a lookup by id that finds nothing in the caller's
// organization (another tenant's id gets the same words). The control
// operations use them too, so that every call id route says the same.
const (
	MsgCallLogNotFound  = "call log not found"
	MsgTransferNotFound = "call transfer not found"
)

// CallLogStatuses and TransferStatuses are the values the status filters
// accept.
var (
	CallLogStatuses = []string{models.CallRinging, models.CallAnswered, models.CallCompleted, models.CallMissed, models.CallRejected,
		models.CallFailed, models.CallTransferring, models.CallInitiating, models.CallAccepted, models.CallOnHold, models.CallConnected}
	TransferStatuses = []string{models.TransferWaiting, models.TransferConnected, models.TransferCompleted, models.TransferAbandoned,
		models.TransferNoAnswer}
)

// CallLogFilter narrows GET /api/call-logs. Empty fields do not filter.
type CallLogFilter struct {
	Status string
	// Account is an account's name: the calls whose platform_account is
	// that name, or that were made through the account now bearing it
	// (case-insensitive). An unknown name matches nothing.
	Account   string
	ContactID *uuid.UUID
	Direction string // incoming or outgoing
	IVRFlowID *uuid.UUID
	// Phone matches part of the caller's number, digits only ("555 01"
	// finds +15550100); when the organization masks numbers, only the
	// whole number (a fragment would reveal the masked digits piecewise).
	Phone string
	// StartDate and EndDate (YYYY-MM-DD) bound the day the call log was
	// created, both inclusive, in the organization's timezone.
	StartDate, EndDate string
}

// CallLogView is a call log with its contact's number and its agent's
// name, as the api shows it.
type CallLogView struct {
	models.CallLog `gorm:"embedded"`
	// ContactPhone is nil when the call has no contact (or it was
	// deleted).
	ContactPhone *string
	// AgentName is nil when the call has no agent (or the user was
	// deleted).
	AgentName *string
}

// CallLogDetail is one call log with its transfers, oldest first.
type CallLogDetail struct {
	CallLogView
	Transfers []models.CallTransfer
}

// callLogSelect reads call logs (withNames adds their contacts' numbers
// and agents' names); the WHERE clause that follows it always starts with
// the organization.
const callLogSelect = `SELECT l.* FROM call_logs l WHERE l.organization_id = @org`

// withNames gives a page of call logs their contact's number and their
// agent's name, with one lookup of contacts and one of identity.
func (s *Service) withNames(ctx context.Context, orgID uuid.UUID, rows []CallLogView) ([]CallLogView, error) {
	var contactIDs, agentIDs []uuid.UUID
	for _, l := range rows {
		if l.ContactID != nil && !slices.Contains(contactIDs, *l.ContactID) {
			contactIDs = append(contactIDs, *l.ContactID)
		}
		if l.AgentID != nil && !slices.Contains(agentIDs, *l.AgentID) {
			agentIDs = append(agentIDs, *l.AgentID)
		}
	}
	contacts, err := s.contacts.ContactsIn(ctx, s.db, orgID, contactIDs)
	if err != nil {
		return nil, err
	}
	agents, err := s.people.Users(ctx, s.db, orgID, agentIDs)
	if err != nil {
		return nil, err
	}
	for i, l := range rows {
		if l.ContactID != nil {
			if c, ok := contacts[*l.ContactID]; ok {
				rows[i].ContactPhone = &c.PhoneNumber
			}
		}
		if l.AgentID != nil {
			if u, ok := agents[*l.AgentID]; ok {
				rows[i].AgentName = &u.FullName
			}
		}
	}
	return rows, nil
}

// ListCallLogs answers a page of the organization's call logs, newest
// first.
func (s *Service) ListCallLogs(ctx context.Context, orgID uuid.UUID, f CallLogFilter, pg paging.Params) ([]CallLogView, int64, error) {
	query := callLogSelect
	args := map[string]any{"org": orgID}
	if f.Status = strings.TrimSpace(f.Status); f.Status != "" {
		if !slices.Contains(CallLogStatuses, f.Status) {
			return nil, 0, apperr.Invalidf("status must be one of %s", strings.Join(CallLogStatuses, ", "))
		}
		query += ` AND l.status = @status`
		args["status"] = f.Status
	}
	if f.Direction = strings.TrimSpace(f.Direction); f.Direction != "" {
		if f.Direction != "incoming" && f.Direction != "outgoing" {
			return nil, 0, apperr.Invalidf("direction must be incoming or outgoing")
		}
		query += ` AND l.direction = @direction`
		args["direction"] = f.Direction
	}
	if name := strings.TrimSpace(f.Account); name != "" {
		// The name the call was logged under, or the account that bears
		// that name now (a renamed account keeps its calls): at most one
		// (names are unique in an organization), resolved first.
		id, err := s.accounts.IDNamed(ctx, orgID, name)
		if err != nil {
			return nil, 0, err
		}
		query += ` AND (lower(l.platform_account) = lower(@account) OR l.account_id = @account_id)`
		args["account"], args["account_id"] = name, id
	}
	if f.ContactID != nil {
		query += ` AND l.contact_id = @contact`
		args["contact"] = *f.ContactID
	}
	if f.IVRFlowID != nil {
		query += ` AND l.ivr_flow_id = @ivr`
		args["ivr"] = *f.IVRFlowID
	}
	if raw := strings.TrimSpace(f.Phone); raw != "" {
		digits := onlyDigits(raw)
		if digits == "" {
			return nil, 0, apperr.Invalidf("phone must contain digits (a part of the caller's number)")
		}
		masked, err := s.masksNumbers(ctx, orgID)
		if err != nil {
			return nil, 0, err
		}
		if masked {
			if n, err := phone.Normalize(raw); err == nil {
				digits = phone.Digits(n)
			}
			query += ` AND regexp_replace(l.caller_phone, '[^0-9]', '', 'g') = @phone`
			args["phone"] = digits
		} else {
			query += ` AND regexp_replace(l.caller_phone, '[^0-9]', '', 'g') LIKE @phone`
			args["phone"] = "%" + digits + "%"
		}
	}
	if f.StartDate != "" || f.EndDate != "" {
		loc, err := s.orgLocation(ctx, orgID)
		if err != nil {
			return nil, 0, err
		}
		from, to, err := dayRange(f.StartDate, f.EndDate, loc)
		if err != nil {
			return nil, 0, err
		}
		if from != nil {
			query += ` AND l.created_at >= @from`
			args["from"] = *from
		}
		if to != nil {
			query += ` AND l.created_at < @to`
			args["to"] = *to
		}
	}
	rows, total, err := paging.Raw[CallLogView](s.db.WithContext(ctx), query, args, pg, "l.created_at DESC, l.id DESC")
	if err != nil {
		return nil, 0, err
	}
	rows, err = s.withNames(ctx, orgID, rows)
	return rows, total, err
}

// GetCallLog answers one call log of the organization with its transfers.
func (s *Service) GetCallLog(ctx context.Context, orgID, id uuid.UUID) (*CallLogDetail, error) {
	var rows []CallLogView
	err := s.db.WithContext(ctx).Raw(callLogSelect+` AND l.id = @id`, map[string]any{"org": orgID, "id": id}).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, apperr.NotFoundf(MsgCallLogNotFound)
	}
	if rows, err = s.withNames(ctx, orgID, rows); err != nil {
		return nil, err
	}
	out := &CallLogDetail{CallLogView: rows[0], Transfers: []models.CallTransfer{}}
	err = s.db.WithContext(ctx).Scopes(tenant.Scope(orgID)).Where("call_log_id = ?", id).Order("created_at, id").Find(&out.Transfers).Error
	return out, err
}

// ListTransfers answers a page of the organization's call transfers,
// newest first, only those with status when it is not empty.
func (s *Service) ListTransfers(ctx context.Context, orgID uuid.UUID, status string, pg paging.Params) ([]models.CallTransfer, int64, error) {
	q := s.db.WithContext(ctx).Model(&models.CallTransfer{}).Scopes(tenant.Scope(orgID))
	if status = strings.TrimSpace(status); status != "" {
		if !slices.Contains(TransferStatuses, status) {
			return nil, 0, apperr.Invalidf("status must be one of %s", strings.Join(TransferStatuses, ", "))
		}
		q = q.Where("status = ?", status)
	}
	return paging.Find[models.CallTransfer](q, pg, "created_at DESC, id DESC")
}

// GetTransfer answers one call transfer of the organization.
func (s *Service) GetTransfer(ctx context.Context, orgID, id uuid.UUID) (*models.CallTransfer, error) {
	return tenant.Get[models.CallTransfer](ctx, s.db, orgID, id, MsgTransferNotFound)
}

// masksNumbers reports whether the organization masks phone numbers (no
// settings: tests of other rules, unmasked).
func (s *Service) masksNumbers(ctx context.Context, orgID uuid.UUID) (bool, error) {
	if s.settings == nil {
		return false, nil
	}
	_, st, err := s.settings.Get(ctx, orgID)
	return st.MaskPhoneNumbers, err
}

// orgLocation is the organization's timezone, UTC when it has none or an
// unknown one (a date filter then still answers, on UTC days).
func (s *Service) orgLocation(ctx context.Context, orgID uuid.UUID) (*time.Location, error) {
	if s.settings == nil {
		return time.UTC, nil
	}
	_, st, err := s.settings.Get(ctx, orgID)
	if err != nil {
		return nil, err
	}
	if loc, err := time.LoadLocation(st.Timezone); err == nil && st.Timezone != "" {
		return loc, nil
	}
	return time.UTC, nil
}

// dayRange turns the inclusive dates start and end (YYYY-MM-DD, either may
// be empty) into the half-open instant range [from, to) of those days in
// loc.
func dayRange(start, end string, loc *time.Location) (from, to *time.Time, err error) {
	parse := func(name, raw string) (*time.Time, error) {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			return nil, nil
		}
		d, err := time.ParseInLocation(time.DateOnly, raw, loc)
		if err != nil {
			return nil, apperr.Invalidf("%s must be a date (YYYY-MM-DD)", name)
		}
		return &d, nil
	}
	if from, err = parse("start_date", start); err != nil {
		return nil, nil, err
	}
	if to, err = parse("end_date", end); err != nil {
		return nil, nil, err
	}
	if to != nil {
		next := to.AddDate(0, 0, 1) // inclusive: up to the next midnight
		to = &next
	}
	if from != nil && to != nil && !from.Before(*to) {
		return nil, nil, apperr.Invalidf("end_date must not be before start_date")
	}
	return from, to, nil
}

func onlyDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}
