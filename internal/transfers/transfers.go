// Package transfers owns agent transfers: a contact's conversation handed
// from the bot to a person. A transfer waits in a queue (a team's, or the
// general one) until an agent picks it up or is assigned, by a manager or
// by the team's strategy, and ends when the bot is resumed.
//
// Concurrency: a contact has at most one active transfer (a unique index;
// a second request answers the first); a pickup claims the oldest waiting
// transfer with SKIP LOCKED, so two agents never get the same one; a
// team's automatic assignments run one at a time under a lock on the team
// row, so that load_balanced counts and round_robin turns are read after
// the previous assignment committed.
//
// Files: transfers.go (create, list, get), assign.go (strategies, pickup,
// assign, resume), events.go (transfer.* to outbound webhooks and the event stream).
package transfers

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/live"
	"wharf/internal/teams"
	"wharf/models"
)

// Sources of a transfer.
const (
	SourceManual  = "manual"  // POST /api/chatbot/transfers
	SourceKeyword = "keyword" // a transfer keyword of the chatbot
	SourceFlow    = "flow"    // a transfer step of a conversation flow
)

const maxNotes = 2000

// Events publishes transfer.* events (the webhooks domain): Emit in the
// change's transaction, Publish after its commit.
type Events interface {
	Emit(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, event string, data any) (uuid.UUID, error)
	Publish(ctx context.Context, orgID uuid.UUID, ids ...uuid.UUID)
}

// Caller is who asks: a user, and whether they hold transfers:assign
// (assign to anyone, resume anyone's, pick up from any queue).
type Caller struct {
	UserID    uuid.UUID
	CanAssign bool
}

// Contacts reads the organization's contacts (the contacts domain): a
// transfer's contact must exist, and the views show its name and number.
// db is the caller's transaction or pool.
type Contacts interface {
	ContactsIn(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]models.Contact, error)
}

// People reads the organization's users (the identity domain): the agents'
// names, and whether one may be assigned.
type People interface {
	Users(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]models.User, error)
	IsActiveMember(ctx context.Context, orgID, userID uuid.UUID) (bool, error)
}

// Teams owns the teams a transfer waits with (the teams domain): their
// lock, members, turns and names. The methods ending in In take the
// transfer's transaction.
type Teams interface {
	LockIn(ctx context.Context, tx *gorm.DB, orgID, teamID uuid.UUID) (*models.Team, error)
	NextAgentIn(ctx context.Context, tx *gorm.DB, orgID, teamID uuid.UUID, strategy string, loads teams.Loads) (uuid.UUID, error)
	AssignedIn(ctx context.Context, tx *gorm.DB, orgID, teamID, userID uuid.UUID, at time.Time) error
	IsTeamMember(ctx context.Context, orgID, teamID, userID uuid.UUID) (bool, error)
	TeamsOf(ctx context.Context, orgID, user uuid.UUID) ([]uuid.UUID, error)
	Names(ctx context.Context, db *gorm.DB, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]string, error)
}

// Deps are the transfers domain's dependencies.
type Deps struct {
	DB     *gorm.DB
	Events Events
	// Live (nil: none) publishes the event stream's transfer events.
	Live     live.Publisher
	Contacts Contacts
	People   People
	Teams    Teams
}

// Service manages agent transfers.
type Service struct {
	db       *gorm.DB
	events   Events
	live     live.Publisher
	contacts Contacts
	people   People
	teams    Teams
	now      func() time.Time
}

// NewService wires the transfers domain.
func NewService(d Deps) *Service {
	return &Service{db: d.DB, events: d.Events, live: live.Or(d.Live), contacts: d.Contacts, people: d.People, teams: d.Teams,
		now: func() time.Time { return time.Now().UTC() }}
}

// View is a transfer with the names the lists show.
type View struct {
	models.AgentTransfer
	ContactName string
	PhoneNumber string
	// ContactAssignedTo is the contact's assignee (the event stream's
	// contact carries it).
	ContactAssignedTo *uuid.UUID
	AgentName         string
	TeamName          string
}

// viewSQL reads transfers; withNames gives them the names the views show.
const viewSQL = `SELECT t.* FROM agent_transfers t`

// withNames gives a page of transfers their contact's name and number, their
// agent's and their team's names, with one lookup of each owner (in db, the
// caller's transaction or pool). A transfer's contact is never missing (its
// rows cascade with the contact); one deleted since the page was read is
// left out, as the join did.
func (s *Service) withNames(ctx context.Context, db *gorm.DB, orgID uuid.UUID, rows []View) ([]View, error) {
	var contactIDs, agentIDs, teamIDs []uuid.UUID
	add := func(ids *[]uuid.UUID, id *uuid.UUID) {
		if id != nil && !slices.Contains(*ids, *id) {
			*ids = append(*ids, *id)
		}
	}
	for i := range rows {
		add(&contactIDs, &rows[i].ContactID)
		add(&agentIDs, rows[i].AgentID)
		add(&teamIDs, rows[i].TeamID)
	}
	contacts, err := s.contacts.ContactsIn(ctx, db, orgID, contactIDs)
	if err != nil {
		return nil, err
	}
	agents, err := s.people.Users(ctx, db, orgID, agentIDs)
	if err != nil {
		return nil, err
	}
	teamNames, err := s.teams.Names(ctx, db, orgID, teamIDs)
	if err != nil {
		return nil, err
	}
	out := rows[:0]
	for _, v := range rows {
		c, ok := contacts[v.ContactID]
		if !ok {
			continue
		}
		v.ContactName, v.PhoneNumber, v.ContactAssignedTo = cmp.Or(c.Name, c.ProfileName), c.PhoneNumber, c.AssignedTo
		if v.AgentID != nil {
			u := agents[*v.AgentID]
			v.AgentName = cmp.Or(u.FullName, u.Email)
		}
		if v.TeamID != nil {
			v.TeamName = teamNames[*v.TeamID]
		}
		out = append(out, v)
	}
	return out, nil
}

// CreateInput is a transfer request.
type CreateInput struct {
	ContactID uuid.UUID
	TeamID    *uuid.UUID // nil: the general queue
	Notes     string
	Source    string     // SourceManual when empty
	CreatedBy *uuid.UUID // nil for the bot
}

// Create hands the contact to a person: the contact's active transfer if
// it has one (created false), else a new one, assigned by its team's
// strategy. The events (transfer.created, and transfer.assigned when the
// strategy found an agent) are written with it.
func (s *Service) Create(ctx context.Context, orgID uuid.UUID, in CreateInput) (v *View, created bool, err error) {
	var id uuid.UUID
	var events *outbox
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		id, created, events, err = s.create(ctx, tx, orgID, in)
		return err
	})
	if err != nil {
		return nil, false, err
	}
	s.publish(ctx, orgID, events)
	v, err = s.Get(ctx, orgID, id)
	return v, created, err
}

// msgExists is the answer to a user who asks for a transfer of a contact
// whose active transfer they may not see: it says that one exists (a second
// cannot be made) and nothing of it, neither its queue, agent nor notes.
const msgExists = "this contact already has an active transfer"

// CreateFor is Create for a user (POST /api/chatbot/transfers). When the
// contact already has an active transfer the caller may not see (visible,
// as in List), the answer is a 409 msgExists instead of that transfer.
func (s *Service) CreateFor(ctx context.Context, orgID uuid.UUID, c Caller, in CreateInput) (v *View, created bool, err error) {
	v, created, err = s.Create(ctx, orgID, in)
	if err != nil || created || c.CanAssign {
		return v, created, err
	}
	if _, err := s.GetFor(ctx, orgID, c, v.ID); apperr.Is(err, apperr.NotFound) {
		return nil, false, apperr.Conflictf(msgExists)
	} else if err != nil {
		return nil, false, err
	}
	return v, false, nil
}

// CreateIn is Create inside tx, the transaction of the caller's change (the
// chatbot's evaluation of a message): publish, to call after tx committed,
// enqueues the events' dispatch.
func (s *Service) CreateIn(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, in CreateInput) (id uuid.UUID, created bool, publish func(context.Context), err error) {
	id, created, events, err := s.create(ctx, tx, orgID, in)
	if err != nil {
		return uuid.Nil, false, nil, err
	}
	return id, created, func(ctx context.Context) { s.publish(ctx, orgID, events) }, nil
}

func (s *Service) create(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, in CreateInput) (id uuid.UUID, created bool, events *outbox, err error) {
	in.Notes = strings.TrimSpace(in.Notes)
	if len([]rune(in.Notes)) > maxNotes {
		return uuid.Nil, false, nil, apperr.Invalidf("notes are longer than %d characters", maxNotes)
	}
	if in.Source == "" {
		in.Source = SourceManual
	}
	tx = tx.WithContext(ctx)
	if found, err := s.contacts.ContactsIn(ctx, tx, orgID, []uuid.UUID{in.ContactID}); err != nil {
		return uuid.Nil, false, nil, err
	} else if _, ok := found[in.ContactID]; !ok {
		return uuid.Nil, false, nil, apperr.NotFoundf("contact not found")
	}
	var team *models.Team
	if in.TeamID != nil {
		// The lock serializes the team's assignments (see the package comment).
		t, err := s.teams.LockIn(ctx, tx, orgID, *in.TeamID)
		if err != nil {
			return uuid.Nil, false, nil, err
		}
		if !t.IsActive {
			return uuid.Nil, false, nil, apperr.Invalidf("the team is not active")
		}
		team = t
	}
	now := s.now()
	id, err = scanID(tx.Raw(`INSERT INTO agent_transfers (organization_id, contact_id, status, source, team_id, notes, created_by,
		transferred_at, updated_at) VALUES (?, ?, 'active', ?, ?, ?, ?, ?, ?)
		ON CONFLICT (organization_id, contact_id) WHERE status = 'active' DO NOTHING RETURNING id`,
		orgID, in.ContactID, in.Source, in.TeamID, in.Notes, in.CreatedBy, now, now))
	if err != nil {
		return uuid.Nil, false, nil, err
	}
	if id == uuid.Nil {
		// The contact already has one: answer it.
		id, err = scanID(tx.Raw(`SELECT id FROM agent_transfers WHERE organization_id = ? AND contact_id = ? AND status = 'active'`,
			orgID, in.ContactID))
		return id, false, nil, err
	}
	events = &outbox{}
	if err := s.emit(ctx, tx, orgID, id, eventCreated, events); err != nil {
		return uuid.Nil, false, nil, err
	}
	if team != nil && team.AssignmentStrategy != "manual" {
		agent, err := s.teams.NextAgentIn(ctx, tx, orgID, team.ID, team.AssignmentStrategy, s.loads(orgID))
		if err != nil {
			return uuid.Nil, false, nil, err
		}
		if agent != uuid.Nil { // else it waits in the team's queue
			if err := s.setAgent(ctx, tx, orgID, id, agent); err != nil {
				return uuid.Nil, false, nil, err
			}
			if err := s.emit(ctx, tx, orgID, id, eventAssigned, events); err != nil {
				return uuid.Nil, false, nil, err
			}
		}
	}
	return id, true, events, nil
}

// Get answers a transfer of the organization.
func (s *Service) Get(ctx context.Context, orgID, id uuid.UUID) (*View, error) {
	return s.get(ctx, s.db, orgID, id)
}

func (s *Service) get(ctx context.Context, db *gorm.DB, orgID, id uuid.UUID) (*View, error) {
	var rows []View
	if err := db.WithContext(ctx).Raw(viewSQL+` WHERE t.organization_id = ? AND t.id = ?`, orgID, id).Scan(&rows).Error; err != nil {
		return nil, err
	}
	rows, err := s.withNames(ctx, db, orgID, rows)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, apperr.NotFoundf("transfer not found")
	}
	return &rows[0], nil
}

// scanID reads the one uuid a query answers; uuid.Nil when it answers no
// row.
func scanID(q *gorm.DB) (uuid.UUID, error) {
	var id uuid.UUID
	err := q.Row().Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return uuid.Nil, nil
	}
	return id, err
}
