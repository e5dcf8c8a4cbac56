package models

import "github.com/google/uuid"

// Audience selects contacts of an organization (internal/contacts compiles
// it to SQL): a campaign's recipients when they are not uploaded, and what
// a segment saves under a name. Every condition given must hold (AND); an
// empty audience is every contact.
type Audience struct {
	// TagsAny: contacts with at least one of these tags (names, any case).
	TagsAny []string `json:"tags_any,omitempty" description:"Contacts with at least one of these tags (names, any case)."`
	// TagsAll: contacts with every one of these tags.
	TagsAll []string `json:"tags_all,omitempty" description:"Contacts with every one of these tags."`
	// TagsNone: contacts with none of these tags.
	TagsNone []string `json:"tags_none,omitempty" description:"Contacts with none of these tags."`
	// AccountID: contacts of one platform account.
	AccountID *uuid.UUID `json:"account_id,omitempty" description:"Only contacts of this platform account."`
	// Metadata: conditions on the contact's metadata fields.
	Metadata []MetadataCondition `json:"metadata,omitempty" description:"Conditions on the contacts' metadata fields (at most 10)."`
	// ActiveWithinDays: contacts whose last message (either way) is at
	// most this many days old.
	ActiveWithinDays *int `json:"active_within_days,omitempty" description:"Contacts who messaged or were messaged within this many days (1-3650)."`
	// InactiveForDays: contacts without a message for this many days (or
	// never messaged).
	InactiveForDays *int `json:"inactive_for_days,omitempty" description:"Contacts with no message for this many days, or never (1-3650)."`
	// SegmentID: contacts of a saved segment (its filter of the moment).
	// Only campaigns' audiences may name one; a segment's own filter may not.
	SegmentID *uuid.UUID `json:"segment_id,omitempty" description:"Contacts of a saved segment, as its filter is when the audience is counted or resolved (not inside a segment's own filter)."`
}

// MetadataCondition is one condition on a metadata field. Values are
// compared as text (a number 5 equals "5").
type MetadataCondition struct {
	Key string `json:"key" description:"The metadata field's name (top level)."`
	// Op: eq, neq, contains (any case), exists, missing.
	Op    string `json:"op" enum:"eq,neq,contains,exists,missing" description:"eq, neq and contains (any case) compare the field's text with value; exists and missing need no value."`
	Value string `json:"value,omitempty" description:"The text to compare with (eq, neq, contains)."`
}

// CampaignAudience is where a campaign's recipients come from when they
// are not uploaded: the contacts an Audience selects, resolved when the
// campaign starts, and fixed values for placeholders that no contact field
// fills.
type CampaignAudience struct {
	Audience
	// Values: a fixed value for some template placeholders (by key); the
	// others map to name, phone_number or a metadata field through the
	// campaign's variable_mapping.
	Values map[string]string `json:"values,omitempty" description:"A fixed value for some of the template's placeholders, by placeholder key (the same for every recipient)."`
}
