//go:build unix

package embedded

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// mapFile maps the first n bytes of f read-only.
func mapFile(f *os.File, n int) ([]byte, func(), error) {
	data, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED|mapPopulate)
	if err != nil {
		return nil, nil, err
	}
	return data, func() { syscall.Munmap(data) }, nil
}

// lockDir takes an exclusive flock on the directory itself, so that one
// Open at a time creates, checks or opens its data file.
func lockDir(dir string, timeout time.Duration, shared bool) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("embedded: open directory: %w: %w", crdt.ErrUnavailable, err)
	}
	deadline := time.Now().Add(timeout)
	for {
		how := syscall.LOCK_EX
		if shared {
			how = syscall.LOCK_SH
		}
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("embedded: lock directory %s: %w: %w", dir, crdt.ErrUnavailable, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
