package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/counterkit/counterkit/crdt"
)

// Backup writes a consistent copy of the store into dir, which must not
// exist or be empty, while writes go on; Open(dir, ...) opens it. The copy
// is checked as Open checks a file before it gets FileName, so dir holds a
// complete backup or none. It fails with an error wrapping
// crdt.ErrInvalidConfig when dir holds files, ErrLocked when another DB or
// Backup holds dir, crdt.ErrUnavailable when dir cannot be written,
// crdt.ErrCorruptEncoding when the store fails the check, or ctx's error.
func (d *DB) Backup(ctx context.Context, dir string) (err error) {
	if d.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("embedded: backup: empty directory name: %w", crdt.ErrInvalidConfig)
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("embedded: backup: %w: %w", crdt.ErrUnavailable, err)
		}
	case err != nil:
		return fmt.Errorf("embedded: backup: %w: %w", crdt.ErrUnavailable, err)
	case len(entries) > 0:
		return fmt.Errorf("embedded: backup: %s holds %s: %w", dir, entries[0].Name(), crdt.ErrInvalidConfig)
	}
	lock, err := lockDir(dir, d.opts.LockTimeout)
	if err != nil {
		return err
	}
	defer lock.Close()
	path := filepath.Join(dir, FileName)
	tmp := path + ".new"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("embedded: backup: %w: %w", crdt.ErrUnavailable, err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			os.Remove(tmp)
		}
	}()
	_, err = d.writeBackup(ctx, f, nil)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	f = nil
	if err != nil {
		return backupError(ctx, err)
	}
	if !d.opts.unchecked {
		walk, err := checkPath(tmp)
		if err == nil {
			err = walk.compareDigests()
		}
		if err != nil {
			return checkError(tmp, err)
		}
	}
	return install("backup", tmp, path)
}

// ctxWriter stops a copy when its context is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
