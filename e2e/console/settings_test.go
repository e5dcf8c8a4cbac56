package console

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"wharf/internal/apptest"
)

// TestConsoleSettings drives the settings page: the organization's
// timezone, date format and opt-out keywords saved, and a refusal of the API
// shown next to the form with nothing changed; hold music uploaded when the
// server has ffmpeg (and the upload off with its reason when it has not);
// an agent, who may not read the settings, changing their own password.
func TestConsoleSettings(t *testing.T) {
	requireBrowser(t)
	f := apptest.NewFixture(t, nil, nil)
	admin := f.Admin.Auth()
	b := startBrowser(t, f.Server.URL)
	p := b.newPage(t, "admin")
	p.open("/console/")
	signIn(p, apptest.AdminEmail, apptest.AdminPassword, adminName)
	type settings struct {
		Settings struct {
			Timezone       string   `json:"timezone"`
			DateFormat     string   `json:"date_format"`
			OptOutKeywords []string `json:"opt_out_keywords"`
			OptInKeywords  []string `json:"opt_in_keywords"`
			OptOutConfirm  string   `json:"opt_out_confirmation"`
			HoldMusicFile  string   `json:"hold_music_file"`
		} `json:"settings"`
	}
	read := func() settings {
		var s settings
		f.Do("GET", "/api/org/settings", nil, admin).Expect(t, 200).Into(t, &s)
		return s
	}

	t.Run("saved; a refusal changes nothing", func(t *testing.T) {
		p.in(t)
		p.click("link", "Settings")
		p.seeRole("heading", "Settings")
		p.waitUntil("the settings loaded", `!!labelled('Timezone') && labelled('Timezone').value !== ''`)
		p.fill("Timezone", "Europe/Paris")
		p.choose("Date format", "DD/MM/YYYY")
		p.fill("Opt-out keywords", "STOP, HALT")
		p.fill("Opt-out confirmation", "You will get no more offers.")
		p.axe("settings")
		p.click("button", "Save settings")
		p.see("Settings saved.")
		s := read()
		if s.Settings.Timezone != "Europe/Paris" || s.Settings.DateFormat != "DD/MM/YYYY" ||
			!slices.Equal(s.Settings.OptOutKeywords, []string{"STOP", "HALT"}) || s.Settings.OptOutConfirm != "You will get no more offers." {
			t.Fatalf("saved settings %+v", s.Settings)
		}
		p.shot("settings")
		// A word in both lists is refused; nothing changes.
		p.fill("Opt-in keywords", "START, HALT")
		p.fill("Timezone", "Asia/Tokyo")
		p.click("button", "Save settings")
		p.seeRole("alert", "")
		p.waitUntil("the refusal", `[...document.querySelectorAll('[role=alert]')].some((e) => /HALT/.test(e.textContent))`)
		if s := read(); s.Settings.Timezone != "Europe/Paris" || slices.Contains(s.Settings.OptInKeywords, "HALT") {
			t.Fatalf("a refused save changed %+v", s.Settings)
		}
	})

	t.Run("hold music", func(t *testing.T) {
		p.in(t)
		p.open("/console/settings")
		if _, err := exec.LookPath("ffmpeg"); err != nil {
			p.see("Audio uploads are off: the server has no ffmpeg")
			if !eval[bool](p, `labelled('Hold music').disabled`) {
				t.Fatal("the hold music upload is offered without ffmpeg")
			}
			return
		}
		wav := filepath.Join(t.TempDir(), "hold.wav")
		if out, err := exec.Command("ffmpeg", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1",
			wav).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v %s", err, out)
		}
		p.upload("Hold music", wav)
		p.waitUntil("the upload's notice", `/Hold music uploaded \(\d+ KB, audio\/ogg\)\./.test(pageText())`)
		if s := read(); s.Settings.HoldMusicFile == "" {
			t.Fatal("no hold music file after the upload")
		}
	})

	t.Run("an agent changes their own password", func(t *testing.T) {
		f.CreateUser(admin, "agent@wharf.test", "Agent")
		a := b.newPage(t, "agent")
		a.open("/console/")
		signIn(a, "agent@wharf.test", "password-123", "User agent@wharf.test")
		a.click("link", "Settings")
		a.seeRole("heading", "Your password")
		if a.has("button", "Save settings") || eval[bool](a, `!!labelled('Timezone')`) {
			t.Fatal("an agent is shown the organization's settings")
		}
		a.fill("Current password", "wrong-password")
		a.fill("New password", "password-456")
		a.click("button", "Change password")
		a.seeRole("alert", "")
		a.fill("Current password", "password-123")
		a.fill("New password", "password-456")
		a.click("button", "Change password")
		a.see("Password changed.")
		f.Do("POST", "/api/auth/login", map[string]any{"email": "agent@wharf.test", "password": "password-456"}, nil).Expect(t, 200)
	})
}
