package notify

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime/metrics"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// Conditions are Python as Frappe users write them, run by Starlark (a
// Python dialect without imports, I/O or unbounded loops of its own): a
// DocType Event's condition is one expression over doc; a Scheduler
// Event's may also be a script whose last line, when an expression, is its
// verdict, and which may set doc._data_list.

// fileOpts allow top-level if/for/while, as a Frappe condition script has
// them; set() as Python has it.
var fileOpts = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true}

// resultName holds a script's last expression.
const resultName = "__result__"

// program is a checked condition. Expressions and scripts are parsed again
// at each run: the resolver binds a parsed tree once, and parsing a
// condition costs microseconds.
type program struct {
	src    string
	empty  bool
	script bool
}

// predeclaredNames are the names a condition may use besides Starlark's
// universe.
var predeclaredNames = []string{"doc", "frappe", "nowdate", "now", "add_days", "cint", "flt", "cstr"}

func isPredeclared(name string) bool {
	for _, n := range predeclaredNames {
		if n == name {
			return true
		}
	}
	return false
}

// compile checks a condition: an expression, or (when scripts are
// allowed) a script, whose names all resolve.
func compile(src string, scripts bool) (*program, error) {
	if strings.TrimSpace(src) == "" {
		return &program{empty: true}, nil
	}
	expr, exprErr := fileOpts.ParseExpr("condition", src, 0)
	if exprErr == nil {
		if _, err := resolve.ExprOptions(fileOpts, expr, isPredeclared, starlark.Universe.Has); err != nil {
			return nil, err
		}
		return &program{src: src}, nil
	}
	if !scripts {
		return nil, exprErr
	}
	if _, err := scriptProgram(src); err != nil {
		return nil, err
	}
	return &program{src: src, script: true}, nil
}

// scriptProgram compiles a script, its last statement, when an
// expression, assigned to resultName.
func scriptProgram(src string) (*starlark.Program, error) {
	f, err := fileOpts.Parse("condition", src, 0)
	if err != nil {
		return nil, err
	}
	if n := len(f.Stmts); n > 0 {
		if es, ok := f.Stmts[n-1].(*syntax.ExprStmt); ok {
			start, _ := es.X.Span()
			f.Stmts[n-1] = &syntax.AssignStmt{OpPos: start, Op: syntax.EQ,
				LHS: &syntax.Ident{NamePos: start, Name: resultName}, RHS: es.X}
		}
	}
	return starlark.FileProgram(f, isPredeclared)
}

// verdict is what a condition decided for one document.
type verdict struct {
	send bool
	// dataList is doc._data_list when the script set it: one send per
	// object, instead of one for the document. Its values are template
	// parameters' text (paramText), or nil where the script gave None.
	dataList []map[string]any
	hasList  bool
}

// Why an evaluation stopped short of a verdict, besides an error in the
// condition itself.
var (
	// errBudget marks a condition stopped by its step or time budget.
	errBudget = errors.New("condition exceeded its budget")
	// errMemory marks a condition that allocated more than its memory
	// budget (Limits.Memory), or that the evaluator process's address
	// space could not hold.
	errMemory = errors.New("condition exceeded its memory budget")
)

// evalLimits bound one evaluation (Limits, as the evaluator process
// receives them).
type evalLimits struct {
	Steps    uint64        `json:"steps"`
	Time     time.Duration `json:"time"`
	Memory   uint64        `json:"memory"`
	DataList int           `json:"data_list"`
}

// allocCheckSteps is how often (in Starlark steps) an evaluation compares
// what it allocated with its memory budget; once more at its end.
const allocCheckSteps = 64

// evaluate runs p over the document's values, in the evaluator process
// only (evalproc.go): nothing here bounds what one step allocates but that
// process's address-space limit. Allocation is metered by the Go
// runtime's count of heap bytes allocated (runtime/metrics), read every
// allocCheckSteps steps and at the end, so a condition that allocates more
// than l.Memory in total, even in small pieces it lets go of, fails.
func evaluate(p *program, fields map[string]any, now time.Time, l evalLimits) (verdict, error) {
	if p.empty {
		return verdict{send: true}, nil
	}
	doc := newDocValue(fields)
	meter := newAllocMeter()
	var stopped error // why the thread was cancelled, if by a budget
	thread := &starlark.Thread{Name: "condition", Print: func(*starlark.Thread, string) {}}
	thread.SetMaxExecutionSteps(min(allocCheckSteps, l.Steps))
	thread.OnMaxSteps = func(th *starlark.Thread) {
		switch {
		case th.ExecutionSteps() >= l.Steps:
			stopped = fmt.Errorf("%w: too many steps (%d)", errBudget, l.Steps)
		case meter.allocated() > l.Memory:
			stopped = memoryErr(l.Memory)
		default:
			th.SetMaxExecutionSteps(min(th.ExecutionSteps()+allocCheckSteps, l.Steps))
			return
		}
		th.Cancel(stopped.Error())
	}
	var timedOut atomic.Bool
	timer := time.AfterFunc(l.Time, func() {
		timedOut.Store(true)
		thread.Cancel("time budget of " + l.Time.String() + " exceeded")
	})
	defer timer.Stop()
	v, err := evalThread(thread, p, doc, now, l)
	switch {
	case stopped != nil && err != nil:
		return verdict{}, stopped
	case timedOut.Load() && err != nil:
		return verdict{}, fmt.Errorf("%w: %s", errBudget, err.Error())
	case err != nil:
		return verdict{}, err
	case meter.allocated() > l.Memory:
		return verdict{}, memoryErr(l.Memory)
	}
	return v, nil
}

func memoryErr(budget uint64) error {
	return fmt.Errorf("%w of %s", errMemory, megabytes(budget))
}

func megabytes(n uint64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', -1, 64) + " MB"
}

// evalThread runs the expression or script on thread and reads its
// verdict.
func evalThread(thread *starlark.Thread, p *program, doc *docValue, now time.Time, l evalLimits) (verdict, error) {
	env := predeclared(doc, now)
	var result starlark.Value = starlark.None
	if !p.script {
		expr, err := fileOpts.ParseExpr("condition", p.src, 0)
		if err != nil {
			return verdict{}, err
		}
		if result, err = starlark.EvalExprOptions(fileOpts, thread, expr, env); err != nil {
			return verdict{}, err
		}
	} else {
		prog, err := scriptProgram(p.src)
		if err != nil {
			return verdict{}, err
		}
		globals, err := prog.Init(thread, env)
		if err != nil {
			return verdict{}, err
		}
		if v, ok := globals[resultName]; ok {
			result = v
		}
	}
	if dl, ok := doc.fields["_data_list"]; ok && dl != starlark.None {
		list, err := dataList(dl, l)
		if err != nil {
			return verdict{}, err
		}
		return verdict{dataList: list, hasList: true}, nil
	}
	return verdict{send: bool(result.Truth())}, nil
}

// allocMeter reads how many heap bytes the process allocated since it was
// made. The runtime counts small objects when their span is handed to an
// allocator, so the count runs ahead of the truth by at most a few spans.
type allocMeter struct {
	sample []metrics.Sample
	start  uint64
}

func newAllocMeter() *allocMeter {
	m := &allocMeter{sample: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}}
	m.start = m.read()
	return m
}

func (m *allocMeter) read() uint64 {
	metrics.Read(m.sample)
	return m.sample[0].Value.Uint64()
}

func (m *allocMeter) allocated() uint64 { return m.read() - m.start }

// dataList reads doc._data_list: a list of at most l.DataList dicts with
// string keys, their values as parameter text. Its text counts against
// the memory budget: objects may share one long string, which the answer
// to the worker would copy into each.
func dataList(v starlark.Value, l evalLimits) ([]map[string]any, error) {
	max := l.DataList
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("doc._data_list must be a list of dicts, not %s", v.Type())
	}
	tooLong := fmt.Errorf("doc._data_list has more than %d objects", max)
	if n := starlark.Len(v); n > max {
		return nil, tooLong
	}
	var out []map[string]any
	var size uint64
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		if len(out) == max {
			return nil, tooLong
		}
		d, ok := x.(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("doc._data_list item %d must be a dict, not %s", len(out)+1, x.Type())
		}
		obj := map[string]any{}
		for _, kv := range d.Items() {
			k, ok := starlark.AsString(kv[0])
			if !ok {
				return nil, fmt.Errorf("doc._data_list item %d: keys must be strings", len(out)+1)
			}
			obj[k] = nil
			if val := fromStarlark(kv[1]); val != nil {
				text := paramText(val)
				obj[k] = text
				size += uint64(len(text))
			}
			if size += uint64(len(k)); size > l.Memory {
				return nil, memoryErr(l.Memory)
			}
		}
		out = append(out, obj)
	}
	return out, nil
}

// predeclared are the names in scope: doc and a few of frappe.utils, also
// as frappe.utils.<name>; now is the clock they read.
func predeclared(doc *docValue, now time.Time) starlark.StringDict {
	utils := starlark.StringDict{
		"nowdate": starlark.NewBuiltin("nowdate", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlark.String(now.UTC().Format(time.DateOnly)), nil
		}),
		"now": starlark.NewBuiltin("now", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlark.String(now.UTC().Format(time.DateTime)), nil
		}),
		"add_days": starlark.NewBuiltin("add_days", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var date string
			var days int
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 2, &date, &days); err != nil {
				return nil, err
			}
			t, err := time.Parse(time.DateOnly, date[:min(len(date), 10)])
			if err != nil {
				return nil, fmt.Errorf("add_days: %q is not a date", date)
			}
			return starlark.String(t.AddDate(0, 0, days).Format(time.DateOnly)), nil
		}),
		"cint": starlark.NewBuiltin("cint", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var v starlark.Value
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &v); err != nil {
				return nil, err
			}
			f, _ := strconv.ParseFloat(strings.TrimSpace(paramText(fromStarlark(v))), 64)
			return starlark.MakeInt64(int64(f)), nil
		}),
		"flt": starlark.NewBuiltin("flt", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var v starlark.Value
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &v); err != nil {
				return nil, err
			}
			f, _ := strconv.ParseFloat(strings.TrimSpace(paramText(fromStarlark(v))), 64)
			return starlark.Float(f), nil
		}),
		"cstr": starlark.NewBuiltin("cstr", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var v starlark.Value
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &v); err != nil {
				return nil, err
			}
			return starlark.String(paramText(fromStarlark(v))), nil
		}),
	}
	env := starlark.StringDict{"doc": doc,
		"frappe": &starlarkstruct.Module{Name: "frappe", Members: starlark.StringDict{
			"utils": &starlarkstruct.Module{Name: "frappe.utils", Members: utils}}}}
	for k, v := range utils {
		env[k] = v
	}
	return env
}

// docValue is doc in a condition: doc.field and doc["field"] (None when
// unset, as Frappe's documents answer), doc.get("field", default), and
// settable attributes (doc._data_list).
type docValue struct {
	fields map[string]starlark.Value
	frozen bool
}

var (
	_ starlark.HasSetField = (*docValue)(nil)
	_ starlark.Mapping     = (*docValue)(nil)
	_ starlark.HasSetKey   = (*docValue)(nil)
)

func newDocValue(fields map[string]any) *docValue {
	d := &docValue{fields: map[string]starlark.Value{}}
	for k, v := range fields {
		d.fields[k] = toStarlark(v)
	}
	return d
}

func (d *docValue) String() string        { return "<doc>" }
func (d *docValue) Type() string          { return "doc" }
func (d *docValue) Freeze()               { d.frozen = true }
func (d *docValue) Truth() starlark.Bool  { return true }
func (d *docValue) Hash() (uint32, error) { return 0, errors.New("unhashable: doc") }

func (d *docValue) Attr(name string) (starlark.Value, error) {
	if name == "get" {
		return starlark.NewBuiltin("get", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var key string
			var def starlark.Value = starlark.None
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &key, &def); err != nil {
				return nil, err
			}
			if v, ok := d.fields[key]; ok && v != starlark.None {
				return v, nil
			}
			return def, nil
		}), nil
	}
	if v, ok := d.fields[name]; ok {
		return v, nil
	}
	return starlark.None, nil
}

func (d *docValue) AttrNames() []string {
	names := make([]string, 0, len(d.fields)+1)
	for k := range d.fields {
		names = append(names, k)
	}
	sort.Strings(names)
	return append(names, "get")
}

func (d *docValue) SetField(name string, v starlark.Value) error {
	if d.frozen {
		return errors.New("doc is frozen")
	}
	d.fields[name] = v
	return nil
}

func (d *docValue) Get(k starlark.Value) (starlark.Value, bool, error) {
	key, ok := starlark.AsString(k)
	if !ok {
		return nil, false, fmt.Errorf("doc keys are strings, not %s", k.Type())
	}
	if v, ok := d.fields[key]; ok {
		return v, true, nil
	}
	return starlark.None, true, nil
}

func (d *docValue) SetKey(k, v starlark.Value) error {
	key, ok := starlark.AsString(k)
	if !ok {
		return fmt.Errorf("doc keys are strings, not %s", k.Type())
	}
	return d.SetField(key, v)
}

// toStarlark converts a document value (as stored: JSON numbers, text
// dates, rows) to Starlark.
func toStarlark(v any) starlark.Value {
	switch x := v.(type) {
	case nil:
		return starlark.None
	case string:
		return starlark.String(x)
	case bool:
		return starlark.Bool(x)
	case int64:
		return starlark.MakeInt64(x)
	case int:
		return starlark.MakeInt(x)
	case float64:
		return starlark.Float(x)
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return starlark.MakeInt64(n)
		}
		f, _ := x.Float64()
		return starlark.Float(f)
	case []any:
		out := make([]starlark.Value, len(x))
		for i, e := range x {
			out[i] = toStarlark(e)
		}
		return starlark.NewList(out)
	case []map[string]any:
		out := make([]starlark.Value, len(x))
		for i, e := range x {
			out[i] = toStarlark(e)
		}
		return starlark.NewList(out)
	case map[string]any:
		d := starlark.NewDict(len(x))
		for k, e := range x {
			_ = d.SetKey(starlark.String(k), toStarlark(e))
		}
		return d
	default:
		return starlark.String(fmt.Sprint(x))
	}
}

// fromStarlark converts a value a script produced to Go: text, numbers,
// booleans, None, and anything else as Starlark writes it.
func fromStarlark(v starlark.Value) any {
	switch x := v.(type) {
	case starlark.NoneType:
		return nil
	case starlark.String:
		return string(x)
	case starlark.Bool:
		return bool(x)
	case starlark.Int:
		if n, ok := x.Int64(); ok {
			return n
		}
		return x.String()
	case starlark.Float:
		return float64(x)
	default:
		return v.String()
	}
}

// paramText formats a value as a template parameter: text as it is,
// numbers as written (dates are text as stored), unset as "".
func paramText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	default:
		return fmt.Sprint(x)
	}
}
