package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// Postgres is a PostgreSQL server of a test's own, for tests that restart
// the database: restarting the shared server would break every other test
// running at the same time.
type Postgres struct {
	// URL is the server's maintenance database; DatabaseURL names another.
	URL    string
	port   int
	dir    string
	bin    string
	asUser []string
	t      testing.TB
}

// PrivatePostgres initialises and starts a throw-away PostgreSQL server from
// the locally installed server binaries, stopped and removed when the test
// ends. The test is skipped when no server binaries are installed (CI
// installs them: see .ci/run).
func PrivatePostgres(t testing.TB) *Postgres {
	t.Helper()
	bin := postgresBin()
	if bin == "" {
		t.Skip("no PostgreSQL server binaries (initdb, pg_ctl) installed: apt-get install postgresql")
	}
	dir, err := os.MkdirTemp("", "wharf-pg-")
	if err != nil {
		t.Fatal(err)
	}
	p := &Postgres{dir: dir, bin: bin, t: t}
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(p.data(), "postmaster.pid")); err == nil {
			p.pgctl("stop", "-m", "immediate")
		}
		_ = os.RemoveAll(dir)
	})
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: the server runs as postgres.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root without a postgres user to run the server as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		p.asUser = []string{"runuser", "-u", "postgres", "--"}
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p.port = freePort(t)
	p.run(filepath.Join(bin, "initdb"), "-D", p.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	p.pgctl("start")
	p.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
	return p
}

// DatabaseURL is the URL of database name on this server (the api creates
// it when it starts).
func (p *Postgres) DatabaseURL(name string) string { return withDB(p.URL, name) }

// RestartImmediately restarts the server the hard way (pg_ctl restart -m
// immediate): every connection drops at once, as in a crash, and the
// server recovers from its log.
func (p *Postgres) RestartImmediately() { p.pgctl("restart", "-m", "immediate") }

func (p *Postgres) data() string { return filepath.Join(p.dir, "data") }

func (p *Postgres) pgctl(args ...string) {
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off", p.port, p.dir)
	full := append([]string{"-D", p.data(), "-l", filepath.Join(p.dir, "server.log"), "-w"}, args...)
	if args[0] != "stop" {
		full = append(full, "-o", opts)
	}
	p.run(filepath.Join(p.bin, "pg_ctl"), full...)
}

func (p *Postgres) run(name string, args ...string) {
	argv := append(append(append([]string{}, p.asUser...), name), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(p.dir, "server.log"))
		p.t.Fatalf("%s %v: %v\n%s\nserver log:\n%s", filepath.Base(name), args, err, out, log)
	}
}

// postgresBin finds the directory of initdb and pg_ctl.
func postgresBin() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	if len(matches) == 0 {
		return ""
	}
	sort.Slice(matches, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[i]))))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(matches[j]))))
		return vi < vj
	})
	return filepath.Dir(matches[len(matches)-1])
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
