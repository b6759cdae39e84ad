//go:build unix

package main

import (
	"bytes"
	"context"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/ledger"
)

// TestProcess builds the service, runs it on a free port with a fresh data
// directory, makes requests over HTTP, stops it with SIGTERM, and checks that
// a second process on the same directory serves the same balances and still
// recognises the first one's transactions.
func TestProcess(t *testing.T) {
	if testing.Short() && !raceEnabled {
		t.Skip("-short: the process test builds and runs the service binary (the race pass runs it)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("cannot build the service binary: no go command in PATH (%v); the handler tests ran in process", err)
	}
	bin := filepath.Join(t.TempDir(), "service")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race") // the test binary's packages are in the cache already
	}
	build := exec.Command(goTool, append(args, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data := t.TempDir()

	p := startProcess(t, bin, data)
	var w writeResponse
	callJSON(t, p.url, "POST", "/accounts/alice/credit", `{"txn": "t1", "amount": 100}`, http.StatusOK, &w)
	callJSON(t, p.url, "POST", "/accounts/alice/debit", `{"txn": "t2", "amount": 30}`, http.StatusOK, &w)
	callJSON(t, p.url, "POST", "/accounts/bob/credit", `{"txn": "t1", "amount": 12}`, http.StatusOK, &w)
	callJSON(t, p.url, "POST", "/accounts/bob/credit", `{"txn": "t1", "amount": 12}`, http.StatusOK, &w)
	if w.Outcome != "duplicate" {
		t.Fatalf("retry: %+v", w)
	}
	want := map[string]int64{"alice": 70, "bob": 12}
	for acct, v := range want {
		if got := balance(t, p.url, acct); got != v {
			t.Fatalf("%s: %d, want %d", acct, got, v)
		}
	}
	if status, b := call(t, p.url, "GET", "/metrics", ""); status != http.StatusOK ||
		!strings.Contains(string(b), `counterkit_operation_duration_seconds_count{counterkit_component="ledger",counterkit_operation="update",counterkit_outcome="duplicate"} 1`) {
		t.Fatalf("/metrics: %d\n%s", status, b)
	}
	// An online backup, restored beside the running store, holds the
	// same balances.
	resp, err := http.Get(p.url + "/admin/backup")
	if err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(t.TempDir(), "copy")
	_, err = embedded.Restore(context.Background(), resp.Body, copyDir)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("restore the online backup: %v", err)
	}
	db, err := embedded.Open(copyDir, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for acct, v := range want {
		l, err := ledger.New(db.Siblings(), accountKey(acct), ledger.Options{Actor: "backup-check"})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := l.Value(context.Background()); err != nil || got != v {
			t.Fatalf("the backup's %s: %d (%v), want %d", acct, got, err, v)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	p.stop(t)

	p = startProcess(t, bin, data)
	for acct, v := range want {
		if got := balance(t, p.url, acct); got != v {
			t.Fatalf("after the restart %s: %d, want %d", acct, got, v)
		}
	}
	// The restarted process is a new incarnation, and still recognises
	// the first one's transactions.
	callJSON(t, p.url, "POST", "/accounts/alice/credit", `{"txn": "t1", "amount": 100}`, http.StatusOK, &w)
	if w.Outcome != "duplicate" || w.Balance != 70 {
		t.Fatalf("retry after the restart: %+v", w)
	}
	callJSON(t, p.url, "POST", "/accounts/alice/credit", `{"txn": "t3", "amount": 5}`, http.StatusOK, &w)
	var h historyResponse
	callJSON(t, p.url, "GET", "/accounts/alice/history", "", http.StatusOK, &h)
	if h.Balance != 75 || len(h.Actors) != 2 {
		t.Fatalf("history after the restart: %d actors, balance %d, want 2 incarnations and 75", len(h.Actors), h.Balance)
	}
	p.stop(t)
}

// process is a running service.
type process struct {
	cmd  *exec.Cmd
	url  string
	log  *logBuffer
	done chan error
}

var listening = regexp.MustCompile(`msg=listening addr=(\S+)`)

// startProcess runs bin on a free port (-addr 127.0.0.1:0) with data and
// waits for the log line that names the port.
func startProcess(t *testing.T, bin, data string) *process {
	t.Helper()
	p := &process{log: &logBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(bin, "-addr", "127.0.0.1:0", "-data", data, "-actor", "proc-test", "-shutdown-timeout", "5s")
	p.cmd.Stdout = p.log
	p.cmd.Stderr = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := listening.FindStringSubmatch(p.log.String()); m != nil {
			p.url = "http://" + m[1]
			return p
		}
		select {
		case err := <-p.done:
			p.done <- err
			t.Fatalf("the service exited before listening (%v):\n%s", err, p.log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service did not say where it listens within 10s:\n%s", p.log)
		}
	}
}

// stop sends SIGTERM and checks that the process exits 0, having landed
// its pending writes and closed the store. The 30 s limit is a liveness
// guard for a loaded CI machine, not a measurement.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		p.done <- err
		if err != nil {
			t.Fatalf("the service exited with %v after SIGTERM:\n%s", err, p.log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the service did not exit within 30s of SIGTERM:\n%s", p.log)
	}
	for _, want := range []string{"shutting down", "pending writes landed", "msg=stopped"} {
		if !strings.Contains(p.log.String(), want) {
			t.Fatalf("the log lacks %q:\n%s", want, p.log)
		}
	}
}

// logBuffer collects a process's output; it is safe for concurrent use.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
