package contactsapi

import (
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wharf/api/web"
	"wharf/internal/contacts"
)

type noteRequest struct {
	Body string `json:"body" description:"The note, at most 4000 characters."`
}

type noteResp struct {
	ID         uuid.UUID  `json:"id"`
	ContactID  uuid.UUID  `json:"contact_id"`
	AuthorID   *uuid.UUID `json:"author_id"`
	AuthorName string     `json:"author_name"`
	Body       string     `json:"body"`
	CreatedAt  time.Time  `json:"created_at"`
}

type notesQuery struct {
	web.PageQuery
}

func toNoteResp(n contacts.Note) noteResp {
	return noteResp{ID: n.ID, ContactID: n.ContactID, AuthorID: n.AuthorID, AuthorName: n.AuthorName, Body: n.Body,
		CreatedAt: web.UTC(n.CreatedAt)}
}

func (h *Handlers) listNotes(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	pg, valid := web.Paging(c, 50, 100)
	if !valid {
		return
	}
	rows, total, err := h.contacts.Notes(c.Request.Context(), web.Principal(c).OrgID, id, pg)
	if err != nil {
		web.Fail(c, err)
		return
	}
	items := make([]noteResp, len(rows))
	for i, n := range rows {
		items[i] = toNoteResp(n)
	}
	web.OK(c, web.NewPage(items, total, pg))
}

func (h *Handlers) addNote(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	var req noteRequest
	if !web.BindJSON(c, &req) {
		return
	}
	p := web.Principal(c)
	n, err := h.contacts.AddNote(c.Request.Context(), p.OrgID, id, p.UserID, req.Body)
	if err != nil {
		web.Fail(c, err)
		return
	}
	web.Created(c, toNoteResp(*n))
}

func (h *Handlers) deleteNote(c *gin.Context) {
	id, valid := web.PathID(c, "id")
	if !valid {
		return
	}
	noteID, valid := web.PathID(c, "note_id")
	if !valid {
		return
	}
	p := web.Principal(c)
	if err := h.contacts.DeleteNote(c.Request.Context(), p.OrgID, id, noteID, p.UserID); err != nil {
		web.Fail(c, err)
		return
	}
	web.Message(c, "note deleted")
}
