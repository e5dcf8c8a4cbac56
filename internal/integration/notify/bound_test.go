package notify

import (
	"context"
	"encoding/json"
	"errors"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// heapAllocated is what this process allocated on its heap so far.
func heapAllocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestConditionMemoryBound: every way found for a condition to allocate a
// lot in one step or a few (each case here about 300 MB in all when
// unbounded, intermediate buffers included; no more) fails that
// evaluation with errMemory, allocates nothing of the kind in this process
// (the worker's), and the evaluator answers the next condition. Not
// parallel: it measures this process's allocations.
func TestConditionMemoryBound(t *testing.T) {
	// A generous time budget, so that memory is what stops them: each case
	// builds up to 16 MB step by step, which took over 20 s on two vCPUs at
	// load 55 (the time budget tripped first and the test failed).
	s := New(Deps{Now: time.Now, Limits: Limits{Steps: 100_000, Time: 2 * time.Minute}})
	t.Cleanup(s.Close)
	ctx := context.Background()
	doc := map[string]any{"name": "SO-1", "amount": json.Number("5")}
	cases := []struct {
		name, cond string
		script     bool
	}{
		{"string repetition", `len("x" * 300000000) > 0`, false},
		{"int times string", `len(300000000 * "x") > 0`, false},
		{"list repetition", `len([0] * 18000000) > 0`, false},
		{"tuple repetition", `len((0,) * 18000000) > 0`, false},
		{"bytes repetition", `len(b"x" * 300000000) > 0`, false},
		{"str.join", `len(",".join(["x" * 1000] * 60000)) > 0`, false},
		{"str.replace", `len(("x" * 1000000).replace("x", "y" * 300)) > 0`, false},
		{"percent formatting", `len(("%s" * 1000) % tuple(["x" * 60000] * 1000)) > 0`, false},
		{"str.format", `len(("{}" * 1000).format(*(["x" * 60000] * 1000))) > 0`, false},
		{"str of shared values", `len(str(["x" * 37500] * 1000)) > 0`, false},
		{"list of a range", `len(list(range(18000000))) > 0`, false},
		{"sorted range", `len(sorted(range(18000000))) > 0`, false},
		{"tuple of a range", `len(tuple(range(18000000))) > 0`, false},
		{"enumerate", `len(enumerate(range(4000000))) > 0`, false},
		{"dict from zip", `len(dict(zip(range(700000), range(700000)))) > 0`, false},
		{"string elems", `len(list(("x" * 9000000).elems())) > 0`, false},
		{"list.extend", "l = []\nl.extend(range(3200000))\nlen(l) > 0", true},
		{"list +=", "l = [0]\nl += range(3200000)\nlen(l) > 0", true},
		{"list concatenation", "l = [0] * 400000\nm = l + l + l + l + l + l + l + l + l\nlen(m) > 0", true},
		// Small pieces let go of at once: nothing big is ever live, 300 MB
		// allocated in all.
		{"garbage in a loop", "for i in range(300):\n    s = \"x\" * 1000000\nlen(s) > 0", true},
		{"concatenation in a loop", "s = \"\"\nfor i in range(23):\n    s += \"x\" * 1000000\nlen(s) > 0", true},
		{"dict growth", "d = {}\nfor i in range(4800):\n    d[i] = \"x\" * 60000\nlen(d) > 0", true},
		{"big integers", "x = 1 << 500\nfor i in range(18):\n    x = x * x\nx > 0", true},
		// What the worker would copy out of the process: parameters that
		// share one long string, a value written out as text.
		{"data list text", "doc._data_list = [{\"phone\": \"+15550001111\", \"p\": \"x\" * 300000}] * 1000", true},
		{"data list escaped text", "doc._data_list = [{\"phone\": \"+15550001111\", \"p\": \"<\" * 10000}] * 1000", true},
		{"data list value as text", "doc._data_list = [{\"phone\": \"+15550001111\", \"p\": [\"x\" * 37500] * 1000}]", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := compile(c.cond, c.script)
			if err != nil {
				t.Fatalf("compile: %v", err)
			}
			before := heapAllocated()
			v, err := s.run(ctx, p, doc)
			if !errors.Is(err, errMemory) || !strings.Contains(err.Error(), "memory budget of 16 MB") {
				t.Errorf("got %+v, %v; want the memory budget exceeded", v, err)
			}
			if grew := heapAllocated() - before; grew > 32<<20 {
				t.Errorf("the worker's process allocated %d MB for it", grew>>20)
			}
		})
	}
	// The evaluator still answers, and a condition within its budget (a
	// 1 MB string) still decides.
	p, _ := compile(`len("x" * 1000000) == 1000000 and doc.amount > 1`, false)
	if v, err := s.run(ctx, p, doc); err != nil || !v.send {
		t.Fatalf("a small condition after them: %+v, %v", v, err)
	}
}

// TestConditionOneLongStep: a single builtin call that runs for ages (no
// Starlark step inside it for the thread's cancellation to see) is ended
// by its process's watchdog; the evaluator answers the next condition.
func TestConditionOneLongStep(t *testing.T) {
	t.Parallel()
	s := New(Deps{Limits: Limits{Steps: 100_000, Time: 200 * time.Millisecond}})
	t.Cleanup(s.Close)
	ctx := context.Background()
	p, _ := compile(`min(range(1000000000000)) >= 0`, false)
	start := time.Now()
	if _, err := s.run(ctx, p, nil); !errors.Is(err, errBudget) || !strings.Contains(err.Error(), "time budget") {
		t.Errorf("one long step: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("it ran %v", d)
	}
	p, _ = compile(`True`, false)
	if v, err := s.run(ctx, p, nil); err != nil || !v.send {
		t.Fatalf("the next condition: %+v, %v", v, err)
	}
}

// TestDataListBound: doc._data_list holds at most Limits.DataList objects.
func TestDataListBound(t *testing.T) {
	t.Parallel()
	s := New(Deps{})
	t.Cleanup(s.Close)
	ctx := context.Background()
	p, _ := compile(`doc._data_list = [{"phone": "+15550001111"}] * 1000`, true)
	if v, err := s.run(ctx, p, map[string]any{}); err != nil || len(v.dataList) != 1000 {
		t.Fatalf("1,000 objects: %d, %v", len(v.dataList), err)
	}
	p, _ = compile(`doc._data_list = [{"phone": "+15550001111"}] * 1001`, true)
	if _, err := s.run(ctx, p, map[string]any{}); err == nil || !strings.Contains(err.Error(), "doc._data_list has more than 1000 objects") {
		t.Fatalf("1,001 objects: %v", err)
	}
}

// TestEvaluatorKeepsValueTypes: the document's values reach the evaluator
// process as the worker holds them (a float stays a float, a JSON number
// keeps its text), and the data list comes back as parameter text.
func TestEvaluatorKeepsValueTypes(t *testing.T) {
	t.Parallel()
	s := New(Deps{})
	t.Cleanup(s.Close)
	doc := map[string]any{"f": float64(3), "i": int64(3), "n": json.Number("3"), "x": json.Number("2.5"), "big": int64(1) << 60,
		"rows": []any{map[string]any{"q": float64(2)}}, "none": nil, "ok": true}
	p, _ := compile(`str(doc.f) == "3.0" and str(doc.i) == "3" and str(doc.n) == "3" and doc.x == 2.5 and doc.big == 1 << 60 `+
		`and str(doc.rows[0]["q"]) == "2.0" and doc.none == None and doc.ok == True`, false)
	if v, err := s.run(context.Background(), p, doc); err != nil || !v.send {
		t.Fatalf("values: %+v, %v", v, err)
	}
	p, _ = compile(`doc._data_list = [{"phone": "+1555", "a": doc.f, "b": 1.5, "c": None, "d": True, "e": [1, 2]}]`, true)
	v, err := s.run(context.Background(), p, doc)
	if err != nil || len(v.dataList) != 1 {
		t.Fatalf("data list: %+v, %v", v, err)
	}
	got, _ := json.Marshal(v.dataList[0])
	if want := `{"a":"3","b":"1.5","c":null,"d":"1","e":"[1, 2]","phone":"+1555"}`; string(got) != want {
		t.Errorf("data list object %s, want %s", got, want)
	}
}
