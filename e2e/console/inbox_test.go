package console

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// receiptPNG is a picture a customer sends: big enough to see in the
// screenshots (a parcel on a shelf, near enough).
func receiptPNG(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 240, 150))
	for y := 0; y < 150; y++ {
		for x := 0; x < 240; x++ {
			c := color.RGBA{R: 225, G: 232, B: 240, A: 255}
			switch {
			case y > 120:
				c = color.RGBA{R: 120, G: 90, B: 60, A: 255}
			case x > 70 && x < 170 && y > 40:
				c = color.RGBA{R: 196, G: 150, B: 90, A: 255}
				if x > 115 && x < 125 {
					c = color.RGBA{R: 160, G: 110, B: 60, A: 255}
				}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestConsoleInbox holds a conversation in the inbox with the simulator as
// the customer: a message appears in the open inbox within a second without
// a reload and counts as unread until opened; the agent's reply reaches the
// simulator and its status ticks to read; an image shows as an image; a PDF
// attached by the agent reaches the simulator as a document; an agent whose
// role lacks contacts:read sees only their own conversation.
func TestConsoleInbox(t *testing.T) {
	requireBrowser(t)
	// The customer reads 3 s after delivery: later than the page's own
	// re-read of the thread after a send (1.5 s), so that only the event
	// stream's message.status can tick the reply to Read.
	f := apptest.NewFixture(t, nil, func(c *platformsim.Config) { c.ReadAfter = 3 * time.Second })
	f.StartWorker()
	admin := f.Admin.Auth()
	const dana, eli = "15550008001", "15550008002"
	stored := func(from string, n int64) {
		t.Helper()
		apptest.Eventually(t, 10*time.Second, "the messages of "+from, func() bool {
			var got int64
			f.DB.Raw(`SELECT count(*) FROM messages m JOIN contacts c ON c.id = m.contact_id WHERE c.phone_number = ?`, "+"+from).Scan(&got)
			return got == n
		})
	}
	f.Incoming(platformsim.Incoming{From: eli, ProfileName: "Eli Brandt", Type: "text", Text: "Thanks, all good!"})
	stored(eli, 1)
	f.Incoming(platformsim.Incoming{From: dana, ProfileName: "Dana Reyes", Type: "text", Text: "Hello, is my order shipped?"})
	stored(dana, 1)
	var danaID string
	f.DB.Raw(`SELECT id FROM contacts WHERE phone_number = ?`, "+"+dana).Scan(&danaID)

	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	t.Run("a new message shows at once and counts as unread", func(t *testing.T) {
		p.in(t)
		p.click("link", "Inbox")
		p.seeRole("heading", "Inbox")
		p.see("Hello, is my order shipped?")
		p.see("Live")
		start := time.Now()
		f.Incoming(platformsim.Incoming{From: dana, ProfileName: "Dana Reyes", Type: "text", Text: "It was due yesterday."})
		p.see("It was due yesterday.")
		if took := time.Since(start); took > time.Second {
			t.Errorf("the message showed %s after the webhook was answered; want under a second", took)
		} else {
			t.Logf("the message showed %s after the webhook was answered", took)
		}
		p.see("2 unread")
		p.waitUntil("the title counts 3 unread", `document.title.startsWith('(3) Inbox')`)
		p.axe("inbox list")
	})

	t.Run("the agent opens the conversation, replies, and the reply is read", func(t *testing.T) {
		p.in(t)
		openConversation(p, "Dana Reyes")
		p.seeRole("heading", "Conversation")
		p.see("Window open")
		p.waitUntil("Dana's unread count gone", `!pageText().includes('2 unread')`)
		apptest.Eventually(t, 10*time.Second, "the read receipt", func() bool {
			for _, r := range f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"}) {
				if strings.Contains(string(r.Body), `"status":"read"`) {
					return true
				}
			}
			return false
		})
		p.fill("Reply", "Yes! It left our warehouse this morning.")
		p.click("button", "Send")
		apptest.Eventually(t, 10*time.Second, "the reply at the simulator", func() bool {
			for _, m := range f.Sim.Messages(platformsim.MessageFilter{To: dana}) {
				if m.Type == "text" && strings.Contains(string(m.Body), "It left our warehouse") {
					return true
				}
			}
			return false
		})
		p.see("Yes! It left our warehouse this morning.")
		p.see("· Delivered")
		p.see("· Read")
		p.axe("conversation")
	})

	t.Run("an image from the customer shows as an image", func(t *testing.T) {
		p.in(t)
		f.Incoming(platformsim.Incoming{From: dana, ProfileName: "Dana Reyes", Type: "image", MimeType: "image/png", Data: receiptPNG(t), Caption: "This is what I got"})
		p.see("This is what I got")
		p.waitUntil("the image drawn", `(() => { const i = document.querySelector('img[alt="This is what I got"]'); return !!i && i.complete && i.naturalWidth === 240 })()`)
	})

	t.Run("the agent attaches a PDF; the simulator receives a document", func(t *testing.T) {
		p.in(t)
		pdf := filepath.Join(t.TempDir(), "invoice-1042.pdf")
		if err := os.WriteFile(pdf, []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		p.upload("Attach a file", pdf)
		p.see("invoice-1042.pdf")
		p.fill("Reply", "Your invoice")
		p.click("button", "Send")
		apptest.Eventually(t, 10*time.Second, "the document at the simulator", func() bool {
			for _, m := range f.Sim.Messages(platformsim.MessageFilter{To: dana}) {
				if m.Type == "document" && strings.Contains(string(m.Body), "invoice-1042.pdf") {
					return true
				}
			}
			return false
		})
		p.seeRole("button", "Download invoice-1042.pdf")
		p.see("Your invoice")
		p.shot("inbox")
		p.prefersDark(true)
		p.axe("inbox, dark")
		p.shot("inbox-dark")
		p.prefersDark(false)
	})

	t.Run("a canned response after /, the shortcuts, and only templates outside the window", func(t *testing.T) {
		p.in(t)
		f.Do("POST", "/api/canned-responses", map[string]any{"name": "Shipping update", "shortcut": "shipping",
			"content": "Your parcel is with the carrier; tracking follows by email.", "category": "support"}, admin).Expect(t, 201)
		p.fill("Reply", "/ship")
		p.see("/shipping Shipping update")
		p.axe("canned responses")
		p.do("choose the canned response", chromedp.KeyEvent("\r"))
		// trimmed: DevTools sends Enter's character as an event of its own,
		// which the page's preventDefault on keydown cannot stop as it
		// stops a real key's.
		p.waitUntil("the canned text in the box", `labelled('Reply').value.trim() === 'Your parcel is with the carrier; tracking follows by email.'`)
		p.fill("Reply", "")
		p.do("leave the box", chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
		p.do("Alt+R", chromedp.KeyEvent("r", chromedp.KeyModifiers(chromedp.ModifierAlt)))
		p.waitUntil("the reply box focused", `document.activeElement === labelled('Reply')`)

		// Eli last wrote two days ago: Alt+↓ opens his conversation, where
		// only a template can be sent.
		f.DB.Exec(`UPDATE contacts SET last_inbound_at = now() - interval '2 days' WHERE phone_number = ?`, "+"+eli)
		tmpl := f.SeedTemplate(f.OrgID, f.AccountID, "order_update", "Hi {{1}}, your order {{2}} is on its way", false)
		p.do("Alt+ArrowDown", chromedp.KeyEvent(kb.ArrowDown, chromedp.KeyModifiers(chromedp.ModifierAlt)))
		p.see("Thanks, all good!")
		p.see("Window closed")
		p.see("only templates can be sent")
		p.shot("window-closed")
		if p.has("button", "Send") || eval[bool](p, `!!labelled('Reply')`) {
			t.Fatal("free-form sending offered outside the window")
		}
		p.click("button", "Send a template")
		p.seeRole("heading", "Send a template")
		p.fill("Body {{1}}", "Eli")
		p.fill("Body {{2}}", "A-1042")
		p.axe("template dialog")
		p.submitDialog()
		p.see("Template " + tmpl.Name + " queued.")
		apptest.Eventually(t, 10*time.Second, "the template at the simulator", func() bool {
			for _, m := range f.Sim.Messages(platformsim.MessageFilter{To: eli}) {
				if m.Type == "template" && strings.Contains(string(m.Body), "A-1042") {
					return true
				}
			}
			return false
		})
		p.see("Hi Eli, your order A-1042 is on its way")
	})

	t.Run("an agent without contacts:read sees only their own conversations", func(t *testing.T) {
		f.Do("POST", "/api/roles", map[string]any{"name": "Desk", "permissions": []string{"messages:read", "messages:create"}}, admin).Expect(t, 201)
		desk := f.CreateUser(admin, "desk@x.com", "Desk")
		f.Do("PUT", "/api/contacts/"+danaID+"/assign", map[string]any{"user_id": desk.User.ID}, admin).Expect(t, 200)
		d := b.newPage(t, "desk")
		d.open("/console/")
		signIn(d, "desk@x.com", "password-123", "User desk@x.com")
		d.click("link", "Inbox")
		d.see("Your invoice")
		if eval[bool](d, `pageText().includes('Eli Brandt')`) {
			t.Fatal("the desk sees Eli's conversation")
		}
		d.open("/console/inbox?c=" + danaID)
		d.see("Yes! It left our warehouse this morning.")
		var eliID string
		f.DB.Raw(`SELECT id FROM contacts WHERE phone_number = ?`, "+"+eli).Scan(&eliID)
		before := len(f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"}))
		d.open("/console/inbox?c=" + eliID)
		d.see("contact not found")
		if d.has("heading", "Conversation") {
			t.Fatal("the desk opened Eli's conversation")
		}
		d.axe("desk's inbox")
		if n := len(f.Sim.Requests(platformsim.RequestFilter{Method: "POST", Path: "/messages"})); n != before {
			t.Fatalf("opening Eli's conversation reached the provider (%d requests)", n-before)
		}
	})
}

// openConversation clicks the conversation whose row starts with name (a
// row's name is its name, time, last message and unread count).
func openConversation(p *page, name string) {
	p.t.Helper()
	expr := `[...document.querySelectorAll('button')].find((b) => shown(b) && norm(b.textContent).startsWith(` + js(name) + `))`
	p.waitUntil("the conversation "+name, "!!"+expr)
	if !eval[bool](p, `(() => { const b = `+expr+`; if (b) b.click(); return !!b })()`) {
		p.fatalf("%s: no conversation %s", p.name, name)
	}
}
