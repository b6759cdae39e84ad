package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// Backup writes a consistent copy of the store into dir, which must not
// exist or be empty, while writes go on; Open(dir, ...) opens it. The copy
// is checked as Open checks a file before it gets FileName, so dir holds a
// complete backup or none. It fails with an error wrapping
// crdt.ErrInvalidConfig when dir holds files, ErrLocked when another DB or
// Backup holds dir, crdt.ErrUnavailable when dir cannot be written,
// crdt.ErrCorruptEncoding when the store fails the check, or ctx's error.
func (d *DB) Backup(ctx context.Context, dir string) error {
	if d.closed.Load() {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if dir == "" {
		return fmt.Errorf("embedded: backup: empty directory name: %w", crdt.ErrInvalidConfig)
	}
	switch entries, err := os.ReadDir(dir); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("embedded: backup: %w: %w", crdt.ErrUnavailable, err)
	case len(entries) > 0:
		return fmt.Errorf("embedded: backup: %s holds %s: %w", dir, entries[0].Name(), crdt.ErrInvalidConfig)
	}
	return writeInto("backup", dir, d.opts.LockTimeout, nil, func(tmp string) error {
		f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("embedded: backup: %w: %w", crdt.ErrUnavailable, err)
		}
		_, err = d.writeBackup(ctx, f, nil)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return backupError(ctx, err)
	}, func(tmp string) error {
		if d.opts.unchecked {
			return nil
		}
		r, err := openChecked(tmp, d.opts.LockTimeout, false)
		if err == nil {
			r.db.Close()
		}
		return err
	})
}

// writeInto makes the data file of the directory dir, made if absent and
// then removed again on failure, under dir's lock: prepare (if not nil)
// refuses a directory unfit for it, write fills the temporary file
// FileName+".new", check checks it, and only then does it get FileName,
// durably; op names the operation in errors.
func writeInto(op, dir string, timeout time.Duration, prepare func() error, write, check func(tmp string) error) (err error) {
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("embedded: %s: %w: %w", op, crdt.ErrUnavailable, err)
	}
	lock, err := lockDir(dir, timeout)
	if err != nil {
		return err
	}
	defer lock.Close()
	defer func() {
		if err != nil && errors.Is(statErr, fs.ErrNotExist) {
			os.Remove(dir) // made here: removed if still empty
		}
	}()
	if prepare != nil {
		if err := prepare(); err != nil {
			return err
		}
	}
	path := filepath.Join(dir, FileName)
	tmp := path + ".new"
	if err = write(tmp); err == nil {
		err = check(tmp)
	}
	if err == nil {
		if err = os.Rename(tmp, path); err != nil {
			err = fmt.Errorf("embedded: %s: %w: %w", op, crdt.ErrUnavailable, err)
		} else if err = syncDir(dir); err != nil {
			return fmt.Errorf("embedded: %s: sync directory: %w: %w", op, crdt.ErrUnavailable, err)
		}
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
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
