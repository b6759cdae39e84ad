package embedded

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/counterkit/counterkit/crdt"
	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the store into dir, which must not
// exist or be empty, while writes go on; Open(dir, ...) opens it. The copy
// is written as CopyTempName and checked as Open checks a file before it
// gets FileName, so dir holds a complete backup or none: a dir that holds
// only an interrupted Backup's CopyTempName is refused by Open
// (crdt.ErrMisconfiguredStore) and taken by a new Backup. It fails with
// an error wrapping crdt.ErrInvalidConfig when dir holds other files,
// ErrLocked when another DB or Backup holds dir, crdt.ErrUnavailable when
// dir cannot be written, crdt.ErrCorruptEncoding when the store fails the
// check, or ctx's error.
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
	if err := copyTarget("backup", dir, false); err != nil {
		return err
	}
	return writeInto("backup", dir, d.opts.LockTimeout, func() error { return copyTarget("backup", dir, true) }, func(tmp string) error {
		f, err := os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("embedded: backup: %w: %w", crdt.ErrUnavailable, err)
		}
		_, err = d.writeBackup(ctx, f, nil)
		return backupError(ctx, syncClose(f, err))
	}, func(tmp string) error {
		if d.opts.unchecked {
			return nil
		}
		r, err := openChecked(tmp, fileLockTimeout(d.opts.LockTimeout), false)
		if err == nil {
			r.db.Close()
		}
		return err
	})
}

// CopyTempName is the file Backup and Compact write and check before it
// gets FileName: a directory holding only it holds an interrupted copy.
const CopyTempName = FileName + ".copy"

// writeInto makes dir's data file under dir's lock (dir made if absent,
// and removed on failure): prepare (if not nil) refuses an unfit dir,
// write fills CopyTempName, check checks it, and only then does it get
// FileName, durably; op names the operation in errors.
func writeInto(op, dir string, timeout time.Duration, prepare func() error, write, check func(tmp string) error) (err error) {
	_, statErr := os.Stat(dir)
	if err := makeDir(dir); err != nil {
		return fmt.Errorf("embedded: %s: %w: %w", op, crdt.ErrUnavailable, err)
	}
	lock, err := lockDir(dir, timeout, false)
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
	path, tmp := filepath.Join(dir, FileName), filepath.Join(dir, CopyTempName)
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

// WriteBackup writes a consistent copy of the store's data file (one read
// transaction's version, holding every write acknowledged before the call)
// to w while writes go on, and returns the bytes written; Restore reads it
// back. The engine cannot grow its mapping until the copy is written, so a
// write that needs a larger file waits: give ctx a deadline when w may
// stall. It fails with ErrClosed, ctx's error, or an error wrapping
// crdt.ErrUnavailable and the cause.
func (d *DB) WriteBackup(ctx context.Context, w io.Writer) (int64, error) {
	return d.writeBackup(ctx, w, nil)
}

// writeBackup is WriteBackup; start, if not nil, is called with the
// copy's size before its first byte is written.
func (d *DB) writeBackup(ctx context.Context, w io.Writer, start func(size int64)) (n int64, err error) {
	if d.closed.Load() {
		return 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	err = d.view(func(tx *bolt.Tx) error {
		if start != nil {
			start(tx.Size())
		}
		n, err = tx.WriteTo(ctxWriter{ctx, w})
		return err
	})
	return n, backupError(ctx, err)
}

// backupError is a failed copy's error: ctx's when it is done, else err
// made to wrap crdt.ErrUnavailable unless it wraps crdt.ErrCorruptEncoding.
func backupError(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, crdt.ErrUnavailable), errors.Is(err, crdt.ErrCorruptEncoding):
		return err
	}
	return fmt.Errorf("embedded: backup: %w: %w", crdt.ErrUnavailable, err)
}

// BackupHandler returns an http.Handler that answers GET with WriteBackup's
// copy as application/octet-stream with its Content-Length; an error after
// the first byte aborts the response, so the client sees a short body.
// Other methods get 405, a closed DB 503. Mount it on an administrative
// mux only: it serves every byte of the store.
//
//	admin.Handle("GET /debug/counterkit/backup", db.BackupHandler())
func (d *DB) BackupHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "counterkit backup: GET only", http.StatusMethodNotAllowed)
			return
		}
		started := false
		_, err := d.writeBackup(r.Context(), w, func(size int64) {
			started = true
			h := w.Header()
			h.Set("Content-Type", "application/octet-stream")
			h.Set("Content-Length", strconv.FormatInt(size, 10))
			h.Set("Content-Disposition", `attachment; filename="`+FileName+`"`)
			h.Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusOK)
		})
		switch {
		case err == nil:
		case started:
			panic(http.ErrAbortHandler) // the client must not take a short copy for a whole one
		case errors.Is(err, crdt.ErrUnavailable):
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		default:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		}
	})
}

// Restore makes the data directory dir, which must not exist or be empty,
// from a copy read from r (WriteBackup's) and returns the bytes read. The
// copy is written into a new directory beside dir (".BASE.restore-*"),
// opened and verified, and only then renamed to dir; on failure it is
// removed and dir is left as it was. It fails with an error wrapping
// crdt.ErrInvalidConfig when dir holds files, crdt.ErrCorruptEncoding when
// the copy is damaged or truncated, crdt.ErrMisconfiguredStore when it is
// not a store, crdt.ErrUnavailable when r fails or dir cannot be written,
// or ctx's error.
func Restore(ctx context.Context, r io.Reader, dir string) (n int64, err error) {
	if dir == "" {
		return 0, fmt.Errorf("embedded: restore: empty directory name: %w", crdt.ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := emptyOrAbsent("restore", dir); err != nil {
		return 0, err
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return 0, fmt.Errorf("embedded: restore: %w: %w", crdt.ErrUnavailable, err)
	}
	stage, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".restore-")
	if err != nil {
		return 0, fmt.Errorf("embedded: restore: %w: %w", crdt.ErrUnavailable, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(stage)
		}
	}()
	f, err := os.OpenFile(filepath.Join(stage, FileName), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, fmt.Errorf("embedded: restore: %w: %w", crdt.ErrUnavailable, err)
	}
	n, err = io.Copy(ctxWriter{ctx, f}, r)
	if err = syncClose(f, err); err != nil {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		return n, fmt.Errorf("embedded: restore: reading the copy failed after %d bytes: %w: %w", n, crdt.ErrUnavailable, err)
	}
	if n == 0 {
		return 0, fmt.Errorf("embedded: restore: the copy is empty: %w", crdt.ErrCorruptEncoding)
	}
	if err := syncDir(stage); err != nil {
		return n, fmt.Errorf("embedded: restore: %w: %w", crdt.ErrUnavailable, err)
	}
	if !restoreUnchecked {
		db, err := Open(stage, Options{})
		if err != nil {
			return n, fmt.Errorf("embedded: restore: the copy (%d bytes) does not open: %w", n, err)
		}
		err = db.Verify()
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return n, fmt.Errorf("embedded: restore: the copy (%d bytes) does not verify: %w", n, err)
		}
	}
	// A ctx ended while the copy was checked ends the restore too.
	if err = ctx.Err(); err != nil {
		return n, err
	}
	// os.Remove takes only an empty directory, and os.Rename refuses to
	// replace one that exists, so a store put into dir meanwhile is not
	// overwritten either.
	if err = os.Remove(dir); err == nil || errors.Is(err, fs.ErrNotExist) {
		err = os.Rename(stage, dir)
	}
	if err != nil {
		if e := emptyOrAbsent("restore", dir); e != nil {
			return n, e
		}
		return n, fmt.Errorf("embedded: restore: %w: %w", crdt.ErrUnavailable, err)
	}
	if err := syncDir(parent); err != nil {
		return n, fmt.Errorf("embedded: restore: sync directory: %w: %w", crdt.ErrUnavailable, err)
	}
	return n, nil
}

// restoreUnchecked skips Restore's check of the copy (tests only).
var restoreUnchecked bool

// emptyOrAbsent refuses a directory that holds files (or is not one);
// op names the operation in its errors.
func emptyOrAbsent(op, dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return fmt.Errorf("embedded: %s: %s is not a directory: %w", op, dir, crdt.ErrInvalidConfig)
		}
		return fmt.Errorf("embedded: %s: %w: %w", op, crdt.ErrUnavailable, err)
	case len(entries) > 0:
		return fmt.Errorf("embedded: %s: %s holds %s: not overwritten: %w", op, dir, entries[0].Name(), crdt.ErrInvalidConfig)
	}
	return nil
}
