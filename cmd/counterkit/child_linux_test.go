package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
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
