package console

import (
	"testing"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestConsoleContacts drives the contact pages: a tag made on the Tags page;
// a contact added, renamed, tagged, assigned and opted out of marketing (and
// back) from its page; metadata drawn by the specification's display rules;
// the list filtered by tag with the filter in the URL; a user who may only
// read contacts offered no change; a delete that asks first.
func TestConsoleContacts(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	type contact struct {
		ID              string   `json:"id"`
		Name            string   `json:"name"`
		Tags            []string `json:"tags"`
		AssignedTo      *string  `json:"assigned_to"`
		MarketingOptOut bool     `json:"marketing_opt_out"`
		OptOutSource    string   `json:"opt_out_source"`
	}
	get := func(id string) contact {
		var c contact
		f.Do("GET", "/api/contacts/"+id, nil, admin).Expect(t, 200).Into(t, &c)
		return c
	}
	// Someone else in the list, untagged, with metadata to draw.
	var other contact
	f.Do("POST", "/api/contacts", map[string]any{"phone_number": "+15550003001", "name": "Bea Other", "metadata": map[string]any{
		"plan": "gold", "verified": true, "address": map[string]any{"city": "Lyon", "zip": "69001"},
		"orders":    []any{map[string]any{"id": "A-1", "total": 30}, map[string]any{"id": "A-2", "total": 12}},
		"interests": []any{"cycling", "tea"}, "deep": map[string]any{"a": map[string]any{"b": 1}}}}, admin).Expect(t, 201).Into(t, &other)
	var id string

	t.Run("a tag made, a contact added, renamed, tagged and assigned", func(t *testing.T) {
		p.in(t)
		p.click("link", "Contacts")
		p.seeRole("heading", "Contacts")
		p.seeRole("link", "Bea Other")
		p.click("link", "Tags")
		p.fill("Name", "vip")
		p.choose("Colour", "green")
		p.click("button", "Add tag")
		p.see("Tag vip added.")
		p.axe("tags")
		p.click("link", "← Contacts")
		p.click("button", "Add contact")
		p.fill("Phone number", "+15550003002")
		p.fill("Name", "Cleo")
		p.submitDialog()
		p.see("Contact Cleo added.")
		p.seeRole("heading", "Cleo")
		id = eval[string](p, `location.pathname.split('/').pop()`)
		p.fill("Name", "Cleo Client")
		p.click("button", "Save name")
		p.see("Contact saved.")
		p.toggle("vip")
		p.click("button", "Save tags")
		p.see("Tags saved.")
		eval[bool](p, `(() => { const s = document.querySelector('select[aria-label="Assigned to"]'); const o = [...s.options].find((o) => o.text === 'Administrator'); s.value = o.value; s.dispatchEvent(new Event('change', { bubbles: true })); return true })()`)
		p.see("Assigned to Administrator.")
		c := get(id)
		if c.Name != "Cleo Client" || len(c.Tags) != 1 || c.Tags[0] != "vip" || c.AssignedTo == nil || *c.AssignedTo != f.Admin.User.ID {
			t.Fatalf("the contact after the page's changes: %+v", c)
		}
		p.axe("contact")
	})

	t.Run("opted out of marketing and back, recorded as the user's", func(t *testing.T) {
		p.in(t)
		p.click("button", "Opt out of marketing")
		p.seeRole("heading", "Opt this contact out of marketing?")
		if !eval[bool](p, `(() => { const b = [...document.querySelectorAll('dialog[open] button')].find((b) => b.textContent.trim() === 'Opt out'); if (b) b.click(); return !!b })()`) {
			t.Fatal("no Opt out button in the dialog")
		}
		p.see("Opted out of marketing: campaigns skip this contact.")
		p.see("a user changed it")
		if c := get(id); !c.MarketingOptOut || c.OptOutSource != "user" {
			t.Fatalf("after opting out: %+v", c)
		}
		p.shot("contact")
		p.click("button", "Subscribe again")
		p.see("Subscribed to marketing again.")
		if c := get(id); c.MarketingOptOut {
			t.Fatalf("after subscribing again: %+v", c)
		}
	})

	t.Run("a private note added, never sent", func(t *testing.T) {
		p.in(t)
		p.open("/console/contacts/" + id)
		p.seeRole("heading", "Private notes")
		before := len(f.Sim.Messages(platformsim.MessageFilter{}))
		p.fill("New note", "Prefers calls in the morning")
		p.click("button", "Add note")
		p.see("Prefers calls in the morning")
		p.see("Administrator ·")
		var notes struct {
			Items []struct{ Body string } `json:"items"`
		}
		f.Do("GET", "/api/contacts/"+id+"/notes", nil, admin).Expect(t, 200).Into(t, &notes)
		if len(notes.Items) != 1 || notes.Items[0].Body != "Prefers calls in the morning" {
			t.Fatalf("notes %+v", notes.Items)
		}
		if n := len(f.Sim.Messages(platformsim.MessageFilter{})); n != before {
			t.Fatalf("a note reached the provider (%d messages)", n-before)
		}
		p.axe("notes")
	})

	t.Run("metadata by the display rules", func(t *testing.T) {
		p.in(t)
		p.open("/console/contacts/" + other.ID)
		p.seeRole("heading", "Bea Other")
		p.see("plan gold")
		p.see("verified yes")
		p.see("address")
		p.see("city Lyon")
		p.waitUntil("the orders table", `[...document.querySelectorAll('table')].some((t) => t.innerText.includes('A-2') && t.innerText.includes('12'))`)
		p.see("cycling")
		p.see(`{"b":1}`)
		p.axe("metadata")
		p.shot("metadata")
	})

	t.Run("the list by tag, the filter in the URL", func(t *testing.T) {
		p.in(t)
		p.open("/console/contacts")
		p.waitUntil("the tags offered", `[...(labelled('Tag')?.options ?? [])].some((o) => o.text === 'vip')`)
		p.choose("Tag", "vip")
		p.waitUntil("only the vip contact", `!!byRole('link', 'Cleo Client') && !byRole('link', 'Bea Other')`)
		if got := p.path(); got != "/console/contacts?tag=vip" {
			t.Fatalf("the filter is not in the URL: %s", got)
		}
		p.reload()
		p.seeRole("link", "Cleo Client")
		p.see("1 contact")
	})

	t.Run("a reader is offered no change", func(t *testing.T) {
		f.Do("POST", "/api/roles", map[string]any{"name": "Contact reader", "permissions": []string{"contacts:read"}}, admin).Expect(t, 201)
		a := signInAs(t, b, f, "reader", "reader@wharf.test", "Contact reader")
		a.open("/console/contacts/" + id)
		a.seeRole("heading", "Cleo Client")
		a.see("vip")
		a.see("Prefers calls in the morning")
		if eval[bool](a, `!!document.querySelector('button[aria-label^="Delete the note"]')`) {
			t.Fatal("a reader is offered to delete someone else's note")
		}
		for _, c := range []string{"Opt out of marketing", "Save tags", "Delete contact", "Save name"} {
			if a.has("button", c) {
				t.Fatalf("a reader is shown %q", c)
			}
		}
		a.open("/console/tags")
		a.seeRole("heading", "You cannot open this page")
	})

	t.Run("delete asks first", func(t *testing.T) {
		p.in(t)
		p.open("/console/contacts/" + id)
		p.click("button", "Delete contact")
		p.seeRole("heading", "Delete this contact?")
		p.click("button", "Delete this contact")
		p.see("Contact deleted.")
		p.seeRole("heading", "Contacts")
		if r := f.Do("GET", "/api/contacts/"+id, nil, admin); r.Status != 404 {
			t.Fatalf("the deleted contact answers %d", r.Status)
		}
	})
}
