package console

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"wharf/internal/apptest"
	"wharf/models"
	"wharf/platformsim"
)

// TestConsoleDashboard: three customers write in through the provider's
// simulator and get an answer each (one answer fails at the provider), one
// is handed to the agents' queue; the admin opens the dashboard from the
// overview and reads those figures on the fixed tiles (checked against
// GET /api/analytics/overview); adds a bar chart and a number widget
// through the forms, sees them drawn (a canvas painted and named by its
// summary), moves one before the other, turns the chart into a pie,
// removes the number after a confirmation; the server holds each change
// (GET /api/widgets). A colleague's shared widget is shown marked, without
// controls; a user with analytics:read only is not offered sharing; an
// agent (no analytics:read) sees neither the page nor a link to it; the
// tiles follow a new message without a reload.
func TestConsoleDashboard(t *testing.T) {
	requireBrowser(t)
	failing := "15550008003"
	f := apptest.NewFixture(t, nil, func(c *platformsim.Config) { c.FailRecipients = map[string]int{failing: 131026} })
	f.StartWorker()
	a := f.Admin.Auth()

	// Three customers write (one of them twice); each gets an answer.
	contacts := map[string]string{}
	for _, from := range []string{"15550008001", "15550008002", failing} {
		f.Incoming(platformsim.Incoming{From: from, ProfileName: "Customer " + from[len(from)-1:], Type: "text", Text: "Hello"})
	}
	f.Incoming(platformsim.Incoming{From: "15550008001", Type: "text", Text: "Are you there?"})
	apptest.Eventually(t, 15*time.Second, "the customers' messages stored", func() bool {
		var n int64
		f.DB.Model(&models.Message{}).Where("direction = 'incoming'").Count(&n)
		return n == 4
	})
	for _, from := range []string{"15550008001", "15550008002", failing} {
		var c models.Contact
		if err := f.DB.Where("phone_number = ?", "+"+from).Take(&c).Error; err != nil {
			t.Fatal(err)
		}
		contacts[from] = c.ID.String()
		f.Do("POST", "/api/contacts/"+c.ID.String()+"/messages", map[string]any{"type": "text", "text": "Thanks for writing"}, a).Expect(t, 201)
	}
	apptest.Eventually(t, 20*time.Second, "the answers read, and one failed", func() bool {
		var read, failed int64
		f.DB.Model(&models.Message{}).Where("direction = 'outgoing' AND status = 'read'").Count(&read)
		f.DB.Model(&models.Message{}).Where("direction = 'outgoing' AND status = 'failed'").Count(&failed)
		return read == 2 && failed == 1
	})
	f.Do("POST", "/api/chatbot/transfers", map[string]any{"contact_id": contacts["15550008002"]}, a).Expect(t, 201)

	type widget struct {
		ID           string `json:"id"`
		Name         string `json:"name"`
		DisplayType  string `json:"display_type"`
		ChartType    string `json:"chart_type"`
		GroupByField string `json:"group_by_field"`
		DisplayOrder int    `json:"display_order"`
		IsShared     bool   `json:"is_shared"`
		Filters      []struct {
			Field, Operator, Value string
		} `json:"filters"`
	}
	list := func() []widget {
		var out struct {
			Widgets []widget `json:"widgets"`
		}
		f.Do("GET", "/api/widgets", nil, a).Expect(t, 200).Into(t, &out)
		return out.Widgets
	}
	names := func() string {
		var s []string
		for _, w := range list() {
			s = append(s, w.Name)
		}
		return strings.Join(s, ", ")
	}

	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)

	t.Run("the fixed tiles show the day's figures", func(t *testing.T) {
		p.in(t)
		p.seeRole("link", "Dashboard")
		p.click("link", "Open the dashboard")
		p.seeRole("heading", "Dashboard")
		var o struct {
			MessagesInToday     int     `json:"messages_in_today"`
			MessagesOutToday    int     `json:"messages_out_today"`
			ActiveConversations int     `json:"active_conversations"`
			WaitingTransfers    int     `json:"waiting_transfers"`
			DeliveryRate        float64 `json:"delivery_rate"`
			ReadRate            float64 `json:"read_rate"`
		}
		f.Do("GET", "/api/analytics/overview", nil, a).Expect(t, 200).Into(t, &o)
		if o.MessagesInToday != 4 || o.MessagesOutToday != 3 || o.ActiveConversations != 3 || o.WaitingTransfers != 1 ||
			o.DeliveryRate != 66.67 || o.ReadRate != 66.67 {
			t.Fatalf("overview %+v", o)
		}
		for _, s := range []string{"Messages in today 4", "Messages out today 3", "Active conversations 3", "Waiting transfers 1",
			"Campaigns running 0", "Delivery rate, 7 days 66.67 % 2 of 3 sent", "Read rate, 7 days 66.67 % 2 of 3 sent"} {
			p.see(s)
		}
		p.see("No widget yet")
		p.axe("dashboard, no widget")
	})

	t.Run("widgets added through the form are drawn and stored", func(t *testing.T) {
		p.in(t)
		p.waitUntil("Add a widget enabled", `!byRole('button', 'Add a widget').disabled`)
		p.click("button", "Add a widget")
		p.seeRole("heading", "Add a widget")
		p.fill("Name", "Messages by status")
		p.choose("Kind", "Bar chart")
		p.choose("Data source", "Messages")
		p.choose("Group by", "Status")
		p.axe("the widget form")
		p.shot("widget-form")
		p.submitDialog()
		p.see("Widget Messages by status added.")
		// Drawn: the canvas is named by its summary and has painted pixels.
		p.waitUntil("the bar chart drawn", `(() => {
  const c = [...document.querySelectorAll('canvas[role=img]')].find((c) => (c.getAttribute('aria-label') || '').startsWith('Bar chart of Messages by status: '));
  if (!c || !c.width) return false;
  const px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  for (let i = 3; i < px.length; i += 4) if (px[i] > 0) return true;
  return false;
})()`)
		label := eval[string](p, `document.querySelector('canvas[role=img]').getAttribute('aria-label')`)
		if !strings.Contains(label, "read 2") || !strings.Contains(label, "failed 1") {
			t.Fatalf("the chart's summary %q", label)
		}

		p.click("button", "Add a widget")
		p.fill("Name", "Inbound messages")
		p.choose("Kind", "Number")
		p.choose("Data source", "Messages")
		p.click("button", "Add a filter")
		p.choose("Filter 1 field", "Direction")
		p.choose("Filter 1 operator", "Equals")
		p.fill("Filter 1 value", "incoming")
		p.shot("widget-form-filter")
		p.submitDialog()
		p.see("Widget Inbound messages added.")
		p.see("Up 100 % on the previous period (0)")

		ws := list()
		if len(ws) != 2 || ws[0].Name != "Messages by status" || ws[0].DisplayType != "chart" || ws[0].ChartType != "bar" || ws[0].GroupByField != "status" ||
			ws[1].Name != "Inbound messages" || ws[1].DisplayType != "number" || len(ws[1].Filters) != 1 || ws[1].Filters[0].Value != "incoming" {
			t.Fatalf("the server holds %+v", ws)
		}
		p.waitUntil("the number", `[...document.querySelectorAll('h3')].some((h) => norm(h.textContent) === 'Inbound messages' && (() => { const x = norm(h.closest('section').innerText); return x.includes('Inbound messages 4 ') && x.includes('Up 100 %') })())`)
	})

	t.Run("rearranged, edited, removed after a confirmation", func(t *testing.T) {
		p.in(t)
		p.click("button", "Move earlier Inbound messages")
		p.see("Inbound messages moved earlier: now 1 of 2.")
		if n := names(); n != "Inbound messages, Messages by status" {
			t.Fatalf("after the move the server's order is %s", n)
		}
		if first := eval[string](p, `norm(document.querySelector('#main h3, main h3').textContent)`); first != "Inbound messages" {
			t.Fatalf("the page shows %q first", first)
		}

		p.click("button", "Edit Messages by status")
		p.seeRole("heading", "Edit widget Messages by status")
		p.choose("Kind", "Pie chart")
		p.submitDialog()
		p.see("Widget Messages by status saved.")
		p.waitUntil("the pie", `!!document.querySelector('canvas[role=img][aria-label^="Pie chart of Messages by status: "]')`)
		if ws := list(); ws[1].ChartType != "pie" || ws[1].GroupByField != "status" {
			t.Fatalf("after the edit %+v", ws[1])
		}
		p.axe("dashboard with widgets")
		p.reload() // without the notices, for the picture
		p.waitUntil("the pie", `!!document.querySelector('canvas[role=img][aria-label^="Pie chart of Messages by status: "]')`)
		p.shot("dashboard")
		p.prefersDark(true)
		p.shot("dashboard-dark")
		p.axe("dashboard, dark")
		p.prefersDark(false)

		p.click("button", "Remove Inbound messages")
		p.seeRole("heading", "Remove widget Inbound messages?")
		p.click("button", "Keep it")
		p.waitUntil("the dialog closed", `!byRole('heading', 'Remove widget Inbound messages?')`)
		if n := names(); n != "Inbound messages, Messages by status" {
			t.Fatalf("kept, yet the server has %s", n)
		}
		p.click("button", "Remove Inbound messages")
		p.seeRole("heading", "Remove widget Inbound messages?")
		p.click("button", "Remove widget")
		p.see("Widget Inbound messages removed.")
		if n := names(); n != "Messages by status" {
			t.Fatalf("after the removal the server has %s", n)
		}
	})

	t.Run("a colleague's shared widget is marked; sharing and the page follow the permissions", func(t *testing.T) {
		manager := f.CreateUser(a, "mia@wharf.test", "Manager")
		f.Do("POST", "/api/widgets", map[string]any{"name": "Messages per day", "data_source": "messages", "metric": "count",
			"display_type": "chart", "chart_type": "line", "is_shared": true}, manager.Auth()).Expect(t, 201)
		p.in(t)
		p.reload()
		p.seeRole("heading", "Messages per day")
		p.see("Shared by a colleague")
		if p.has("button", "Edit Messages per day") || p.has("button", "Remove Messages per day") || p.has("button", "Move later Messages per day") {
			t.Fatal("the admin is offered to change a colleague's widget")
		}
		p.waitUntil("the line chart", `!!document.querySelector('canvas[role=img][aria-label^="Line chart of Messages per day, daily from "]')`)
		// The period is in the URL: 7 days of the line chart.
		p.choose("Period", "Last 7 days")
		from, to := time.Now().UTC().AddDate(0, 0, -6).Format(time.DateOnly), time.Now().UTC().Format(time.DateOnly)
		p.waitUntil("7 days", `location.search.includes('period=7') && pageText().includes(`+js(from+" to "+to+" (UTC days)")+`) &&
  document.querySelector('canvas[aria-label^="Line chart"]').getAttribute('aria-label').startsWith(`+js("Line chart of Messages per day, daily from "+from+" to "+to+": total 7,")+`)`)
		p.waitUntil("Add a widget enabled", `!byRole('button', 'Add a widget').disabled`)
		p.shot("dashboard-shared")
		p.do("narrow window", chromedp.EmulateViewport(420, 900))
		p.shot("dashboard-narrow")
		p.do("wide window", chromedp.EmulateViewport(1280, 860))

		f.Do("POST", "/api/roles", map[string]any{"name": "Figures", "permissions": []string{"analytics:read"}}, a).Expect(t, 201)
		v := signInAs(t, b, f, "viewer", "vic@wharf.test", "Figures")
		// The viewer's own table of the latest transfers.
		f.Do("POST", "/api/widgets", map[string]any{"name": "Latest transfers", "data_source": "transfers", "metric": "count",
			"display_type": "table"}, f.Login("vic@wharf.test", "password-123").Auth()).Expect(t, 201)
		v.click("link", "Dashboard")
		v.seeRole("heading", "Messages per day")
		v.see("Shared by a colleague")
		v.see("Messages in today 4")
		v.waitUntil("the table of transfers", `(() => { const c = [...document.querySelectorAll('caption')].find((c) => norm(c.textContent) === 'Latest transfers: the latest records');
  return !!c && /manual active/.test(norm(c.closest('table').innerText)) })()`)
		v.shot("dashboard-viewer")
		v.waitUntil("Add a widget enabled", `!byRole('button', 'Add a widget').disabled`)
		v.click("button", "Add a widget")
		v.seeRole("heading", "Add a widget")
		v.waitUntil("the form", `!!labelled('Name')`)
		if eval[bool](v, `!!labelled('Share with everyone in the organization')`) {
			t.Fatal("a user without analytics:share is offered to share")
		}
		v.axe("dashboard of a viewer")

		ag := signInAs(t, b, f, "agent", "abe@wharf.test", "Agent")
		ag.seeRole("link", "Inbox")
		if ag.has("link", "Dashboard") || ag.has("link", "Open the dashboard") {
			t.Fatal("an agent is shown a link to the dashboard")
		}
		ag.open("/console/dashboard")
		ag.seeRole("heading", "You cannot open this page")
		if ag.has("button", "Add a widget") {
			t.Fatal("an agent is shown Add a widget")
		}

		// The admin's tiles follow a new message without a reload.
		p.see("Messages in today 4")
		f.Incoming(platformsim.Incoming{From: "15550008002", Type: "text", Text: "One more thing"})
		p.see("Messages in today 5")
	})
}
