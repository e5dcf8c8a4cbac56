package chatbot

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wharf/models"
)

// contactState is what an evaluation reads of the contact before it
// decides, in one statement (one round trip instead of five): the
// organization's configuration version (config.go), whether an agent has
// the conversation, the contact's name and number (for placeholders), and
// its session in a flow, locked, if it has one.
type contactState struct {
	Found              bool
	Version            int64
	Transferred        bool
	ContactName        string
	ContactProfileName string
	ContactPhoneNumber string
	Session            models.ChatbotSession `gorm:"embedded;embeddedPrefix:s_"`
}

// stateSQL reads a contactState. The session is locked (FOR UPDATE in the
// lateral subquery): the sweeper or a deleted flow may end it meanwhile,
// and the evaluation must not write an ended session back to life.
//
// The contact and its session are reached by their keys only: the
// organization is compared with IS NOT DISTINCT FROM, which no index serves.
// With "=", a planner whose statistics predate the organization's contacts
// (a new system, a new tenant's first minute) read every contact and every
// open session of the organization for each message (BenchmarkChatbotReplies:
// 977 and 154 pages a message; TestStateReadsOnlyTheContactsRows).
const stateSQL = `SELECT true AS found, o.chatbot_version AS version,
	EXISTS (SELECT 1 FROM agent_transfers t WHERE t.organization_id = o.id AND t.contact_id = c.id AND t.status = 'active') AS transferred,
	c.name AS contact_name, c.profile_name AS contact_profile_name, c.phone_number AS contact_phone_number,
	s.id AS s_id, s.organization_id AS s_organization_id, s.contact_id AS s_contact_id, s.flow_id AS s_flow_id,
	s.flow_name AS s_flow_name, s.current_step AS s_current_step, s.variables AS s_variables, s.panel_config AS s_panel_config,
	s.started_at AS s_started_at, s.last_activity AS s_last_activity, s.ended_at AS s_ended_at, s.end_reason AS s_end_reason
FROM organizations o JOIN contacts c ON c.organization_id IS NOT DISTINCT FROM o.id
LEFT JOIN LATERAL (SELECT * FROM chatbot_sessions ss WHERE ss.contact_id = c.id AND ss.organization_id IS NOT DISTINCT FROM o.id
	AND ss.ended_at IS NULL FOR UPDATE) s ON true
WHERE o.id = ? AND c.id = ?`

// readState reads the contact's state in tx.
func readState(ctx context.Context, tx *gorm.DB, orgID, contactID uuid.UUID) (*contactState, error) {
	var st contactState
	if err := tx.WithContext(ctx).Raw(stateSQL, orgID, contactID).Scan(&st).Error; err != nil {
		return nil, err
	}
	if !st.Found {
		return nil, fmt.Errorf("chatbot: contact %s of organization %s not found", contactID, orgID)
	}
	return &st, nil
}
