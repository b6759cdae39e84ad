//go:build !unix

package embedded

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// mapFile reads the first n bytes of f (no mapping here).
func mapFile(f *os.File, n int) ([]byte, func(), error) {
	data := make([]byte, n)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, int64(n)), data); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}

// lockDir holds the directory open; the data file's own lock (the
// engine's) keeps a second DB out. Concurrent first Opens are serialised
// on unix systems only.
func lockDir(dir string, _ time.Duration, _ bool) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("embedded: open directory: %w: %w", crdt.ErrUnavailable, err)
	}
	return f, nil
}
