package e2e_test

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"wharf/internal/apptest"
	"wharf/platformsim"
)

// TestWharfNotificationConditionMemoryBound: through the api and a real
// bin/worker process, a notification whose condition allocates about
// 300 MB sends nothing, its failure shows on the notification (what its
// Admin reads), and the worker stays up: it answers its health check, never
// held the 300 MB itself, and a notification with a small condition still
// sends afterwards.
func TestWharfNotificationConditionMemoryBound(t *testing.T) {
	e := apptest.NewWithSim(t, nil, nil)
	health := freeAddr(t)
	worker := e.StartWorkerProcess(map[string]string{"HEALTH_ADDR": health})
	e.Sim.SetWebhookURL(e.Server.URL + "/api/method/wharf.utils.webhook.webhook")
	c := frappeClient{t: t, e: e.Env, auth: e.Admin().Auth()}
	wharfAccount(t, e, c, "Main", e.WABA, true)
	tpl := c.data("POST", "/api/resource/Platform%20Template", map[string]any{"template_name": "order_seen",
		"language_code": "en_US", "category": "UTILITY", "template": "Order {{1}} seen"}, 201)["name"].(string)
	// Correctness, not speed: the submission goes through the worker process
	// and the simulator's approval webhook, which a loaded machine slows.
	apptest.Eventually(t, 30*time.Second, "template approved", func() bool {
		return c.data("GET", "/api/resource/Platform%20Template/"+url.PathEscape(tpl), nil, 200)["status"] == "APPROVED"
	})
	c.data("POST", "/api/resource/DocType", map[string]any{"name": "Shop Order", "fields": []map[string]any{
		{"fieldname": "mobile", "fieldtype": "Data"}, {"fieldname": "order_no", "fieldtype": "Data"},
		{"fieldname": "amount", "fieldtype": "Int"}}}, 201)
	notification := func(name, condition string) {
		c.data("POST", "/api/resource/Platform%20Notification", map[string]any{"notification_name": name,
			"notification_type": "DocType Event", "reference_doctype": "Shop Order", "doctype_event": "After Insert",
			"template": tpl, "field_name": "mobile", "condition": condition,
			"fields": []map[string]any{{"field_name": "order_no"}}}, 201)
	}

	notification("hog", `len("x" * 300000000) > 0 and doc.amount > 0`)
	first := c.data("POST", "/api/resource/Shop%20Order", map[string]any{"mobile": "+15550004201", "order_no": "H-1", "amount": 5}, 201)
	var hog map[string]any
	apptest.Eventually(t, 60*time.Second, "the failure shown on the notification", func() bool {
		hog = c.data("GET", "/api/resource/Platform%20Notification/hog", nil, 200)
		return hog["last_error"] != nil
	})
	if want := "Shop Order " + first["name"].(string) + ": condition: condition exceeded its memory budget of 16 MB"; hog["last_error"] != want {
		t.Fatalf("last_error %q, want %q", hog["last_error"], want)
	}
	if at, _ := hog["last_error_at"].(string); at == "" {
		t.Errorf("last_error_at %v", hog["last_error_at"])
	}

	// The worker is up and answers; it never held the 300 MB.
	if err := worker.Cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the worker process: %v", err)
	}
	resp, err := http.Get("http://" + health + "/healthz")
	if err != nil {
		t.Fatalf("the worker's health check: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("the worker's health check: %d", resp.StatusCode)
	}
	if peak := peakRSS(t, worker.Cmd.Process.Pid); peak > 250<<20 {
		t.Errorf("the worker's peak resident memory is %d MB", peak>>20)
	}

	// A notification with a small condition sends afterwards, through the
	// same worker; the hog still sends nothing.
	notification("small", `doc.amount > 1`)
	c.data("POST", "/api/resource/Shop%20Order", map[string]any{"mobile": "+15550004202", "order_no": "S-2", "amount": 5}, 201)
	apptest.Eventually(t, 30*time.Second, "the small notification sent", func() bool {
		return len(e.Sim.Messages(platformsim.MessageFilter{To: "15550004202"})) == 1
	})
	if n := len(e.Sim.Messages(platformsim.MessageFilter{To: "15550004201"})); n != 0 {
		t.Fatalf("%d messages for the first order, whose only notification was the hog", n)
	}
	if m := e.Sim.Messages(platformsim.MessageFilter{To: "15550004202"}); !strings.Contains(string(m[0].Body), `"S-2"`) {
		t.Fatalf("sent %s", m[0].Body)
	}
	if small := c.data("GET", "/api/resource/Platform%20Notification/small", nil, 200); small["last_error"] != nil {
		t.Errorf("small: last_error %v", small["last_error"])
	}
}

// freeAddr is a loopback address with a port free at the time.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// peakRSS is a process's peak resident memory (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatalf("VmHWM %q: %v", rest, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}
