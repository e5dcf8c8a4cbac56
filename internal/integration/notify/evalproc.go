package notify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The evaluator process: the side of evaluator.go that runs conditions.
// It is the project's own binary started with EvaluatorArg (bin/worker
// eval-conditions; a test binary whose TestMain calls ServeEvaluator). It
// limits its own address space (RLIMIT_AS) to what it mapped at its start
// plus the headroom the worker asks for, so that no single allocation of a
// condition ("x" * 1000000000, list(range(...)), a big integer squared)
// can take more than that: the Go runtime fails the allocation and the
// process dies, not the worker. Within that wall each evaluation also
// meters what it allocates (condition.go), and a watchdog ends the process
// when one Starlark step runs past the time budget (a builtin such as
// sorted() is one step, which the thread's cancellation cannot stop).

// EvaluatorArg is the last argument of an evaluator process's command line.
const EvaluatorArg = "eval-conditions"

// IsEvaluator reports whether args (os.Args) start an evaluator process.
// bin/worker's main, and the TestMain of every test package whose tests
// evaluate conditions, call ServeEvaluator first thing when it does.
func IsEvaluator(args []string) bool {
	return len(args) > 1 && args[len(args)-1] == EvaluatorArg
}

// exitWatchdog is the exit status of an evaluator process stopped by its
// watchdog (a step that ran past its time budget).
const exitWatchdog = 70

// watchdogGrace is how long past its time budget an evaluation may run
// before its process ends itself.
const watchdogGrace = time.Second

// evalSetup is the first line the worker sends an evaluator process.
type evalSetup struct {
	// Headroom is the address space the process may map beyond what it had
	// mapped when it read this line.
	Headroom uint64 `json:"headroom"`
}

// evalReady is the process's answer to its setup.
type evalReady struct {
	Ready bool   `json:"ready"`
	Error string `json:"error,omitempty"`
}

// evalRequest is one condition to evaluate over one document.
type evalRequest struct {
	Src    string         `json:"src"`
	Script bool           `json:"script"`
	Fields map[string]any `json:"fields"`
	Now    time.Time      `json:"now"`
	Limits evalLimits     `json:"limits"`
}

// evalResponse is the evaluation's outcome: a verdict, or an error and
// its kind ("budget", "memory", or "" for an error of the condition).
type evalResponse struct {
	Send     bool             `json:"send,omitempty"`
	HasList  bool             `json:"has_list,omitempty"`
	DataList []map[string]any `json:"data_list,omitempty"`
	Error    string           `json:"error,omitempty"`
	Kind     string           `json:"kind,omitempty"`
}

// ServeEvaluator is the evaluator process: it reads its setup and then one
// request per line from in, and answers each on out, until in ends. It
// answers the process's exit status.
func ServeEvaluator(in io.Reader, out io.Writer) int {
	// The worker stops its evaluators itself; a terminal's Ctrl-C (sent to
	// the whole process group) must not end one during the worker's
	// graceful shutdown.
	signal.Ignore(os.Interrupt, syscall.SIGTERM)
	// One evaluation at a time: one processor is all it can use.
	runtime.GOMAXPROCS(1)
	r := bufio.NewReader(in)
	w := bufio.NewWriter(out)
	answer := func(v any) bool {
		b, _ := json.Marshal(v)
		_, _ = w.Write(append(b, '\n'))
		return w.Flush() == nil
	}
	line, err := r.ReadBytes('\n')
	if err != nil {
		return 1
	}
	var setup evalSetup
	if err := json.Unmarshal(line, &setup); err != nil {
		answer(evalReady{Error: "bad setup: " + err.Error()})
		return 1
	}
	if err := limitAddressSpace(setup.Headroom); err != nil {
		answer(evalReady{Error: err.Error()})
		return 1
	}
	if !answer(evalReady{Ready: true}) {
		return 1
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return 0 // the worker closed its end (or died)
		}
		resp, limits := serveOne(line)
		if b, _ := json.Marshal(resp); len(b) > maxAnswer(limits) {
			resp = evalResponse{Error: memoryErr(limits.Memory).Error(), Kind: "memory"}
		}
		if !answer(resp) {
			return 0
		}
	}
}

// limitAddressSpace caps the process's address space at what it maps now
// plus headroom, and has the garbage collector work harder as the heap
// nears that cap, so that garbage left by earlier evaluations is collected
// before the cap is reached.
func limitAddressSpace(headroom uint64) error {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return fmt.Errorf("the condition evaluator needs /proc (Linux) to limit its memory: %w", err)
	}
	pages, err := strconv.ParseUint(strings.Fields(string(b))[0], 10, 64)
	if err != nil {
		return fmt.Errorf("reading /proc/self/statm: %w", err)
	}
	limit := pages*uint64(os.Getpagesize()) + headroom
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_AS, &was); err != nil {
		return fmt.Errorf("reading the evaluator's address-space limit: %w", err)
	}
	// A stricter limit set from outside (ulimit -v) stays.
	if was.Cur > limit {
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
			return fmt.Errorf("limiting the evaluator's address space: %w", err)
		}
	}
	total := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(total)
	debug.SetMemoryLimit(int64(total[0].Value.Uint64() + headroom/2))
	return nil
}

// serveOne evaluates one request line. A panic in the interpreter is the
// condition's error, not the process's end.
func serveOne(line []byte) (resp evalResponse, limits evalLimits) {
	var req evalRequest
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		return evalResponse{Error: "bad request: " + err.Error()}, req.Limits
	}
	limits = req.Limits
	watchdog := time.AfterFunc(req.Limits.Time+watchdogGrace, func() { os.Exit(exitWatchdog) })
	defer watchdog.Stop()
	defer func() {
		if r := recover(); r != nil {
			resp = evalResponse{Error: fmt.Sprintf("the condition's evaluation failed: %v", r)}
		}
	}()
	meter := newAllocMeter()
	defer func() {
		// Give back at once what a big evaluation took, rather than keep
		// it until the runtime's scavenger gets to it.
		if meter.allocated() > 4<<20 {
			debug.FreeOSMemory()
		}
	}()
	prog := &program{src: req.Src, script: req.Script, empty: strings.TrimSpace(req.Src) == ""}
	v, err := evaluate(prog, req.Fields, req.Now, req.Limits)
	switch {
	case errors.Is(err, errMemory):
		return evalResponse{Error: err.Error(), Kind: "memory"}, req.Limits
	case errors.Is(err, errBudget):
		return evalResponse{Error: err.Error(), Kind: "budget"}, req.Limits
	case err != nil:
		return evalResponse{Error: err.Error()}, req.Limits
	}
	return evalResponse{Send: v.send, HasList: v.hasList, DataList: v.dataList}, req.Limits
}
