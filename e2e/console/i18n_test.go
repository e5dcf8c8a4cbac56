package console

import (
	"testing"

	"wharf/internal/apptest"
)

// TestConsoleSpanish: a signed-in admin chooses Español in the navigation's
// foot; the shell, the campaigns list and a campaign of 10,000 recipients
// speak Spanish (its buttons, its counters, numbers grouped the Spanish
// way, its notices), the document says lang="es", a reload keeps the
// choice, and English comes back when chosen. The page stays accessible
// and asks nothing outside its origin (newPage's cleanup checks that).
func TestConsoleSpanish(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, map[string]string{"CAMPAIGN_COUNTER_INTERVAL": "1s", "CAMPAIGN_SWEEP_INTERVAL": "1s"}, nil)
	f.StartWorker()
	// 10 messages a second: the campaign is still sending when the page
	// pauses it.
	f.Do("PUT", "/api/accounts/"+f.AccountID, map[string]any{"messaging_tier": "TIER_1K"}, f.Admin.Auth()).Expect(t, 200)
	tmpl := f.SeedTemplate(f.OrgID, f.AccountID, "order_update", "Hi {{1}}, your order {{2}} shipped", false)
	c := createCampaign(t, f, "Rebajas de primavera", tmpl.ID.String(), 10_000)

	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	lang := func() string { return eval[string](p, "document.documentElement.lang") }

	t.Run("choosing Español turns the shell Spanish", func(t *testing.T) {
		p.in(t)
		if got := lang(); got != "en" {
			t.Fatalf("before the choice the document's lang is %q", got)
		}
		p.choose("Language", "Español")
		p.seeRole("link", "Campañas")
		p.seeRole("link", "Resumen")
		if p.has("link", "Campaigns") {
			p.fatalf("the navigation still shows Campaigns")
		}
		if got := lang(); got != "es" {
			t.Fatalf("after choosing Español the document's lang is %q", got)
		}
	})

	t.Run("the campaigns list in Spanish", func(t *testing.T) {
		p.in(t)
		p.click("link", "Campañas")
		p.seeRole("heading", "Campañas")
		p.seeRole("link", "Nueva campaña")
		p.seeRole("link", "Rebajas de primavera")
		p.see("0 enviados · 0 entregados · 0 leídos · 0 fallidos de 10.000")
		p.see("Borrador")
		p.choose("Estado", "Pausada")
		p.see("Ninguna campaña en estado «pausada».")
		p.choose("Estado", "Todos los estados")
		p.seeRole("link", "Rebajas de primavera")
		p.axe("campaigns list, Spanish")
		p.shot("es-campaigns")
	})

	t.Run("a campaign in Spanish, started and paused", func(t *testing.T) {
		p.in(t)
		p.click("link", "Rebajas de primavera")
		p.seeRole("heading", "Rebajas de primavera")
		p.seeRole("heading", "Progreso")
		p.see("completado · 0 de 10.000 destinatarios")
		for _, name := range []string{"Pendientes", "Enviados", "Entregados", "Leídos", "Fallidos", "Desconocidos", "Omitidos (dados de baja)"} {
			p.see(name)
		}
		p.waitUntil("10.000 pending", `/Pendientes\s*10\.000/.test(pageText())`)
		p.seeRole("button", "Enviar una prueba")
		p.seeRole("button", "Descargar destinatarios (CSV)")
		p.choose("Estado del destinatario", "Pendiente")
		p.see("10.000 destinatarios")
		p.click("button", "Iniciar la campaña")
		p.see("Campaña iniciada.")
		p.see("Se actualiza en directo.")
		p.click("button", "Pausar la campaña")
		p.see("Campaña pausada.")
		p.seeRole("button", "Reanudar la campaña")
		p.see("Pausada")
		if got := campaignNow(t, f, c.ID); got.Status != "paused" {
			t.Fatalf("after the Spanish pause the campaign is %s", got.Status)
		}
		if got := lang(); got != "es" {
			t.Fatalf("on the campaign page the document's lang is %q", got)
		}
		p.axe("campaign page, Spanish")
		p.shot("es-campaign")
	})

	t.Run("a reload keeps Spanish", func(t *testing.T) {
		p.in(t)
		p.reload()
		p.seeRole("heading", "Rebajas de primavera")
		p.seeRole("link", "Campañas")
		p.seeRole("button", "Reanudar la campaña")
		p.seeRole("button", "Cancelar la campaña")
		if got := lang(); got != "es" {
			t.Fatalf("after a reload the document's lang is %q", got)
		}
	})

	t.Run("choosing English brings English back", func(t *testing.T) {
		p.in(t)
		p.choose("Idioma", "English")
		p.seeRole("link", "Campaigns")
		p.seeRole("button", "Resume campaign")
		p.see("of 10,000 recipients")
		p.seeRole("heading", "Progress")
		if p.has("link", "Campañas") {
			p.fatalf("the navigation still shows Campañas")
		}
		if got := lang(); got != "en" {
			t.Fatalf("after choosing English the document's lang is %q", got)
		}
	})
}
