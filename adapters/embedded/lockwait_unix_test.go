//go:build unix

package embedded_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
)

// TestOpenWaitsForTheDataFilesLock: once Open holds the directory, the
// data file's lock can only be held by a reader or, for an instant, by a
// subprocess that inherited a just-closed file (a fork shares the lock
// until the child runs its program; under load that took over 100 ms and
// failed a test run). Open then waits for it at least
// DefaultLockTimeout, whatever a shorter LockTimeout asks, while another
// DB on the directory is still refused within LockTimeout.
func TestOpenWaitsForTheDataFilesLock(t *testing.T) {
	dir, f := lockedDataFile(t, syscall.LOCK_SH)
	released := make(chan struct{})
	go func() {
		time.Sleep(100 * time.Millisecond)
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		close(released)
	}()
	db, err := embedded.Open(dir, embedded.Options{LockTimeout: time.Millisecond})
	require.NoError(t, err, "the data file's lock is waited for")
	<-released

	_, err = embedded.Open(dir, embedded.Options{LockTimeout: time.Millisecond})
	require.ErrorIs(t, err, embedded.ErrLocked, "the directory's is not")
	require.NoError(t, db.Close())
}

// TestDataFileLockWaitsAtLeastDefault: a data file's lock held for good
// is given up no sooner than DefaultLockTimeout, by Open and by the
// functions that open a closed store (the engine stops one retry interval
// short of the timeout it is given: it gave up after 960 ms).
func TestDataFileLockWaitsAtLeastDefault(t *testing.T) {
	dir, _ := lockedDataFile(t, syscall.LOCK_EX)
	ctx := context.Background()
	for name, open := range map[string]func() error{
		"Open": func() error {
			_, err := embedded.Open(dir, embedded.Options{LockTimeout: time.Millisecond})
			return err
		},
		"Open 1 s":  func() error { _, err := embedded.Open(dir, embedded.Options{}); return err },
		"read-only": func() error { _, err := embedded.Open(dir, embedded.Options{ReadOnly: true}); return err },
		"Keys":      func() error { _, err := embedded.Keys(ctx, dir); return err },
	} {
		start := time.Now()
		err := open()
		waited := time.Since(start)
		require.ErrorIs(t, err, embedded.ErrLocked, name)
		require.GreaterOrEqual(t, waited, embedded.DefaultLockTimeout, "%s gave up the data file's lock early", name)
	}
}

// lockedDataFile makes a store, closes it, and takes its data file's lock
// (how: syscall.LOCK_SH or LOCK_EX) on a file the test closes at its end.
func lockedDataFile(t *testing.T, how int) (dir string, f *os.File) {
	t.Helper()
	dir = t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	require.NoError(t, db.Close())
	f, err = os.Open(filepath.Join(dir, embedded.FileName))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	require.NoError(t, syscall.Flock(int(f.Fd()), how))
	return dir, f
}
