package config_test

import (
	"strings"
	"testing"
	"time"

	"wharf/internal/infra/config"
)

func base() map[string]string {
	return map[string]string{
		"JWT_SECRET":     strings.Repeat("s", 32),
		"ENCRYPTION_KEY": strings.Repeat("ab", 32),
	}
}

func TestAPIDefaults(t *testing.T) {
	c, err := config.LoadAPIFrom(base())
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTPAddr != ":8080" || c.AccessTokenTTL != time.Hour || c.RefreshTokenTTL != 168*time.Hour ||
		c.RateLimitPerMinute != 100 || c.RateLimitBulkPerMinute != 10 || len(c.EncryptionKey) != 32 ||
		c.BootstrapAdminEmail == "" || c.BootstrapOrgName == "" || c.StorageDir == "" || c.PlatformAPIURL == "" {
		t.Fatalf("defaults %+v", c)
	}
}

func TestMissingOrInvalidValuesNameTheVariable(t *testing.T) {
	cases := map[string]struct {
		set  map[string]string
		drop string
		want string
	}{
		"no jwt secret":      {drop: "JWT_SECRET", want: "JWT_SECRET"},
		"no encryption key":  {drop: "ENCRYPTION_KEY", want: "ENCRYPTION_KEY"},
		"short jwt secret":   {set: map[string]string{"JWT_SECRET": "short"}, want: "JWT_SECRET"},
		"bad key":            {set: map[string]string{"ENCRYPTION_KEY": "not-a-key"}, want: "ENCRYPTION_KEY"},
		"16-byte key":        {set: map[string]string{"ENCRYPTION_KEY": strings.Repeat("ab", 16)}, want: "ENCRYPTION_KEY"},
		"bad db url":         {set: map[string]string{"DATABASE_URL": "mysql://x"}, want: "DATABASE_URL"},
		"bad redis url":      {set: map[string]string{"REDIS_URL": "http://x"}, want: "REDIS_URL"},
		"bad platform url":   {set: map[string]string{"PLATFORM_API_URL": "nope"}, want: "PLATFORM_API_URL"},
		"bad ttl":            {set: map[string]string{"ACCESS_TOKEN_TTL": "soon"}, want: "ACCESS_TOKEN_TTL"},
		"refresh <= access":  {set: map[string]string{"REFRESH_TOKEN_TTL": "30m"}, want: "REFRESH_TOKEN_TTL"},
		"zero rate limit":    {set: map[string]string{"RATE_LIMIT_PER_MINUTE": "0"}, want: "RATE_LIMIT_PER_MINUTE"},
		"bad bulk limit":     {set: map[string]string{"RATE_LIMIT_BULK_PER_MINUTE": "ten"}, want: "RATE_LIMIT_BULK_PER_MINUTE"},
		"half monitoring":    {set: map[string]string{"MONITORING_USER": "ops"}, want: "MONITORING_PASSWORD"},
		"bad bootstrap mail": {set: map[string]string{"BOOTSTRAP_ADMIN_EMAIL": "admin"}, want: "BOOTSTRAP_ADMIN_EMAIL"},
		"bad log level":      {set: map[string]string{"LOG_LEVEL": "loud"}, want: "LOG_LEVEL"},
		"bad metrics addr":   {set: map[string]string{"METRICS_ADDR": "9090"}, want: "METRICS_ADDR"},
		"metrics on public":  {set: map[string]string{"METRICS_ADDR": ":8080"}, want: "METRICS_ADDR must differ from HTTP_ADDR"},
		"bad ai url":         {set: map[string]string{"AI_API_URL": "localhost:11434"}, want: "AI_API_URL"},
		"short ai timeout":   {set: map[string]string{"AI_TIMEOUT": "10ms"}, want: "AI_TIMEOUT"},
		"bad ai timeout":     {set: map[string]string{"AI_TIMEOUT": "soon"}, want: "AI_TIMEOUT"},
		"turn ttl > 7 days":  {set: map[string]string{"TURN_TTL": "169h"}, want: "TURN_TTL"},
		"zero turn ttl":      {set: map[string]string{"TURN_TTL": "0s"}, want: "TURN_TTL"},
		"turn without key":   {set: map[string]string{"TURN_URLS": "turn:turn.example.com:3478"}, want: "TURN_SECRET"},
		"key without turn":   {set: map[string]string{"TURN_SECRET": "s3cret"}, want: "TURN_URLS"},
		"bad turn url":       {set: map[string]string{"TURN_URLS": "https://x", "TURN_SECRET": "s"}, want: "TURN_URLS"},
		"bad stun url":       {set: map[string]string{"STUN_URLS": "stun.example.com:3478"}, want: "STUN_URLS"},
	}
	for name, c := range cases {
		env := base()
		delete(env, c.drop)
		for k, v := range c.set {
			env[k] = v
		}
		_, err := config.LoadAPIFrom(env)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v does not name %s", name, err, c.want)
		}
	}
}

// /metrics is off unless METRICS_ADDR names a listener of its own.
func TestMetricsAddr(t *testing.T) {
	c, err := config.LoadAPIFrom(base())
	if err != nil || c.MetricsAddr != "" {
		t.Fatalf("default METRICS_ADDR %q, %v: want empty (off)", c.MetricsAddr, err)
	}
	env := base()
	env["METRICS_ADDR"] = "127.0.0.1:9090"
	if c, err := config.LoadAPIFrom(env); err != nil || c.MetricsAddr != "127.0.0.1:9090" {
		t.Fatalf("METRICS_ADDR %q, %v", c.MetricsAddr, err)
	}
}

// The AI defaults are optional: no URL is the provider's API, no key is
// what an organization without its own key gets (its AI replies fail and
// the chatbot falls back). api and worker read the same variables.
func TestAIDefaults(t *testing.T) {
	c, err := config.LoadAPIFrom(base())
	if err != nil || c.AIAPIURL != "" || c.AIAPIKey != "" || c.AITimeout != 20*time.Second {
		t.Fatalf("api AI defaults %+v, %v", c.AI, err)
	}
	env := map[string]string{"ENCRYPTION_KEY": strings.Repeat("ab", 32),
		"AI_API_URL": "http://ollama:11434/v1", "AI_API_KEY": "sk-env", "AI_TIMEOUT": "45s"}
	w, err := config.LoadWorkerFrom(env)
	if err != nil || w.AIAPIURL != "http://ollama:11434/v1" || w.AIAPIKey != "sk-env" || w.AITimeout != 45*time.Second {
		t.Fatalf("worker AI %+v, %v", w.AI, err)
	}
	env["AI_API_URL"] = "ftp://models"
	if _, err := config.LoadWorkerFrom(env); err == nil || !strings.Contains(err.Error(), "AI_API_URL") {
		t.Fatalf("worker with a bad AI_API_URL: %v", err)
	}
}

// The chatbot's share per organization of the worker's slots: a quarter of
// WORKER_CONCURRENCY by default (at least 1), or CHATBOT_ORG_CONCURRENCY,
// which must lie between 0 and WORKER_CONCURRENCY.
func TestChatbotOrgSlots(t *testing.T) {
	env := func(kv ...string) map[string]string {
		e := map[string]string{"ENCRYPTION_KEY": strings.Repeat("ab", 32)}
		for i := 0; i < len(kv); i += 2 {
			e[kv[i]] = kv[i+1]
		}
		return e
	}
	for _, c := range []struct {
		env  map[string]string
		want int
	}{{env(), 2}, {env("WORKER_CONCURRENCY", "3"), 1}, {env("WORKER_CONCURRENCY", "40"), 10},
		{env("CHATBOT_ORG_CONCURRENCY", "5"), 5}, {env("WORKER_CONCURRENCY", "4", "CHATBOT_ORG_CONCURRENCY", "4"), 4}} {
		w, err := config.LoadWorkerFrom(c.env)
		if err != nil || w.ChatbotOrgSlots() != c.want {
			t.Errorf("%v: %d slots, %v; want %d", c.env, w.ChatbotOrgSlots(), err, c.want)
		}
	}
	for _, bad := range []map[string]string{env("CHATBOT_ORG_CONCURRENCY", "-1"), env("CHATBOT_ORG_CONCURRENCY", "11")} {
		if _, err := config.LoadWorkerFrom(bad); err == nil || !strings.Contains(err.Error(), "CHATBOT_ORG_CONCURRENCY") {
			t.Errorf("%v: %v, want an error naming CHATBOT_ORG_CONCURRENCY", bad, err)
		}
	}
}

func TestEncryptionKeyAcceptsHexAndBase64(t *testing.T) {
	for _, k := range []string{strings.Repeat("0f", 32), "MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTIzNDU2Nzg5MDE="} {
		env := base()
		env["ENCRYPTION_KEY"] = k
		c, err := config.LoadAPIFrom(env)
		if err != nil || len(c.EncryptionKey) != 32 {
			t.Fatalf("key %q: %v", k, err)
		}
	}
}

func TestWorkerAndSchedulerNeedLess(t *testing.T) {
	if _, err := config.LoadWorkerFrom(map[string]string{"ENCRYPTION_KEY": strings.Repeat("ab", 32)}); err != nil {
		t.Fatalf("worker: %v", err)
	}
	if _, err := config.LoadWorkerFrom(map[string]string{}); err == nil || !strings.Contains(err.Error(), "ENCRYPTION_KEY") {
		t.Fatalf("worker without key: %v", err)
	}
	if _, err := config.LoadSchedulerFrom(map[string]string{}); err != nil {
		t.Fatalf("scheduler: %v", err)
	}
}

// Files stay in STORAGE_DIR unless an S3 endpoint is set; then its bucket
// and keys are required, for the api and the worker alike.
func TestStorage(t *testing.T) {
	c, err := config.LoadAPIFrom(base())
	if err != nil || c.S3Endpoint != "" || c.S3Region != "us-east-1" || !c.S3UseSSL {
		t.Fatalf("defaults %+v, %v", c.Storage, err)
	}
	s3 := map[string]string{"STORAGE_S3_ENDPOINT": "minio:9000", "STORAGE_S3_BUCKET": "wharf",
		"STORAGE_S3_ACCESS_KEY": "ak", "STORAGE_S3_SECRET_KEY": "sk", "STORAGE_S3_USE_SSL": "false", "STORAGE_S3_REGION": "eu-west-1"}
	env := base()
	for k, v := range s3 {
		env[k] = v
	}
	c, err = config.LoadAPIFrom(env)
	if err != nil || c.S3Endpoint != "minio:9000" || c.S3Bucket != "wharf" || c.S3AccessKey != "ak" || c.S3SecretKey != "sk" ||
		c.S3Region != "eu-west-1" || c.S3UseSSL {
		t.Fatalf("S3 %+v, %v", c.Storage, err)
	}
	for _, drop := range []string{"STORAGE_S3_BUCKET", "STORAGE_S3_ACCESS_KEY", "STORAGE_S3_SECRET_KEY"} {
		env := base()
		for k, v := range s3 {
			if k != drop {
				env[k] = v
			}
		}
		if _, err := config.LoadAPIFrom(env); err == nil || !strings.Contains(err.Error(), drop) {
			t.Errorf("api without %s: %v", drop, err)
		}
		if _, err := config.LoadWorkerFrom(env); err == nil || !strings.Contains(err.Error(), drop) {
			t.Errorf("worker without %s: %v", drop, err)
		}
	}
	env["STORAGE_S3_ENDPOINT"] = "https://s3.amazonaws.com"
	if _, err := config.LoadAPIFrom(env); err == nil || !strings.Contains(err.Error(), "STORAGE_S3_ENDPOINT") {
		t.Errorf("endpoint with a scheme: %v", err)
	}
}

// Calling has a STUN server by default and TURN only when both its URLs and
// its secret are set; lists are comma-separated.
func TestCallingICEConfig(t *testing.T) {
	c, err := config.LoadAPIFrom(base())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.STUNURLs) != 1 || c.STUNURLs[0] != "stun:stun.l.google.com:19302" || len(c.TURNURLs) != 0 || c.TURNTTL != 24*time.Hour {
		t.Fatalf("calling defaults %+v", c.Calling)
	}
	env := base()
	env["STUN_URLS"] = "stun:a.example:3478,stuns:b.example:5349"
	env["TURN_URLS"] = "turn:t.example:3478?transport=udp,turns:t.example:5349"
	env["TURN_SECRET"] = "s3cret"
	env["TURN_TTL"] = "168h"
	c, err = config.LoadAPIFrom(env)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.STUNURLs) != 2 || len(c.TURNURLs) != 2 || c.TURNSecret != "s3cret" || c.TURNTTL != config.MaxTURNTTL {
		t.Fatalf("calling %+v", c.Calling)
	}
}

// Exports: the stall timeout and the concurrency bounds default to 30 s, 8
// and 3 per organization; a bound that could take most of the database pool,
// or a per-organization bound above the process's, is refused at start-up.
func TestExportLimits(t *testing.T) {
	c, err := config.LoadAPIFrom(base())
	if err != nil || c.ExportStallTimeout != 30*time.Second || c.ExportConcurrency != 8 || c.ExportConcurrencyPerOrg != 3 {
		t.Fatalf("defaults %s %d %d (%v)", c.ExportStallTimeout, c.ExportConcurrency, c.ExportConcurrencyPerOrg, err)
	}
	for set, want := range map[[2]string]string{
		{"EXPORT_STALL_TIMEOUT", "0s"}:      "EXPORT_STALL_TIMEOUT",
		{"EXPORT_STALL_TIMEOUT", "11m"}:     "EXPORT_STALL_TIMEOUT",
		{"EXPORT_CONCURRENCY", "0"}:         "EXPORT_CONCURRENCY must be between 1 and 12",
		{"EXPORT_CONCURRENCY", "25"}:        "EXPORT_CONCURRENCY must be between 1 and 12",
		{"EXPORT_CONCURRENCY_PER_ORG", "0"}: "EXPORT_CONCURRENCY_PER_ORG",
		{"EXPORT_CONCURRENCY_PER_ORG", "9"}: "EXPORT_CONCURRENCY_PER_ORG must be between 1 and EXPORT_CONCURRENCY",
	} {
		env := base()
		env[set[0]] = set[1]
		if _, err := config.LoadAPIFrom(env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: %v, want %q", set[0], set[1], err, want)
		}
	}
}

func TestEventStreamLimits(t *testing.T) {
	c, err := config.LoadAPIFrom(base())
	if err != nil || c.EventStreamsMax != 5000 || c.EventStreamHeartbeat != 15*time.Second || c.EventStreamRecheck != 30*time.Second {
		t.Fatalf("defaults %d %s %s (%v)", c.EventStreamsMax, c.EventStreamHeartbeat, c.EventStreamRecheck, err)
	}
	for set, want := range map[[2]string]string{
		{"EVENT_STREAMS_MAX", "0"}:        "EVENT_STREAMS_MAX must be at least 1",
		{"EVENT_STREAM_HEARTBEAT", "0s"}:  "EVENT_STREAM_HEARTBEAT must be between 0 and 1m",
		{"EVENT_STREAM_HEARTBEAT", "61s"}: "EVENT_STREAM_HEARTBEAT must be between 0 and 1m",
		{"EVENT_STREAM_RECHECK", "0s"}:    "EVENT_STREAM_RECHECK must be between 0 and 5m",
		{"EVENT_STREAM_RECHECK", "6m"}:    "EVENT_STREAM_RECHECK must be between 0 and 5m",
	} {
		env := base()
		env[set[0]] = set[1]
		if _, err := config.LoadAPIFrom(env); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=%s: %v, want %q", set[0], set[1], err, want)
		}
	}
}
