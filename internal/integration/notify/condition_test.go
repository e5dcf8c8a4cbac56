package notify

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func newTestService(t *testing.T) *Service {
	s := New(Deps{Now: func() time.Time { return time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC) },
		Limits: Limits{Steps: 10_000, Time: 200 * time.Millisecond}})
	t.Cleanup(s.Close)
	return s
}

func TestConditionVerdicts(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	doc := map[string]any{"name": "SO-1", "status": "Open", "amount": json.Number("150.5"), "count": int64(3),
		"due": "2026-03-01", "urgent": int64(1), "note": nil}
	cases := []struct {
		cond string
		want bool
	}{
		{"", true},
		{`doc.status == "Open"`, true},
		{`doc.status == "Closed"`, false},
		{`doc.amount > 100 and doc.count == 3`, true},
		{`doc.get("status") == "Open" and doc.get("missing", "x") == "x"`, true},
		{`doc["due"] == nowdate()`, true},
		{`frappe.utils.add_days(doc.due, 2) == "2026-03-03"`, true},
		{`doc.note == None and not doc.missing`, true},
		{`cint(doc.urgent) and flt(doc.amount) > 150`, true},
		{`doc.status in ["Closed", "Paid"]`, false},
	}
	for _, c := range cases {
		p, err := compile(c.cond, false)
		if err != nil {
			t.Fatalf("%q: %v", c.cond, err)
		}
		v, err := s.run(context.Background(), p, doc)
		if err != nil || v.send != c.want {
			t.Errorf("%q: send %v, err %v; want %v", c.cond, v.send, err, c.want)
		}
	}
}

func TestConditionsThatDoNotCompile(t *testing.T) {
	t.Parallel()
	for cond, want := range map[string]string{
		`doc.status ==`:                 "got end of file",
		`unknown_name(doc)`:             "undefined: unknown_name",
		"x = 1\ndoc.status == 'Open'":   "got '='", // an expression is required for DocType events
		`import os`:                     "got import",
		`doc.status == "Open" and frap`: "undefined: frap",
	} {
		if _, err := compile(cond, false); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", cond, err, want)
		}
	}
	// Scheduler conditions may be scripts, checked as well.
	if _, err := compile("if doc.status == 'Open':\n    doc._data_list = []\n", true); err != nil {
		t.Errorf("script: %v", err)
	}
	if _, err := compile("if doc.status == 'Open':\n    undefined_thing()\n", true); err == nil ||
		!strings.Contains(err.Error(), "undefined: undefined_thing") {
		t.Errorf("script with an unknown name: %v", err)
	}
}

func TestConditionErrorsAndBudgets(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	doc := map[string]any{"status": "Open"}
	// A runtime error is an error, not a verdict.
	p, _ := compile(`doc.status + 1 > 0`, false)
	if _, err := s.run(context.Background(), p, doc); err == nil || !strings.Contains(err.Error(), "unknown binary op") {
		t.Errorf("runtime error: %v", err)
	}
	// The step budget stops a long computation.
	p, _ = compile(`len([x for x in range(1000000)]) > 0`, false)
	start := time.Now()
	if _, err := s.run(context.Background(), p, doc); !errors.Is(err, errBudget) || !strings.Contains(err.Error(), "too many steps") {
		t.Errorf("step budget: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second { // the error says which budget; this, that it ends (a busy machine is slow)
		t.Errorf("the step budget took %v", d)
	}
	// The time budget stops what the step budget lets through (here a
	// budget of 2^40 steps).
	slow := New(Deps{Limits: Limits{Steps: 1 << 40, Time: 50 * time.Millisecond}})
	t.Cleanup(slow.Close)
	p, _ = compile("x = 0\nwhile True:\n    x += 1\n", true)
	start = time.Now()
	if _, err := slow.run(context.Background(), p, doc); !errors.Is(err, errBudget) || !strings.Contains(err.Error(), "time budget") {
		t.Errorf("time budget: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the time budget took %v", d)
	}
}

func TestScriptsDataListAndLastExpression(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	doc := map[string]any{"name": "C-1", "mobile": "+15550001111", "customer": "Ada", "amount": json.Number("20")}
	p, err := compile(`
people = [{"phone": doc.mobile, "name": doc.customer, "amount": doc.amount}]
if doc.amount > 10:
    people.append({"phone": "+15550002222", "name": "Boss", "amount": 1.5})
doc._data_list = people
`, true)
	if err != nil {
		t.Fatal(err)
	}
	v, err := s.run(context.Background(), p, doc)
	if err != nil || !v.hasList || len(v.dataList) != 2 {
		t.Fatalf("data list: %+v, %v", v, err)
	}
	if v.dataList[1]["phone"] != "+15550002222" || paramText(v.dataList[1]["amount"]) != "1.5" || paramText(v.dataList[0]["amount"]) != "20" {
		t.Errorf("objects: %+v", v.dataList)
	}
	// Without _data_list, the last expression decides.
	p, _ = compile("limit = 10\ndoc.amount > limit", true)
	if v, err := s.run(context.Background(), p, doc); err != nil || !v.send || v.hasList {
		t.Errorf("last expression true: %+v %v", v, err)
	}
	p, _ = compile("limit = 100\ndoc.amount > limit", true)
	if v, err := s.run(context.Background(), p, doc); err != nil || v.send {
		t.Errorf("last expression false: %+v %v", v, err)
	}
	// A script ending in a statement sends nothing without a list.
	p, _ = compile("x = doc.amount", true)
	if v, err := s.run(context.Background(), p, doc); err != nil || v.send {
		t.Errorf("no verdict: %+v %v", v, err)
	}
	// A malformed list is an error.
	p, _ = compile(`doc._data_list = ["not a dict"]`, true)
	if _, err := s.run(context.Background(), p, doc); err == nil || !strings.Contains(err.Error(), "must be a dict") {
		t.Errorf("bad list: %v", err)
	}
}

func TestDueByFrequency(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		tm, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	cases := []struct {
		freq, cron, tick string
		want             bool
	}{
		{"All", "", "2026-03-04 10:17:00", true},
		{"Hourly", "", "2026-03-04 10:00:00", true},
		{"Hourly", "", "2026-03-04 10:01:00", false},
		{"Daily", "", "2026-03-04 00:00:00", true},
		{"Daily", "", "2026-03-04 10:00:00", false},
		{"Weekly", "", "2026-03-01 00:00:00", true}, // a Sunday
		{"Weekly", "", "2026-03-02 00:00:00", false},
		{"Monthly", "", "2026-03-01 00:00:00", true},
		{"Monthly", "", "2026-03-02 00:00:00", false},
		{"Cron", "* * * * *", "2026-03-04 10:17:00", true},
		{"Cron", "*/15 9-17 * * 1-5", "2026-03-04 10:15:00", true}, // a Wednesday
		{"Cron", "*/15 9-17 * * 1-5", "2026-03-04 10:16:00", false},
		{"Cron", "*/15 9-17 * * 1-5", "2026-03-01 10:15:00", false}, // Sunday
		// A tick carrying seconds is its minute.
		{"Hourly", "", "2026-03-04 10:00:42", true},
	}
	for _, c := range cases {
		got, err := due(c.freq, c.cron, at(c.tick))
		if err != nil || got != c.want {
			t.Errorf("%s %q at %s: %v %v, want %v", c.freq, c.cron, c.tick, got, err, c.want)
		}
	}
	if _, err := due("Cron", "not a cron", at("2026-03-04 10:00:00")); err == nil {
		t.Error("a bad cron format is an error")
	}
	if _, err := due("Fortnightly", "", at("2026-03-04 10:00:00")); err == nil {
		t.Error("an unknown frequency is an error")
	}
}
