package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// TestKilledCommandEndsItsChild: a command on an embedded store runs in a
// child process. Killed (SIGKILL) or terminated (SIGTERM) mid-run, the
// command takes its child with it: the store's lock is free at once, and
// nothing goes on writing (before, the child ran on, owned by init,
// holding the lock for seconds and writing to a terminal no one read).
func TestKilledCommandEndsItsChild(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 4,000 ledger keys and runs the command three times: the plain pass runs it")
	}
	dir := t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	past := time.Now().Add(-72 * time.Hour)
	keys := make([]string, 4000)
	for i := range keys {
		keys[i] = fmt.Sprintf("acct-%05d", i)
		l, err := ledger.New(db.Siblings(), keys[i], ledger.Options{Actor: "svc", Clock: func() time.Time { return past }})
		require.NoError(t, err)
		_, err = l.Credit(context.Background(), crdt.TxnID(fmt.Sprintf("t-%d", i)), 1)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), exe, "find", "ledger", "-store", "embedded:"+dir, "-progress", "0")
			cmd.Env = append(os.Environ(), asCommandEnv+"=1")
			cmd.Stdin = strings.NewReader(strings.Join(keys, "\n") + "\n")
			require.NoError(t, cmd.Start())
			// Wait until the child holds the store (the command is under way).
			deadline := time.Now().Add(time.Minute)
			for {
				db, err := embedded.Open(dir, embedded.Options{LockTimeout: 10 * time.Millisecond})
				if err != nil {
					break
				}
				db.Close()
				require.True(t, time.Now().Before(deadline), "the command never opened the store")
				time.Sleep(5 * time.Millisecond)
			}
			require.NoError(t, cmd.Process.Signal(sig))
			_ = cmd.Wait()
			db, err := embedded.Open(dir, embedded.Options{LockTimeout: 2 * time.Second})
			require.NoError(t, err, "the store is still locked 2 s after the command ended: its child runs on")
			require.NoError(t, db.Close())
		})
	}
}

// TestTerminatedBackupFromLeavesNothing: backup -from terminated
// mid-download (SIGTERM to the command, as a service manager sends) stops
// the download and leaves no directory behind, neither -to nor the one
// beside it that the copy is written into.
func TestTerminatedBackupFromLeavesNothing(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", "100000000")
		w.Write(make([]byte, 1<<20))
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done() // the rest never comes
	}))
	defer srv.Close()
	parent := t.TempDir()
	to := filepath.Join(parent, "bk")
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), exe, "backup", "-from", srv.URL+"/debug/counterkit/backup", "-to", to)
	cmd.Env = append(os.Environ(), asCommandEnv+"=1")
	var errOut strings.Builder
	cmd.Stderr = &errOut
	require.NoError(t, cmd.Start())
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the download never started")
	}
	// The first megabyte is written beside -to.
	deadline := time.Now().Add(time.Minute)
	for {
		left, _ := filepath.Glob(filepath.Join(parent, ".bk.restore-*", embedded.FileName))
		if len(left) > 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the copy was never written")
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	err = cmd.Wait()
	require.Error(t, err, "the terminated command exited 0")
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Empty(t, entries, "left beside -to after SIGTERM; the command said: %s", errOut.String())
}

// pidsWithEnv returns the pids of the processes whose environment holds
// every one of the given NAME=VALUE entries.
func pidsWithEnv(t *testing.T, entries ...string) []int {
	t.Helper()
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		env := map[string]bool{}
		for _, e := range bytes.Split(b, []byte{0}) {
			env[string(e)] = true
		}
		all := true
		for _, e := range entries {
			all = all && env[e]
		}
		if all {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			pids = append(pids, pid)
		}
	}
	return pids
}

// alive reports whether pid runs (exists and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// waitForProcess polls for the processes with entries until one shows up.
func waitForProcess(t *testing.T, entries ...string) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if p := pidsWithEnv(t, entries...); len(p) > 0 {
			return p[0]
		}
	}
	t.Fatalf("no process with %v", entries)
	return 0
}

// TestStoppedCheckEmbeddedEndsItsChild: check embedded runs its check in
// a child process of its own (checkEmbeddedIsolated), which ends with the
// command as runIsolated's does: killed, terminated or hung up, the
// command leaves no child running (before, each of the three did).
func TestStoppedCheckEmbeddedEndsItsChild(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command three times, a second each: the plain pass runs it")
	}
	dir := fixture(t)
	// The test holds the store, so the check's child waits for its lock
	// (DefaultLockTimeout, 1 s): it is alive when the command is stopped.
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer db.Close()
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			mark := fmt.Sprintf("COUNTERKIT_TEST_MARK=%d-%s", time.Now().UnixNano(), sig)
			cmd := exec.Command(exe, "check", "embedded", "-store", "embedded:"+dir)
			cmd.Env = append(os.Environ(), asCommandEnv+"=1", mark)
			require.NoError(t, cmd.Start())
			child := waitForProcess(t, mark, verifyChildEnv+"="+dir)
			require.NoError(t, cmd.Process.Signal(sig))
			_ = cmd.Wait()
			time.Sleep(50 * time.Millisecond)
			alive := alive(child)
			if alive {
				_ = syscall.Kill(child, syscall.SIGKILL) // the child this test started
			}
			require.False(t, alive, "check embedded's child (pid %d) runs on after the command was stopped with %s", child, sig)
		})
	}
}

// TestCtrlCStopsAShellLoop: Ctrl-C in a terminal sends SIGINT to the whole
// foreground group, and a shell script's loop stops when a command it runs
// dies of the interrupt. A command that passes the signal on to its child
// (startChild) must die of it too: exiting 130, it would look to the shell
// like a command that handled the interrupt, and the loop would go on.
func TestCtrlCStopsAShellLoop(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	if testing.Short() {
		t.Skip("runs a shell loop of commands: the plain pass runs it")
	}
	for _, c := range []struct{ name, body string }{
		{"control: sleep", `sleep 100`},
		// find ledger reads its keys from stdin, which stays open: the
		// child blocks there, as a long run would be under way.
		{"find ledger (isolated)", `"$EXE" find ledger -store embedded:` + t.TempDir()},
	} {
		t.Run(c.name, func(t *testing.T) {
			mark := fmt.Sprintf("COUNTERKIT_TEST_MARK=%d", time.Now().UnixNano())
			r, w, err := os.Pipe()
			require.NoError(t, err)
			defer w.Close()
			cmd := exec.Command(bash, "-c", `for i in 1 2; do `+c.body+`; echo "after $i: exit $?"; done`)
			cmd.Env = append(os.Environ(), asCommandEnv+"=1", "EXE="+exe, mark)
			cmd.Stdin = r
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			require.NoError(t, cmd.Start())
			r.Close()
			// Wait for the innermost process (sleep, or the command's child).
			if strings.HasPrefix(c.name, "control") {
				for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
					b, _ := exec.Command("pgrep", "-g", strconv.Itoa(cmd.Process.Pid), "sleep").Output()
					if len(b) > 0 {
						break
					}
					require.True(t, time.Now().Before(deadline))
				}
			} else {
				waitForProcess(t, mark, isolatedEnv+"=1")
			}
			time.Sleep(100 * time.Millisecond)
			require.NoError(t, syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)) // Ctrl-C
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var loopOn bool
			select {
			case <-done:
			case <-time.After(3 * time.Second):
				loopOn = true
			}
			w.Close() // the next turn's command reads no keys and ends
			if loopOn {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the group this test started
				<-done
			}
			t.Logf("output:\n%s", out.String())
			require.NotContains(t, out.String(), "after 1", "Ctrl-C did not stop the shell's loop: the command did not die of SIGINT")
			require.False(t, loopOn, "the loop ran on after Ctrl-C")
		})
	}
}
