package api_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"wharf/internal/apptest"
	"wharf/internal/infra/secrets"
	"wharf/models"
)

type fullSettings struct {
	Name     string `json:"name"`
	Settings struct {
		MaskPhoneNumbers     bool   `json:"mask_phone_numbers"`
		Timezone             string `json:"timezone"`
		DateFormat           string `json:"date_format"`
		CallingEnabled       bool   `json:"calling_enabled"`
		MaxCallDuration      int    `json:"max_call_duration"`
		TransferTimeoutSecs  int    `json:"transfer_timeout_secs"`
		HoldMusicFile        string `json:"hold_music_file"`
		RingbackFile         string `json:"ringback_file"`
		ProviderAppID        string `json:"provider_app_id"`
		ProviderConfigID     string `json:"provider_config_id"`
		HasProviderAppSecret bool   `json:"has_provider_app_secret"`
	} `json:"settings"`
}

func TestSettingsDefaultsAndBothFamilies(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	var s fullSettings
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	st := s.Settings
	if s.Name != "Bootstrap Org" || st.MaskPhoneNumbers || st.Timezone != "UTC" || st.DateFormat != "YYYY-MM-DD" || st.CallingEnabled ||
		st.MaxCallDuration != 3600 || st.TransferTimeoutSecs != 60 || st.HoldMusicFile != "" || st.RingbackFile != "" || st.HasProviderAppSecret {
		t.Fatalf("defaults %+v", s)
	}

	// The short family writes the same values.
	var short struct {
		Name     string `json:"name"`
		Settings struct {
			MaskPhoneNumbers bool   `json:"mask_phone_numbers"`
			Timezone         string `json:"timezone"`
			DateFormat       string `json:"date_format"`
		} `json:"settings"`
	}
	e.Do("PUT", "/api/organizations/settings", map[string]any{"name": "Renamed", "mask_phone_numbers": true, "timezone": "Europe/Paris", "date_format": "DD/MM/YYYY"}, admin.Auth()).
		Expect(t, 200).Into(t, &short)
	if short.Name != "Renamed" || !short.Settings.MaskPhoneNumbers || short.Settings.Timezone != "Europe/Paris" || short.Settings.DateFormat != "DD/MM/YYYY" {
		t.Fatalf("short answer %+v", short)
	}
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	if s.Name != "Renamed" || !s.Settings.MaskPhoneNumbers || s.Settings.Timezone != "Europe/Paris" {
		t.Fatalf("long family does not see the change: %+v", s)
	}

	// Long family: the spec's "ignored" rules.
	r := e.Do("PUT", "/api/org/settings", map[string]any{"name": "", "calling_enabled": true, "max_call_duration": 0, "transfer_timeout_secs": -5,
		"provider_app_id": "app-1", "provider_config_id": "cfg-1"}, admin.Auth()).Expect(t, 200)
	if !strings.Contains(string(r.Body), `"message"`) {
		t.Fatalf("PUT answer %s", r.Body)
	}
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	if s.Name != "Renamed" || !s.Settings.CallingEnabled || s.Settings.MaxCallDuration != 3600 || s.Settings.TransferTimeoutSecs != 60 ||
		s.Settings.ProviderAppID != "app-1" || s.Settings.ProviderConfigID != "cfg-1" {
		t.Fatalf("after PUT %+v", s)
	}
	e.Do("PUT", "/api/org/settings", map[string]any{"max_call_duration": 120, "transfer_timeout_secs": 30}, admin.Auth()).Expect(t, 200)
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	if s.Settings.MaxCallDuration != 120 || s.Settings.TransferTimeoutSecs != 30 || !s.Settings.MaskPhoneNumbers {
		t.Fatalf("after second PUT %+v", s)
	}

	for _, bad := range []map[string]any{
		{"timezone": "Mars/Olympus"},
		{"timezone": ""},
		{"date_format": "YY"},
		{"max_call_duration": 999999},
		{"hold_music_file": "../../etc/passwd"},
		{"ringback_file": "ringback-00000000-0000-0000-0000-000000000000.ogg"},
		{"mask_phone_numbers": "yes"},
	} {
		if r := e.Do("PUT", "/api/org/settings", bad, admin.Auth()); r.Status != 400 || r.Outcome != "error" {
			t.Errorf("PUT %v: %d %s", bad, r.Status, r.Body)
		}
	}
	e.Do("PUT", "/api/organizations/settings", map[string]any{"timezone": "Nowhere"}, admin.Auth()).Expect(t, 400)
}

func TestProviderAppSecretIsEncryptedAndNeverReturned(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	const secret = "super-secret-app-value-123"
	e.Do("PUT", "/api/org/settings", map[string]any{"provider_app_secret": secret}, admin.Auth()).Expect(t, 200)
	r := e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200)
	if strings.Contains(string(r.Body), secret) || strings.Contains(string(r.Body), `"provider_app_secret"`) {
		t.Fatalf("secret leaked: %s", r.Body)
	}
	var s fullSettings
	r.Into(t, &s)
	if !s.Settings.HasProviderAppSecret {
		t.Fatal("has_provider_app_secret false")
	}
	var org models.Organization
	e.DB.Take(&org, "id = ?", admin.User.OrganizationID)
	if bytes.Contains(org.ProviderAppSecretEnc, []byte(secret)) || bytes.Contains(org.Settings, []byte(secret)) {
		t.Fatal("secret stored in plaintext")
	}
	box, _ := secrets.New(e.Cfg.EncryptionKey)
	if got, err := box.OpenString(org.ProviderAppSecretEnc); err != nil || got != secret {
		t.Fatalf("decrypt: %q %v", got, err)
	}
	// Empty is ignored: the secret stays.
	e.Do("PUT", "/api/org/settings", map[string]any{"provider_app_secret": ""}, admin.Auth()).Expect(t, 200)
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	if !s.Settings.HasProviderAppSecret {
		t.Fatal("empty secret cleared the stored one")
	}
}

// needFFmpeg skips a test that needs ffmpeg on a machine without it (audio
// uploads are an optional feature there), except where WHARF_REQUIRE_FFMPEG
// is set: .ci/run installs ffmpeg and sets it, so CI never skips these tests.
func needFFmpeg(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("ffmpeg"); err != nil && os.Getenv("WHARF_REQUIRE_FFMPEG") == "" {
		t.Skip("ffmpeg is not installed (apt-get install ffmpeg); audio upload tests skipped")
	}
}

// ffmpegMake renders a test tone in the given container with ffmpeg.
func ffmpegMake(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	needFFmpeg(t)
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("ffmpeg", append(append([]string{"-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1"}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// oggGranules returns the granule position of every Ogg page.
func oggGranules(t *testing.T, b []byte) []uint64 {
	var out []uint64
	for len(b) >= 27 {
		if string(b[:4]) != "OggS" {
			t.Fatalf("not an Ogg page")
		}
		n := int(b[26])
		size := 27 + n
		for _, l := range b[27 : 27+n] {
			size += int(l)
		}
		out = append(out, binary.LittleEndian.Uint64(b[6:14]))
		b = b[size:]
	}
	return out
}

func TestAudioUploadTranscodesToOpus(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	inputs := map[string][]byte{
		"tone.wav":  ffmpegMake(t, "tone.wav", "-ar", "44100", "-ac", "2"),
		"tone.mp3":  ffmpegMake(t, "tone.mp3", "-c:a", "libmp3lame"),
		"tone.ogg":  ffmpegMake(t, "tone.ogg", "-c:a", "libvorbis"),
		"tone.opus": ffmpegMake(t, "tone.opus", "-c:a", "libopus", "-ar", "24000"),
	}
	for name, data := range inputs {
		kind := "hold_music"
		if strings.HasSuffix(name, ".mp3") || strings.HasSuffix(name, ".opus") {
			kind = "ringback"
		}
		var out struct {
			Filename string `json:"filename"`
			Type     string `json:"type"`
			MIMEType string `json:"mime_type"`
			Size     int64  `json:"size"`
		}
		e.Upload("/api/org/audio", map[string]string{"type": kind}, "file", name, data, admin.Auth()).Expect(t, 201).Into(t, &out)
		if out.Type != kind || out.MIMEType != "audio/ogg" || out.Size == 0 || !strings.HasPrefix(out.Filename, kind+"-") {
			t.Fatalf("%s: answer %+v", name, out)
		}
		path := filepath.Join(e.Cfg.StorageDir, "orgs", admin.User.OrganizationID, "audio", out.Filename)
		stored, err := os.ReadFile(path)
		if err != nil || int64(len(stored)) != out.Size {
			t.Fatalf("%s: stored file: %v (%d bytes)", name, err, len(stored))
		}
		probe, err := exec.Command("ffprobe", "-v", "error", "-show_streams", "-of", "json", path).Output()
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Streams []struct {
				CodecName  string `json:"codec_name"`
				SampleRate string `json:"sample_rate"`
				Channels   int    `json:"channels"`
			} `json:"streams"`
		}
		_ = json.Unmarshal(probe, &p)
		if len(p.Streams) != 1 || p.Streams[0].CodecName != "opus" || p.Streams[0].SampleRate != "48000" || p.Streams[0].Channels != 1 {
			t.Fatalf("%s: transcoded stream %s", name, probe)
		}
		// One 20 ms frame (960 samples at 48 kHz) per audio page.
		g := oggGranules(t, stored)
		if len(g) < 40 {
			t.Fatalf("%s: %d pages for 1 s of audio, want ~50", name, len(g))
		}
		for i := 3; i < len(g)-1; i++ {
			if g[i]-g[i-1] != 960 {
				t.Fatalf("%s: page %d spans %d samples, want 960", name, i, g[i]-g[i-1])
			}
		}
	}
	var s fullSettings
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	if !strings.HasPrefix(s.Settings.HoldMusicFile, "hold_music-") || !strings.HasPrefix(s.Settings.RingbackFile, "ringback-") {
		t.Fatalf("settings not updated: %+v", s.Settings)
	}
	// Replaced uploads are removed: one file per kind remains.
	files, _ := os.ReadDir(filepath.Join(e.Cfg.StorageDir, "orgs", admin.User.OrganizationID, "audio"))
	if len(files) != 2 {
		t.Fatalf("%d stored files, want 2", len(files))
	}
	// The setting can point back to an uploaded file or be cleared.
	e.Do("PUT", "/api/org/settings", map[string]any{"hold_music_file": s.Settings.HoldMusicFile}, admin.Auth()).Expect(t, 200)
	e.Do("PUT", "/api/org/settings", map[string]any{"hold_music_file": s.Settings.RingbackFile}, admin.Auth()).Expect(t, 400)
	e.Do("PUT", "/api/org/settings", map[string]any{"ringback_file": ""}, admin.Auth()).Expect(t, 200)
}

func TestAudioUploadRejectsWrongTypeAndSizeAndStoresNothing(t *testing.T) {
	e := apptest.New(t, nil)
	admin := e.Admin()
	wav := ffmpegMake(t, "tone.wav")
	big := append(append([]byte{}, wav...), bytes.Repeat([]byte{0}, 5<<20)...)
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{1}, 100)...)
	corrupt := append([]byte("OggS"), bytes.Repeat([]byte{7}, 2000)...)
	cases := []struct {
		name   string
		fields map[string]string
		file   []byte
		want   string
	}{
		{"png", map[string]string{"type": "hold_music"}, png, "unsupported audio type"},
		{"too big", map[string]string{"type": "hold_music"}, big, "larger than 5 MB"},
		{"corrupt", map[string]string{"type": "hold_music"}, corrupt, "could not be decoded"},
		{"bad type", map[string]string{"type": "doorbell"}, wav, "type must be"},
		{"no type", nil, wav, "type must be"},
		{"empty", map[string]string{"type": "ringback"}, []byte{}, "empty"},
	}
	for _, c := range cases {
		r := e.Upload("/api/org/audio", c.fields, "file", "x.bin", c.file, admin.Auth())
		if r.Status != 400 || !strings.Contains(r.Message, c.want) {
			t.Errorf("%s: %d %q, want 400 %q", c.name, r.Status, r.Message, c.want)
		}
	}
	r := e.Upload("/api/org/audio", map[string]string{"type": "ringback"}, "", "", nil, admin.Auth())
	if r.Status != 400 || !strings.Contains(r.Message, "file is required") {
		t.Errorf("no file: %d %s", r.Status, r.Body)
	}
	// The type may also come in the query string.
	e.Upload("/api/org/audio?type=ringback", nil, "file", "t.wav", wav, admin.Auth()).Expect(t, 201)
	// Nothing from the failed attempts was stored or recorded.
	files, _ := os.ReadDir(filepath.Join(e.Cfg.StorageDir, "orgs", admin.User.OrganizationID, "audio"))
	if len(files) != 1 {
		t.Fatalf("%d files stored, want only the one valid upload", len(files))
	}
	var s fullSettings
	e.Do("GET", "/api/org/settings", nil, admin.Auth()).Expect(t, 200).Into(t, &s)
	if s.Settings.HoldMusicFile != "" {
		t.Fatalf("hold music set by a rejected upload: %q", s.Settings.HoldMusicFile)
	}
}
