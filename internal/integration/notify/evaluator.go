package notify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Conditions are evaluated in child processes, never in the worker:
// go.starlark.net bounds steps and can be cancelled between steps, but one
// step may allocate gigabytes ("x" * 1000000000, [0] * 1000000000,
// list(range(...)), str.join, replace, "%s" %, big integers) or run for
// minutes (sorted, min or max over a huge range), and the worker is shared
// by every organization. A child process (evalproc.go) limits its own
// address space, meters what each evaluation allocates, and is killed when
// it runs past its time budget; what kills it fails that one evaluation.
// The worker keeps a small pool of them, started on first use.

// EvaluatorConfig configures the evaluator processes. The zero value is
// the defaults.
type EvaluatorConfig struct {
	// Command starts an evaluator process (default: this executable with
	// EvaluatorArg; see selfCommand).
	Command []string
	// Processes is how many evaluations may run at once, each in its own
	// process (default 4).
	Processes int
	// Headroom is the address space an evaluator process may map beyond
	// what it mapped at its start (default 128 MiB): the wall no single
	// allocation passes. The Go runtime reserves the heap in 64 MiB
	// arenas, so the largest live heap a condition can reach is about
	// this; what each evaluation may allocate is Limits.Memory.
	Headroom uint64
	// StartTimeout bounds a process's start (default 30 s).
	StartTimeout time.Duration
	// IdleTimeout stops a process unused this long (default 1 min).
	IdleTimeout time.Duration
}

// evaluator runs conditions in a pool of evaluator processes.
type evaluator struct {
	cfg   EvaluatorConfig
	slots chan struct{}

	mu     sync.Mutex
	idle   []*evalProc
	closed bool
}

// errEvaluator marks a failure to run an evaluation at all (its process
// would not start, the job was cancelled): not the condition's fault, so
// the job is retried rather than the notification failed.
var errEvaluator = errors.New("the condition evaluator is unavailable")

func newEvaluator(cfg EvaluatorConfig) *evaluator {
	if cfg.Processes <= 0 {
		cfg.Processes = 4
	}
	if cfg.Headroom == 0 {
		cfg.Headroom = 128 << 20
	}
	if cfg.StartTimeout == 0 {
		cfg.StartTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = time.Minute
	}
	return &evaluator{cfg: cfg, slots: make(chan struct{}, cfg.Processes)}
}

// run evaluates p over a document's values in an evaluator process.
func (s *Service) run(ctx context.Context, p *program, fields map[string]any) (verdict, error) {
	if p.empty {
		return verdict{send: true}, nil
	}
	return s.eval.evaluate(ctx, evalRequest{Src: p.src, Script: p.script, Fields: fields, Now: s.now().UTC(),
		Limits: evalLimits{Steps: s.limits.Steps, Time: s.limits.Time, Memory: s.limits.Memory, DataList: s.limits.DataList}})
}

// selfCommand is this executable as an evaluator process: bin/worker
// eval-conditions. In a test binary, -test.run=^$ comes first: a test
// binary whose TestMain does not call ServeEvaluator then runs no test and
// exits (the evaluation fails to start), instead of running its tests in
// the child.
func selfCommand() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if testing.Testing() {
		return []string{exe, "-test.run=^$", EvaluatorArg}, nil
	}
	return []string{exe, EvaluatorArg}, nil
}

// Close stops the idle evaluator processes, and those of evaluations
// under way once they end.
func (e *evaluator) Close() {
	e.mu.Lock()
	e.closed = true
	idle := e.idle
	e.idle = nil
	e.mu.Unlock()
	for _, p := range idle {
		p.stop()
	}
}

// evaluate runs one request in a process of the pool. The error wraps
// errEvaluator when the evaluation could not be run; any other error is
// the condition's (errBudget, errMemory, or its own error).
func (e *evaluator) evaluate(ctx context.Context, req evalRequest) (verdict, error) {
	select {
	case e.slots <- struct{}{}:
	case <-ctx.Done():
		return verdict{}, fmt.Errorf("%w: %w", errEvaluator, ctx.Err())
	}
	defer func() { <-e.slots }()
	p, err := e.take(ctx)
	if err != nil {
		return verdict{}, err
	}
	resp, err := p.do(ctx, req)
	if err != nil {
		p.stop()
		return verdict{}, err
	}
	e.put(p)
	switch resp.Kind {
	case "memory":
		return verdict{}, fmt.Errorf("%w of %s", errMemory, megabytes(req.Limits.Memory))
	case "budget":
		return verdict{}, fmt.Errorf("%w%s", errBudget, strings.TrimPrefix(resp.Error, errBudget.Error()))
	}
	if resp.Error != "" {
		return verdict{}, errors.New(resp.Error)
	}
	return verdict{send: resp.Send, hasList: resp.HasList, dataList: resp.DataList}, nil
}

// take hands out an idle process that still runs, or starts one.
func (e *evaluator) take(ctx context.Context) (*evalProc, error) {
	for {
		e.mu.Lock()
		if e.closed {
			e.mu.Unlock()
			return nil, fmt.Errorf("%w: closed", errEvaluator)
		}
		if len(e.idle) == 0 {
			e.mu.Unlock()
			return e.start(ctx)
		}
		p := e.idle[len(e.idle)-1]
		e.idle = e.idle[:len(e.idle)-1]
		e.mu.Unlock()
		p.retire.Stop() // should it have fired, retire finds p no longer idle
		select {
		case <-p.done: // it died idle (the system's OOM killer...): not this condition's doing
			p.stop()
		default:
			return p, nil
		}
	}
}

// put returns a process to the pool, to be stopped if unused for
// IdleTimeout.
func (e *evaluator) put(p *evalProc) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		p.stop()
		return
	}
	e.idle = append(e.idle, p)
	p.retire = time.AfterFunc(e.cfg.IdleTimeout, func() { e.retire(p) })
	e.mu.Unlock()
}

// retire stops p if it is still idle.
func (e *evaluator) retire(p *evalProc) {
	e.mu.Lock()
	i := slices.Index(e.idle, p)
	if i >= 0 {
		e.idle = slices.Delete(e.idle, i, i+1)
	}
	e.mu.Unlock()
	if i >= 0 {
		p.stop()
	}
}

// evalProc is one evaluator process.
type evalProc struct {
	cmd  *exec.Cmd
	in   *os.File      // its standard input
	out  *bufio.Reader // its standard output
	errs *headBuffer   // the start of its standard error
	done chan struct{} // closed once it exited
	// retire stops the process once it has been idle for IdleTimeout.
	retire *time.Timer
}

// maxAnswer bounds an answer's line, which the worker holds: an
// evaluation's data list text is metered against its memory budget, and
// an answer longer than the budget (JSON escapes can make it six times the
// text) is the budget exceeded.
func maxAnswer(l evalLimits) int { return int(l.Memory) + 1<<20 }

var errLongAnswer = errors.New("the answer is too long")

func (e *evaluator) start(ctx context.Context) (*evalProc, error) {
	args := e.cfg.Command
	if len(args) == 0 {
		var err error
		if args, err = selfCommand(); err != nil {
			return nil, fmt.Errorf("%w: %w", errEvaluator, err)
		}
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errEvaluator, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("%w: %w", errEvaluator, err)
	}
	cmd := exec.Command(args[0], args[1:]...)
	// Nothing of the worker's environment (its secrets) is passed on.
	cmd.Env = []string{}
	// A process the address-space limit stops says why on its first line
	// ("fatal error: out of memory"), then writes every goroutine's stack:
	// only the start is kept.
	errs := &headBuffer{max: 4096}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errs
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("%w: %w", errEvaluator, err)
	}
	p := &evalProc{cmd: cmd, in: inW, out: bufio.NewReaderSize(outR, 64<<10), errs: errs, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		outR.Close()
		close(p.done)
	}()
	setup, _ := json.Marshal(evalSetup{Headroom: e.cfg.Headroom})
	line, err := p.exchange(ctx, setup, e.cfg.StartTimeout, 1<<10)
	var ready evalReady
	if err == nil {
		err = json.Unmarshal(line, &ready)
	}
	if err == nil && !ready.Ready {
		err = errors.New(ready.Error)
	}
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("%w: the evaluator process did not start (%s): %w", errEvaluator, p.exitReason(), err)
	}
	return p, nil
}

// do sends one request and reads its answer. An error means the process
// is no longer usable: errEvaluator when the job was cancelled, else the
// condition's (it took the process down or ran out of time).
func (p *evalProc) do(ctx context.Context, req evalRequest) (evalResponse, error) {
	req.Fields = wireFields(req.Fields)
	b, err := json.Marshal(req)
	if err != nil {
		return evalResponse{}, fmt.Errorf("%w: %w", errEvaluator, err)
	}
	// The process ends itself watchdogGrace after the budget; this is for
	// one that cannot (stopped, starved of CPU).
	line, err := p.exchange(ctx, b, req.Limits.Time+watchdogGrace+5*time.Second, maxAnswer(req.Limits))
	switch {
	case errors.Is(err, errLongAnswer):
		return evalResponse{}, fmt.Errorf("%w of %s", errMemory, megabytes(req.Limits.Memory))
	case err == nil:
		var resp evalResponse
		if err := json.Unmarshal(line, &resp); err != nil {
			return evalResponse{}, fmt.Errorf("the condition evaluator answered %q: %w", clip(string(line), 200), err)
		}
		return resp, nil
	case ctx.Err() != nil:
		return evalResponse{}, fmt.Errorf("%w: %w", errEvaluator, ctx.Err())
	case errors.Is(err, errTimedOut):
		return evalResponse{}, fmt.Errorf("%w: time budget of %s exceeded (the evaluation was stopped)", errBudget, req.Limits.Time)
	}
	// The process died or closed its output mid-evaluation.
	p.stop()
	if p.cmd.ProcessState != nil && p.cmd.ProcessState.ExitCode() == exitWatchdog {
		return evalResponse{}, fmt.Errorf("%w: time budget of %s exceeded (the evaluation was stopped)", errBudget, req.Limits.Time)
	}
	if outOfMemory(p.errs.String()) {
		return evalResponse{}, fmt.Errorf("%w of %s", errMemory, megabytes(req.Limits.Memory))
	}
	return evalResponse{}, fmt.Errorf("the condition's evaluation stopped (%s)", p.exitReason())
}

var errTimedOut = errors.New("timed out")

// outOfMemory reports whether a process's standard error says it ran into
// its address-space limit: the Go runtime's "out of memory", or, in a
// binary built with -race (tests), the race runtime's failed mappings.
func outOfMemory(stderr string) bool {
	for _, s := range []string{"out of memory", "errno: 12", "address space collisions for -race mode"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// exchange writes one line and reads the answer line (at most max bytes),
// within timeout. The writing and reading run aside, so that a process
// that neither reads nor answers is killed (which ends both) when the
// time is up.
func (p *evalProc) exchange(ctx context.Context, line []byte, timeout time.Duration, max int) ([]byte, error) {
	type answer struct {
		line []byte
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		if _, err := p.in.Write(append(line, '\n')); err != nil {
			ch <- answer{err: err}
			return
		}
		b, err := readLine(p.out, max)
		ch <- answer{b, err}
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-ch:
		return a.line, a.err
	case <-timer.C:
		p.stop()
		<-ch
		return nil, errTimedOut
	case <-ctx.Done():
		p.stop()
		<-ch
		return nil, ctx.Err()
	}
}

// readLine reads up to a newline, refusing lines longer than max.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, errLongAnswer
		}
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// stop kills the process (if it still runs) and waits for it.
func (p *evalProc) stop() {
	p.in.Close()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Kill()
	<-p.done
}

// exitReason says how the process ended: the first line of what it wrote
// on its standard error, or its exit status.
func (p *evalProc) exitReason() string {
	if first, _, _ := strings.Cut(strings.TrimSpace(p.errs.String()), "\n"); first != "" {
		return clip(first, 200)
	}
	if st := p.cmd.ProcessState; st != nil {
		return st.String()
	}
	return "still running"
}

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (h *headBuffer) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - h.b.Len(); room > 0 {
		h.b.Write(b[:min(room, len(b))])
	}
	return len(b), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// wireFields prepares a document's values for the evaluator process so
// that it sees them as the worker holds them: a float64 is written with a
// decimal point (3.0, not 3), which the process reads back as a float,
// not an int; json.Number keeps its text.
func wireFields(fields map[string]any) map[string]any {
	out := make(map[string]any, len(fields))
	for k, v := range fields {
		out[k] = wireValue(v)
	}
	return out
}

func wireValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int, int64, json.Number:
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x) // JSON holds neither; no stored value is either
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return json.Number(s)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wireValue(e)
		}
		return out
	case []map[string]any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = wireFields(e)
		}
		return out
	case map[string]any:
		return wireFields(x)
	default:
		return fmt.Sprint(x)
	}
}
