package apptest

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"wharf/app"
	"wharf/internal/infra/config"
	"wharf/internal/testenv"
	"wharf/platformsim"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// binary builds a command of this module once per test binary.
func binary(t testing.TB, name string) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "wharf-bin-")
		if buildErr != nil {
			return
		}
		for _, cmd := range []string{"worker", "api", "callbridge"} {
			out, err := exec.Command("go", "build", "-o", filepath.Join(buildDir, cmd), "wharf/cmd/"+cmd).CombinedOutput()
			if err != nil {
				buildErr = &buildError{string(out)}
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return filepath.Join(buildDir, name)
}

type buildError struct{ out string }

func (e *buildError) Error() string { return e.out }

// Process is a Wharf binary running as its own OS process.
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}
}

// Kill ends the process with SIGKILL: no cleanup, like a crash.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.done
}

// Stop ends the process with SIGTERM and waits for its graceful shutdown.
func (p *Process) Stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	<-p.done
}

// StartWorkerProcess runs bin/worker against the system (extra environment
// variables added) until the test ends, and returns once its health
// endpoint answers: the worker has connected and registered its handlers,
// so a test's waits do not include the process's start (seconds on a
// loaded machine). HEALTH_ADDR is a free loopback port unless extra names
// one.
func (e *Env) StartWorkerProcess(extra map[string]string) *Process {
	e.T.Helper()
	env := map[string]string{"HEALTH_ADDR": fmt.Sprintf("127.0.0.1:%d", freePort(e.T))}
	maps.Copy(env, extra)
	p := e.startProcess("worker", env)
	Eventually(e.T, 30*time.Second, "the worker process to answer", func() bool {
		return app.Probe(context.Background(), "http://"+env["HEALTH_ADDR"]+"/healthz") == nil
	})
	return p
}

// StartAPIProcess runs bin/api against the system as a second replica, in a
// process of its own (so that its CPU time can be read from /proc), and
// returns it with its base URL once it answers /readyz.
func (e *Env) StartAPIProcess(extra map[string]string) (*Process, string) {
	e.T.Helper()
	port := freePort(e.T)
	env := map[string]string{"HTTP_ADDR": fmt.Sprintf("127.0.0.1:%d", port)}
	maps.Copy(env, extra)
	p := e.startProcess("api", env)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	Eventually(e.T, 30*time.Second, "the api process to answer", func() bool { return app.Probe(context.Background(), base+"/readyz") == nil })
	return p, base
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (e *Env) startProcess(name string, extra map[string]string) *Process {
	e.T.Helper()
	cmd := exec.Command(binary(e.T, name))
	cmd.Env = append(os.Environ(), "LOG_LEVEL=error")
	for k, v := range e.Environ {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	for k, v := range extra {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	e.T.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.Kill()
		}
	})
	return p
}

// StartScheduler runs a scheduler in-process until the test ends.
func (e *Env) StartScheduler() *app.Scheduler {
	e.T.Helper()
	cfg, err := config.LoadSchedulerFrom(e.Environ)
	if err != nil {
		e.T.Fatal(err)
	}
	s, err := app.NewScheduler(context.Background(), cfg, testenv.Quiet())
	if err != nil {
		e.T.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	e.T.Cleanup(func() { cancel(); <-done; s.Close() })
	return s
}

// Fixture is a system with a simulator, a connected account and the
// bootstrap admin's session.
type Fixture struct {
	*SimEnv
	Admin     Session
	AccountID string
	OrgID     string
}

// NewFixture starts a system with a simulator and connects an account.
func NewFixture(t testing.TB, overrides map[string]string, sim func(*platformsim.Config)) *Fixture {
	e := NewWithSim(t, overrides, sim)
	admin := e.Env.Admin()
	f := &Fixture{SimEnv: e, Admin: admin, OrgID: admin.User.OrganizationID}
	f.AccountID = e.ConnectAccount(admin.Auth(), "Main")
	return f
}
