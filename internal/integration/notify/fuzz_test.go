package notify

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// FuzzCondition: compiling any text never panics and is deterministic; an
// expression compiles as a script too; a condition that compiles is
// evaluated under its bounds (in an evaluator process: never in the fuzzing
// process) and ends in a verdict or an error of its own, never in the
// evaluator being unavailable; its data list keeps within its bound; and
// the evaluator answers the next condition.
func FuzzCondition(f *testing.F) {
	for _, seed := range []string{
		``, `True`, `doc.amount > 100`, `doc.status == "Open" and doc.get("missing", "x") == "x"`,
		`frappe.utils.add_days(doc.due, 2) == "2026-03-03"`, `cint(doc.count) + flt(doc.amount) > cstr(1)`,
		`len("x" * 300000000) > 0`, `[0] * 18000000`, `",".join(["x" * 1000] * 300000)`,
		"if doc.amount > 10:\n    doc._data_list = [{\"phone\": doc.mobile, \"name\": doc.name}]\n",
		"doc._data_list = [{\"phone\": \"1\"}] * 1001", "x = 1 << 500\nfor i in range(20):\n    x = x * x\nx > 0",
		"x = 0\nwhile True:\n    x += 1\n", `min(range(1000000000000)) >= 0`, `doc.rows[0]["qty"] * 2 == 4`,
		"def f(n):\n    return n * 2\nf(doc.count) == 6", `{"a": 1}.get("a") == 1 and sorted([3, 1, 2])[0] == 1`,
		`doc._data_list`, `doc["name"] + 1`, `(((((((((((1)))))))))))`, `lambda x: x`, `"%s-%d" % (doc.name, 3)`,
	} {
		f.Add(seed)
	}
	s := New(Deps{Now: func() time.Time { return time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC) },
		Limits: Limits{Steps: 10_000, Time: 200 * time.Millisecond, Memory: 4 << 20, DataList: 20}})
	f.Cleanup(s.Close)
	doc := map[string]any{"name": "SO-1", "status": "Open", "amount": json.Number("150.5"), "count": int64(3),
		"due": "2026-03-01", "mobile": "+15550001111", "note": nil, "price": float64(2),
		"rows": []any{map[string]any{"qty": json.Number("2")}}}
	truth, err := compile("True", false)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, src string) {
		expr, exprErr := compile(src, false)
		script, scriptErr := compile(src, true)
		if _, again := compile(src, true); (again == nil) != (scriptErr == nil) || (again != nil && again.Error() != scriptErr.Error()) {
			t.Fatalf("compile is not deterministic: %v, then %v", scriptErr, again)
		}
		if exprErr == nil && scriptErr != nil {
			t.Fatalf("an expression that does not compile as a script: %v", scriptErr)
		}
		p := expr
		if exprErr != nil {
			if scriptErr != nil {
				return
			}
			p = script
		}
		ctx := context.Background()
		v, err := s.run(ctx, p, doc)
		if errors.Is(err, errEvaluator) {
			t.Fatalf("the evaluator could not run it: %v", err)
		}
		if err == nil && v.hasList {
			if len(v.dataList) > 20 {
				t.Fatalf("a data list of %d objects", len(v.dataList))
			}
			for _, obj := range v.dataList {
				for k, val := range obj {
					if _, ok := val.(string); !ok && val != nil {
						t.Fatalf("data list value %q is %T", k, val)
					}
				}
			}
		}
		if v, err := s.run(ctx, truth, doc); err != nil || !v.send {
			t.Fatalf("the evaluator after it: %+v, %v", v, err)
		}
	})
}
