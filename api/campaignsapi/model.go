package campaignsapi

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/campaigns"
	"wharf/internal/identity"
	"wharf/internal/infra/apperr"
	"wharf/internal/orgsettings"
	"wharf/models"
)

type listQuery struct {
	web.PageQuery
	Status    string `query:"status" description:"Only campaigns in this state (draft, scheduled, sending, paused, completed, cancelled)."`
	AccountID string `query:"account_id" description:"Only campaigns of this platform account (UUID)."`
	SeriesID  string `query:"series_id" description:"Only the runs of this recurring campaign (UUID)."`
}

type campaignResp struct {
	ID           uuid.UUID  `json:"id"`
	Name         string     `json:"name"`
	AccountID    *uuid.UUID `json:"account_id"`
	TemplateID   *uuid.UUID `json:"template_id"`
	TemplateName string     `json:"template_name"`
	// Status: draft, scheduled, sending, paused, completed, cancelled, or
	// recurring (a series whose occurrences are still to come).
	Status          string `json:"status"`
	TotalRecipients int    `json:"total_recipients"`
	SentCount       int    `json:"sent_count"`
	DeliveredCount  int    `json:"delivered_count"`
	ReadCount       int    `json:"read_count"`
	FailedCount     int    `json:"failed_count"`
	UnknownCount    int    `json:"unknown_count"`
	// SkippedCount: recipients not sent on purpose (a marketing template
	// to a contact who opted out of marketing); not failures.
	SkippedCount int `json:"skipped_count"`
	PendingCount int `json:"pending_count"`
	SendingCount int `json:"sending_count"`
	// RepliedCount: recipients who answered within 72 hours of their send,
	// as counted at replies_counted_at (every 5 minutes while replies can
	// still come, and when the report is read).
	RepliedCount     int        `json:"replied_count"`
	RepliesCountedAt *time.Time `json:"replies_counted_at"`
	// ReplyRate: replied_count / sent_count (0 before any send).
	ReplyRate       float64           `json:"reply_rate"`
	VariableMapping map[string]string `json:"variable_mapping"`
	// Audience: where the recipients come from when not uploaded (null:
	// uploaded).
	Audience *models.CampaignAudience `json:"audience"`
	// AudienceResolvedAt: when the audience became the recipients (the
	// start); null before.
	AudienceResolvedAt *time.Time `json:"audience_resolved_at"`
	ScheduledAt        *time.Time `json:"scheduled_at"`
	StartedAt          *time.Time `json:"started_at"`
	PausedAt           *time.Time `json:"paused_at"`
	PauseReason        string     `json:"pause_reason"`
	CompletedAt        *time.Time `json:"completed_at"`
	CancelledAt        *time.Time `json:"cancelled_at"`
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
	// Recurrence: the series' schedule (null: a single send).
	Recurrence *models.Recurrence `json:"recurrence"`
	// NextRunAt: when the series' next occurrence fires (null unless
	// recurring).
	NextRunAt *time.Time `json:"next_run_at"`
	// Runs: the runs the series has created; SkippedOccurrences: the
	// occurrences missed past their grace (or superseded by a later missed
	// one), the last skipped at LastSkippedAt.
	Runs               int        `json:"runs"`
	SkippedOccurrences int        `json:"skipped_occurrences"`
	LastSkippedAt      *time.Time `json:"last_skipped_at"`
	// SeriesID and OccurrenceAt: this campaign is a run of that series,
	// for that occurrence.
	SeriesID     *uuid.UUID `json:"series_id"`
	OccurrenceAt *time.Time `json:"occurrence_at"`
}

func toCampaignResp(c *models.Campaign) campaignResp {
	m := c.VariableMapping.V
	if m == nil {
		m = map[string]string{}
	}
	return campaignResp{ID: c.ID, Name: c.Name, AccountID: c.AccountID, TemplateID: c.TemplateID, TemplateName: c.TemplateName,
		Status: string(c.Status), TotalRecipients: c.TotalRecipients, SentCount: c.SentCount, DeliveredCount: c.DeliveredCount,
		ReadCount: c.ReadCount, FailedCount: c.FailedCount, UnknownCount: c.UnknownCount, SkippedCount: c.SkippedCount, PendingCount: c.PendingCount,
		SendingCount: c.SendingCount, RepliedCount: c.RepliedCount, RepliesCountedAt: web.UTCPtr(c.RepliesCountedAt),
		ReplyRate: rate(c.RepliedCount, c.SentCount), VariableMapping: m, Audience: c.Audience.V, AudienceResolvedAt: web.UTCPtr(c.AudienceResolvedAt),
		ScheduledAt: web.UTCPtr(c.ScheduledAt), StartedAt: web.UTCPtr(c.StartedAt), PausedAt: web.UTCPtr(c.PausedAt), PauseReason: c.PauseReason,
		CompletedAt: web.UTCPtr(c.CompletedAt), CancelledAt: web.UTCPtr(c.CancelledAt), CreatedAt: web.UTC(c.CreatedAt), UpdatedAt: web.UTC(c.UpdatedAt),
		Recurrence: c.Recurrence.V, NextRunAt: web.UTCPtr(c.NextRunAt), Runs: c.Runs, SkippedOccurrences: c.SkippedOccurrences,
		LastSkippedAt: web.UTCPtr(c.LastSkippedAt), SeriesID: c.SeriesID, OccurrenceAt: web.UTCPtr(c.OccurrenceAt)}
}

// campaignRequest distinguishes an absent scheduled_at from an explicit
// null (which unschedules).
type campaignRequest struct {
	Name            *string            `json:"name"`
	AccountID       *string            `json:"account_id"`
	TemplateID      *string            `json:"template_id"`
	VariableMapping *map[string]string `json:"variable_mapping"`
	ScheduledAt     json.RawMessage    `json:"scheduled_at" format:"date-time" description:"RFC 3339 timestamp; null unschedules, absent leaves it unchanged."`
	// Audience: the recipients come from the organization's contacts.
	// Recurrence: repeat the campaign (recurrence.go).
	Recurrence json.RawMessage `json:"recurrence" rawtype:"object" description:"Make the campaign recurring: {cron, ends_at, max_runs, grace_minutes}, a 5-field cron expression in the organization's timezone at most hourly, an end (ends_at, max_runs up to 1000, or both) and how many minutes late a missed occurrence may still run (1 to 1440, default 60). Only for campaigns with an audience. null makes it a single send again, absent leaves it unchanged."`
	Audience   json.RawMessage `json:"audience" rawtype:"object" description:"Take the recipients from the organization's contacts, resolved when the campaign starts (needs contacts:read too); null goes back to uploaded recipients, absent leaves it unchanged. Map placeholders to name, phone_number or a metadata field in variable_mapping, or give fixed values here."`
}

// input reads the request; p is the caller, who needs contacts:read to
// give an audience (it selects and counts the organization's contacts).
func (r campaignRequest) input(p *identity.Principal) (campaigns.Input, error) {
	in := campaigns.Input{Name: r.Name, VariableMapping: r.VariableMapping}
	var err error
	if in.AccountID, err = web.OptionalUUID("account_id", r.AccountID); err != nil {
		return in, err
	}
	if in.TemplateID, err = web.OptionalUUID("template_id", r.TemplateID); err != nil {
		return in, err
	}
	if len(r.ScheduledAt) > 0 {
		var at *time.Time
		if string(r.ScheduledAt) != "null" {
			var raw string
			if json.Unmarshal(r.ScheduledAt, &raw) != nil {
				return in, apperr.Invalidf("scheduled_at must be an RFC 3339 timestamp or null")
			}
			t, err := time.Parse(time.RFC3339, raw)
			if err != nil {
				return in, apperr.Invalidf("scheduled_at must be an RFC 3339 timestamp or null")
			}
			t = t.UTC()
			at = &t
		}
		in.ScheduledAt = &at
	}
	if len(r.Audience) > 0 {
		var a *models.CampaignAudience
		if string(r.Audience) != "null" {
			if !p.Can("contacts:read") {
				return in, apperr.Forbiddenf("an audience from contacts needs the contacts:read permission too")
			}
			// Strict: a misspelt filter ignored would select every contact.
			dec := json.NewDecoder(bytes.NewReader(r.Audience))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&a); err != nil {
				return in, apperr.Invalidf("audience must be null or an object with only tags_any, tags_all, tags_none, account_id, metadata, active_within_days, inactive_for_days, segment_id and values: %s",
					strings.TrimPrefix(err.Error(), "json: "))
			}
		}
		in.Audience = &a
	}
	if len(r.Recurrence) > 0 {
		var rec *models.Recurrence
		if string(r.Recurrence) != "null" {
			v, err := decodeRecurrence(r.Recurrence)
			if err != nil {
				return in, err
			}
			rec = &v
		}
		in.Recurrence = &rec
	}
	return in, nil
}

// decodeRecurrence reads a recurrence strictly: a misspelt end would
// otherwise be refused as missing, more confusingly.
func decodeRecurrence(raw json.RawMessage) (models.Recurrence, error) {
	var rec models.Recurrence
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, apperr.Invalidf("recurrence must be null or an object with only cron, ends_at, max_runs and grace_minutes: %s",
			strings.TrimPrefix(err.Error(), "json: "))
	}
	return rec, nil
}

// previewRequest is a recurrence to preview.
type previewRequest struct {
	Cron         string     `json:"cron"`
	EndsAt       *time.Time `json:"ends_at"`
	MaxRuns      *int       `json:"max_runs"`
	GraceMinutes int        `json:"grace_minutes"`
}

type previewResp struct {
	// NextRuns: the next occurrences from now (up to 3, fewer when the end
	// comes first), UTC.
	NextRuns []time.Time `json:"next_runs"`
	// Timezone: the organization's, which the cron expression is read in.
	Timezone string `json:"timezone"`
}

// rate is part / whole, rounded to 4 decimals (0 when whole is 0).
func rate(part, whole int) float64 {
	if whole == 0 {
		return 0
	}
	return math.Round(float64(part)/float64(whole)*10000) / 10000
}

// reportResp is a campaign's outcome: its counters and the rates an admin
// compares campaigns by.
type reportResp struct {
	Campaign campaignResp `json:"campaign"`
	// ReplyWindowHours: how long after a send a message counts as a reply.
	ReplyWindowHours int `json:"reply_window_hours"`
	// DeliveryRate, ReadRate, ReplyRate: of the recipients sent.
	DeliveryRate float64 `json:"delivery_rate"`
	ReadRate     float64 `json:"read_rate"`
	ReplyRate    float64 `json:"reply_rate"`
	// FailureRate: failed of the recipients the campaign tried (sent or
	// failed); skipped ones are not tried.
	FailureRate float64 `json:"failure_rate"`
}

func toReportResp(c *models.Campaign) reportResp {
	return reportResp{Campaign: toCampaignResp(c), ReplyWindowHours: int(campaigns.ReplyWindow.Hours()),
		DeliveryRate: rate(c.DeliveredCount, c.SentCount), ReadRate: rate(c.ReadCount, c.SentCount),
		ReplyRate: rate(c.RepliedCount, c.SentCount), FailureRate: rate(c.FailedCount, c.SentCount+c.FailedCount)}
}

// Recipients.

type importRequest struct {
	// Recipients are objects with phone_number, an optional name, and any
	// other fields, which variable_mapping can name.
	Recipients []campaigns.RecipientInput `json:"recipients"`
}

type importResp struct {
	Imported    int                    `json:"imported"`
	Duplicates  int                    `json:"duplicates"`
	Invalid     int                    `json:"invalid"`
	InvalidRows []campaigns.InvalidRow `json:"invalid_rows"` // the first 100
}

type recipientsQuery struct {
	web.PageQuery
	Status string `query:"status" description:"Only recipients in this state (pending, sending, sent, delivered, read, failed, unknown)."`
}

type exportQuery struct {
	Status string `query:"status" description:"Only recipients in this state (pending, sending, sent, delivered, read, failed, unknown)."`
}

type recipientError struct {
	Code   *int   `json:"code"`
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

type recipientResp struct {
	ID                uuid.UUID       `json:"id"`
	PhoneNumber       string          `json:"phone_number"`
	Name              string          `json:"name"`
	Status            string          `json:"status"`
	Data              map[string]any  `json:"data"`
	Attempts          int             `json:"attempts"`
	PlatformMessageID *string         `json:"platform_message_id"`
	SentAt            *time.Time      `json:"sent_at"`
	DeliveredAt       *time.Time      `json:"delivered_at"`
	ReadAt            *time.Time      `json:"read_at"`
	FailedAt          *time.Time      `json:"failed_at"`
	Error             *recipientError `json:"error"`
	// RepliedAt: the recipient's first message within 72 hours after the
	// send (null: none, or not sent).
	RepliedAt *time.Time `json:"replied_at"`
}

// toRecipientResp renders a recipient, masked as the organization wants.
func toRecipientResp(m orgsettings.Masker, r models.CampaignRecipient) recipientResp {
	out := recipientResp{ID: r.ID, PhoneNumber: m.Phone(r.PhoneNumber), Name: m.Name(r.Name), Status: string(r.Status), Data: r.Data.V,
		Attempts: r.Attempts, PlatformMessageID: r.PlatformMessageID, SentAt: web.UTCPtr(r.SentAt), DeliveredAt: web.UTCPtr(r.DeliveredAt),
		ReadAt: web.UTCPtr(r.ReadAt), FailedAt: web.UTCPtr(r.FailedAt), RepliedAt: web.UTCPtr(r.RepliedAt)}
	if r.ErrorTitle != "" || r.ErrorCode != nil {
		out.Error = &recipientError{Code: r.ErrorCode, Title: r.ErrorTitle, Detail: r.ErrorDetail}
	}
	return out
}

// Actions and progress.

type resendResp struct {
	Requeued int64        `json:"requeued"`
	Campaign campaignResp `json:"campaign"`
}

type progressResp struct {
	ID             uuid.UUID  `json:"id"`
	Status         string     `json:"status"`
	Total          int64      `json:"total"`
	Pending        int64      `json:"pending"`
	Sending        int64      `json:"sending"`
	Sent           int64      `json:"sent"` // accepted by the provider, whatever happened next
	Delivered      int64      `json:"delivered"`
	Read           int64      `json:"read"`
	Failed         int64      `json:"failed"`
	Unknown        int64      `json:"unknown"`
	Skipped        int64      `json:"skipped"`          // opted out of marketing: not sent on purpose
	SendsPerSecond float64    `json:"sends_per_second"` // over the last 10 s
	StartedAt      *time.Time `json:"started_at"`
	CompletedAt    *time.Time `json:"completed_at"`
}

func toProgressResp(p *campaigns.Progress) progressResp {
	return progressResp{ID: p.Campaign.ID, Status: string(p.Campaign.Status), Total: p.Total, Pending: p.Pending, Sending: p.Sending,
		Sent: p.Sent, Delivered: p.Delivered, Read: p.Read, Failed: p.Failed, Unknown: p.Unknown, Skipped: p.Skipped,
		SendsPerSecond: p.RecentPerSecond, StartedAt: web.UTCPtr(p.Campaign.StartedAt), CompletedAt: web.UTCPtr(p.Campaign.CompletedAt)}
}
