package bulk

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/phone"
	"wharf/internal/integration/docframe"
)

// Methods are the domain's whitelisted methods, for
// docframe.Options.Methods.
func (s *Service) Methods() []docframe.Method {
	return []docframe.Method{
		{Name: "wharf.api.bulk_progress", Call: s.bulkProgress},
		{Name: "wharf.api.retry_failed", Verbs: []string{"POST"}, Call: s.retryFailed},
		{Name: "wharf.api.import_recipients", Verbs: []string{"POST"}, Call: s.importRecipients},
	}
}

// loadBulk reads a bulk message the caller may read (404 in another
// organization) and its campaign (uuid.Nil for a draft).
func (s *Service) loadBulk(ctx context.Context, c *docframe.Call) (map[string]any, uuid.UUID, error) {
	name := c.String("name")
	if name == "" {
		return nil, uuid.Nil, docframe.Validationf("name is required")
	}
	if err := s.EnsureDocTypes(ctx, c.OrganizationID); err != nil {
		return nil, uuid.Nil, err
	}
	doc, err := s.frame.Get(ctx, c.Actor, c.OrganizationID, BulkMessage, name)
	if err != nil {
		return nil, uuid.Nil, err
	}
	id, _ := uuid.Parse(text(doc["campaign"]))
	return doc, id, nil
}

// bulkProgress answers {total, sent, failed, queued, unknown, percent,
// status}, counted now; it also brings the document up to date (should a
// recount's update have been lost).
func (s *Service) bulkProgress(ctx context.Context, c *docframe.Call) (any, error) {
	doc, id, err := s.loadBulk(ctx, c)
	if err != nil {
		return nil, err
	}
	if id == uuid.Nil {
		n, _ := doc["recipient_count"].(int64)
		return &Progress{Total: n, Status: text(doc["status"])}, nil
	}
	if text(doc["docstatus"]) == "2" || doc["docstatus"] == 2 {
		p, err := s.campaigns.Progress(ctx, c.OrganizationID, id)
		if err != nil {
			return nil, err
		}
		return &Progress{Total: p.Total, Sent: p.Accepted, Failed: p.Failed, Queued: p.Pending + p.Sending, Unknown: p.Unknown,
			Status: StatusCancelled}, nil
	}
	return s.sync(ctx, c.OrganizationID, text(doc["name"]), id)
}

// retryFailed requeues a submitted bulk message's failed recipients and
// sends them again through its campaign; it needs the submit right.
// Answers {requeued, status}.
func (s *Service) retryFailed(ctx context.Context, c *docframe.Call) (any, error) {
	doc, id, err := s.loadBulk(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := s.frame.Require(ctx, c.Actor, c.OrganizationID, BulkMessage, docframe.PermSubmit); err != nil {
		return nil, err
	}
	if id == uuid.Nil || text(doc["docstatus"]) != "1" {
		return nil, docframe.Validationf("%s %s is not submitted: only a submitted bulk message has failed messages to retry",
			BulkMessage, text(doc["name"]))
	}
	n, _, err := s.campaigns.RetryFailed(ctx, c.OrganizationID, id)
	if err != nil {
		return nil, refusal(err)
	}
	p, err := s.sync(ctx, c.OrganizationID, text(doc["name"]), id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"requeued": n, "status": p.Status}, nil
}

// Import bounds: rows read per page, and at most per call.
const (
	importPage = docframe.MaxLimit
	importMax  = 10_000
)

// importRecipients builds or extends a recipient list from any DocType's
// documents the caller may read, through the framework's list query (the
// fields and filters checked as the resource API checks them): the
// mobile field, the name field, and data_fields copied into
// recipient_data. Numbers are normalised; invalid ones, and numbers the
// list already has, are skipped. Answers {count (rows added), total,
// skipped}.
func (s *Service) importRecipients(ctx context.Context, c *docframe.Call) (any, error) {
	listName, doctype, mobile, nameField := c.String("list_name"), c.String("doctype"), c.String("mobile_field"), c.String("name_field")
	for k, v := range map[string]string{"list_name": listName, "doctype": doctype, "mobile_field": mobile} {
		if v == "" {
			return nil, docframe.Validationf("%s is required", k)
		}
	}
	var dataFields []string
	switch v := c.Args["data_fields"].(type) {
	case nil:
	case string:
		if v != "" && json.Unmarshal([]byte(v), &dataFields) != nil {
			return nil, docframe.Validationf("data_fields must be a JSON list of field names")
		}
	default:
		b, _ := json.Marshal(v)
		if json.Unmarshal(b, &dataFields) != nil {
			return nil, docframe.Validationf("data_fields must be a JSON list of field names")
		}
	}
	limit, err := c.Int("limit", importMax)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > importMax {
		return nil, docframe.Validationf("limit must be between 1 and %d", importMax)
	}
	if err := s.EnsureDocTypes(ctx, c.OrganizationID); err != nil {
		return nil, err
	}
	fields := append([]string{"name", mobile}, dataFields...)
	if nameField != "" {
		fields = append(fields, nameField)
	}
	sel, _ := json.Marshal(fields)
	numbers, _ := json.Marshal([]string{"name", mobile})
	filters := c.String("filters")
	if filters == "[]" || filters == "{}" {
		filters = ""
	}

	// The list's own numbers are written back: read them unmasked (the
	// caller's right to read the list is still checked).
	unmasked := c.Actor
	unmasked.MaskPhones = false
	existing, err := s.frame.Get(ctx, unmasked, c.OrganizationID, RecipientList, listName)
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		return nil, err
	}
	var rows []map[string]any
	seen := map[string]bool{}
	if existing != nil {
		old, err := readRecipients("recipients", rowsOf(existing["recipients"]))
		if err != nil {
			return nil, err
		}
		for _, r := range old {
			seen[r.mobile] = true
			rows = append(rows, map[string]any{"mobile_number": r.mobile, "recipient_name": r.name, "recipient_data": r.data})
		}
	}
	added, skipped := 0, 0
	for offset := 0; offset < limit; offset += importPage {
		// What the caller may read, as they see it (masked numbers and
		// names, no secrets): the names and the data copied into the list,
		// which answers them as it stores them.
		args := docframe.ListArgs{Fields: string(sel), Filters: filters, OrderBy: "creation asc", Limit: min(importPage, limit-offset),
			Offset: offset}
		page, err := s.frame.List(ctx, c.Actor, c.OrganizationID, doctype, args)
		if err != nil {
			return nil, err
		}
		// The numbers to send to, unmasked: the page's documents read by
		// name on the integration's behalf (a document gone between the two
		// reads is skipped). By name, not by the caller's filters again: a
		// masked caller's filters compare whole numbers normalised
		// (docframe, masking.go), which the unmasked read would not.
		names := make([]any, 0, len(page))
		for _, item := range page {
			doc, _ := item.(map[string]any)
			names = append(names, text(doc["name"]))
		}
		byName, _ := json.Marshal([][]any{{"name", "in", names}})
		raw, err := s.frame.List(ctx, system, c.OrganizationID, doctype, docframe.ListArgs{Fields: string(numbers),
			Filters: string(byName), Limit: docframe.MaxLimit})
		if err != nil {
			return nil, err
		}
		numberOf := make(map[string]string, len(raw))
		for _, item := range raw {
			doc, _ := item.(map[string]any)
			numberOf[text(doc["name"])] = text(doc[mobile])
		}
		for _, item := range page {
			doc, _ := item.(map[string]any)
			number, err := phone.Normalize(numberOf[text(doc["name"])])
			if err != nil || seen[number] {
				skipped++
				continue
			}
			seen[number] = true
			data := make(map[string]any, len(dataFields))
			for _, f := range dataFields {
				data[f] = doc[f]
			}
			row := map[string]any{"mobile_number": number, "recipient_data": data}
			if nameField != "" {
				row["recipient_name"] = text(doc[nameField])
			}
			rows = append(rows, row)
			added++
		}
		if len(page) < importPage {
			break
		}
	}
	table := make([]any, len(rows)) // as a client's JSON decodes
	for i, r := range rows {
		table[i] = r
	}
	if existing == nil {
		_, err = s.frame.Insert(ctx, c.Actor, c.OrganizationID, RecipientList, map[string]any{"list_name": listName, "recipients": table})
	} else if added > 0 {
		_, err = s.frame.Update(ctx, c.Actor, c.OrganizationID, RecipientList, listName, map[string]any{"recipients": table})
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"count": added, "total": len(rows), "skipped": skipped}, nil
}
