package orgsettings_test

import (
	"context"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"wharf/internal/infra/apperr"
	"wharf/internal/infra/storage"
	"wharf/internal/orgsettings"
	"wharf/internal/testenv"
	"wharf/internal/testfactory"
	"wharf/models"
)

func ptr[T any](v T) *T { return &v }

func TestSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		f     *testfactory.Factory
		org   *testfactory.Org
		store *storage.Local
	}
	setup := func(t *testing.T) (*orgsettings.Service, *testBundle) {
		t.Helper()
		f := testfactory.New(t, testenv.DB(t))
		store, err := storage.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return orgsettings.NewService(f.DB, f.Box, store, nil), &testBundle{f: f, org: f.Org(), store: store}
	}

	t.Run("UnsetValuesAreTheServerDefaults", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		name, st, err := svc.Get(ctx, bundle.org.ID)
		if err != nil || name != bundle.org.Name || !reflect.DeepEqual(st, orgsettings.Defaults) {
			t.Fatalf("settings %q %+v, %v; want the defaults", name, st, err)
		}
		_, _, err = svc.Get(ctx, uuid.New())
		testfactory.WantError(t, err, apperr.NotFound, "organization not found")
		testfactory.WantError(t, svc.Apply(ctx, uuid.New(), orgsettings.Update{MaskPhoneNumbers: ptr(true)}), apperr.NotFound, "organization not found")
	})

	t.Run("ApplyValidatesAndIgnoresWhatTheSpecIgnores", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		for _, c := range []struct {
			u   orgsettings.Update
			msg string
		}{
			{orgsettings.Update{Timezone: ptr("Mars/Olympus")}, "timezone must be an IANA time zone name"},
			{orgsettings.Update{Timezone: ptr("Local")}, "timezone must be an IANA time zone name"},
			{orgsettings.Update{DateFormat: ptr("YY-MM-DD")}, "date_format must be one of YYYY-MM-DD"},
			{orgsettings.Update{MaxCallDuration: ptr(86401)}, "max_call_duration must be at most 86400 seconds"},
			{orgsettings.Update{TransferTimeoutSecs: ptr(3601)}, "transfer_timeout_secs must be at most 3600 seconds"},
			{orgsettings.Update{Name: ptr(strings.Repeat("n", 101))}, "name must be at most 100 characters"},
			{orgsettings.Update{HoldMusicFile: ptr("../../etc/passwd")}, "hold_music_file must name a file uploaded"},
			{orgsettings.Update{RingbackFile: ptr("ringback-" + uuid.NewString() + ".ogg")}, "ringback_file must name a file uploaded"},
		} {
			testfactory.WantError(t, svc.Apply(ctx, bundle.org.ID, c.u), apperr.Invalid, c.msg)
		}
		// Empty names, empty secrets and non-positive durations are
		// ignored, as the spec says; nothing above changed anything.
		err := svc.Apply(ctx, bundle.org.ID, orgsettings.Update{Name: ptr(" "), ProviderAppSecret: ptr(""), MaxCallDuration: ptr(0),
			TransferTimeoutSecs: ptr(-5)})
		if err != nil {
			t.Fatal(err)
		}
		if name, st, _ := svc.Get(ctx, bundle.org.ID); name != bundle.org.Name || !reflect.DeepEqual(st, orgsettings.Defaults) {
			t.Errorf("settings %q %+v: want them unchanged", name, st)
		}
	})

	t.Run("ConcurrentUpdatesOfDifferentFieldsBothSurvive", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		updates := []orgsettings.Update{
			{Timezone: ptr("Europe/Paris")}, {DateFormat: ptr("DD/MM/YYYY")}, {MaskPhoneNumbers: ptr(true)},
			{MaxCallDuration: ptr(600)}, {ProviderAppID: ptr(" 1234 ")}, {Name: ptr(" Renamed ")},
		}
		var wg sync.WaitGroup
		for _, u := range updates {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := svc.Apply(ctx, bundle.org.ID, u); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		name, st, err := svc.Get(ctx, bundle.org.ID)
		want := orgsettings.Defaults
		want.Timezone, want.DateFormat, want.MaskPhoneNumbers, want.MaxCallDuration, want.ProviderAppID = "Europe/Paris", "DD/MM/YYYY", true, 600, "1234"
		if err != nil || name != "Renamed" || !reflect.DeepEqual(st, want) {
			t.Errorf("settings %q %+v, %v; want every update applied: %+v", name, st, err, want)
		}
	})

	t.Run("TheAppSecretIsSealedAndNeverReturned", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		if err := svc.Apply(ctx, bundle.org.ID, orgsettings.Update{ProviderAppSecret: ptr(" app-secret ")}); err != nil {
			t.Fatal(err)
		}
		_, st, _ := svc.Get(ctx, bundle.org.ID)
		if !st.HasProviderAppSecret || strings.Contains(fmt.Sprintf("%+v", st), "app-secret") {
			t.Errorf("settings %+v: want has_provider_app_secret and no secret", st)
		}
		var org models.Organization
		bundle.f.DB.Take(&org, "id = ?", bundle.org.ID)
		if strings.Contains(string(org.ProviderAppSecretEnc), "app-secret") || strings.Contains(string(org.Settings), "app-secret") {
			t.Error("the app secret is stored in clear")
		}
		if got, err := svc.ProviderAppSecret(ctx, bundle.org.ID); err != nil || got != "app-secret" {
			t.Errorf("decrypted secret %q, %v", got, err)
		}
		if got, err := svc.ProviderAppSecret(ctx, bundle.f.Org().ID); err != nil || got != "" {
			t.Errorf("secret of an organization without one: %q, %v", got, err)
		}
	})

	t.Run("AudioSettingsNameTheOrganizationsOwnUploads", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		name := orgsettings.HoldMusic + "-" + uuid.NewString() + ".ogg"
		other := bundle.f.Org()
		if _, err := bundle.store.Put(ctx, fmt.Sprintf("orgs/%s/audio/%s", other.ID, name), strings.NewReader("ogg")); err != nil {
			t.Fatal(err)
		}
		testfactory.WantError(t, svc.Apply(ctx, bundle.org.ID, orgsettings.Update{HoldMusicFile: &name}), apperr.Invalid, "hold_music_file must name a file")
		if err := svc.Apply(ctx, other.ID, orgsettings.Update{HoldMusicFile: &name}); err != nil {
			t.Fatalf("the owner's own upload: %v", err)
		}
		// A hold music file is not a ringback tone.
		testfactory.WantError(t, svc.Apply(ctx, other.ID, orgsettings.Update{RingbackFile: &name}), apperr.Invalid, "ringback_file must name a file")
		if err := svc.Apply(ctx, other.ID, orgsettings.Update{HoldMusicFile: ptr("")}); err != nil {
			t.Fatalf("clearing: %v", err)
		}
		_, err := svc.UploadAudio(ctx, other.ID, "doorbell", strings.NewReader("x"))
		testfactory.WantError(t, err, apperr.Invalid, "type must be hold_music or ringback")
		_, err = svc.UploadAudio(ctx, other.ID, orgsettings.Ringback, strings.NewReader(""))
		testfactory.WantError(t, err, apperr.Invalid, "file is empty")
		_, err = svc.UploadAudio(ctx, other.ID, orgsettings.Ringback, strings.NewReader(strings.Repeat("x", orgsettings.MaxAudioUpload+1)))
		testfactory.WantError(t, err, apperr.Invalid, "file is larger than 5 MB")
	})

	t.Run("OpenAudioReadsOnlyTheOrganizationsOwnUploads", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		name := orgsettings.Ringback + "-" + uuid.NewString() + ".ogg"
		other := bundle.f.Org()
		if _, err := bundle.store.Put(ctx, fmt.Sprintf("orgs/%s/audio/%s", bundle.org.ID, name), strings.NewReader("ogg data")); err != nil {
			t.Fatal(err)
		}
		r, err := svc.OpenAudio(ctx, bundle.org.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		_ = r.Close()
		if err != nil || string(data) != "ogg data" {
			t.Fatalf("read %q, %v", data, err)
		}
		for org, n := range map[uuid.UUID]string{
			other.ID:      name,                                                    // another organization's file
			bundle.org.ID: orgsettings.HoldMusic + "-" + uuid.NewString() + ".ogg", // not stored
		} {
			_, err := svc.OpenAudio(ctx, org, n)
			testfactory.WantError(t, err, apperr.NotFound, "audio file not found")
		}
		for _, n := range []string{"", "../" + other.ID.String() + "/audio/" + name, "ringback.ogg", name + "/x", "/etc/passwd"} {
			_, err := svc.OpenAudio(ctx, bundle.org.ID, n)
			testfactory.WantError(t, err, apperr.NotFound, "audio file not found")
		}
	})

	t.Run("MaskingAndSelfRegistrationFollowTheSettings", func(t *testing.T) {
		t.Parallel()
		svc, bundle := setup(t)
		m, err := svc.Masker(ctx, bundle.org.ID)
		if err != nil || m.Phone("+15550104000") != "+15550104000" || m.Name("+1 555 010 4000") != "+1 555 010 4000" {
			t.Fatalf("unmasked by default: %v", err)
		}
		open, err := orgsettings.SelfRegistrationOpen(ctx, bundle.f.DB, bundle.org.ID)
		if err != nil || !open {
			t.Errorf("self-registration of an organization without the setting: %v, %v; want open (the default)", open, err)
		}
		if err := svc.Apply(ctx, bundle.org.ID, orgsettings.Update{MaskPhoneNumbers: ptr(true), SelfRegistrationEnabled: ptr(false)}); err != nil {
			t.Fatal(err)
		}
		// A name that is a phone number (a contact saved under its number)
		// is masked too; other names show.
		m, _ = svc.Masker(ctx, bundle.org.ID)
		if m.Phone("+15550104000") == "+15550104000" || m.Name("+1 555 010 4000") == "+1 555 010 4000" || m.Name("Ada Lovelace") != "Ada Lovelace" {
			t.Errorf("masking on: %q, %q, %q", m.Phone("+15550104000"), m.Name("+1 555 010 4000"), m.Name("Ada Lovelace"))
		}
		if open, _ = orgsettings.SelfRegistrationOpen(ctx, bundle.f.DB, bundle.org.ID); open {
			t.Error("self-registration still open")
		}
		_, err = orgsettings.SelfRegistrationOpen(ctx, bundle.f.DB, uuid.New())
		testfactory.WantError(t, err, apperr.NotFound, "organization not found")
	})
}
