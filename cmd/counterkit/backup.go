package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
)

const backupUsage = `usage: counterkit backup -store embedded:DIR -to BACKUPDIR

Writes a consistent copy of an embedded store into BACKUPDIR (a directory
that does not exist, or an empty one, which is replaced) with the adapter's online backup (DB.Backup), then opens
the copy, verifies it (DB.Verify) and compares its keys with the store's.
BACKUPDIR is itself a data directory: restore by pointing a service (or
-store embedded:BACKUPDIR) at it, or by moving its files into place while
the service is stopped.

The command opens DIR itself, so a service must not hold it (it fails with
embedded.ErrLocked); a running service takes a backup by calling
DB.Backup(ctx, dir) on the DB it holds.
`

// backuper is an embedded store that can copy itself while in use.
type backuper interface {
	Backup(ctx context.Context, dir string) error
}

// openBackupSource opens the store a backup copies; tests replace it.
var openBackupSource = func(dir string) (backupSource, error) { return openEmbedded(dir) }

// backupSource is an open embedded store.
type backupSource interface {
	Close() error
}

var _ backupSource = (*embedded.DB)(nil)

// backupResult is what backup prints.
type backupResult struct {
	From string `json:"from"`
	To   string `json:"to"`
	Keys int    `json:"keys"`
}

func (r *backupResult) writeTable(w io.Writer) {
	fmt.Fprintf(w, "backed up %s into %s: %s, verified\n", r.From, r.To, plural(r.Keys, "key"))
}

func runBackup(args []string, stdout, stderr io.Writer) int {
	c := newCommand("backup", backupUsage, stderr)
	cf := addEmbeddedFlags(c.fs)
	to := c.fs.String("to", "", "the directory to write the backup to (new or empty)")
	if code := c.parse(args); code >= 0 {
		return code
	}
	dir, err := embeddedDir(c, cf, "backup")
	if err != nil {
		return fail(stderr, "backup", err)
	}
	if err := emptyTarget(*to, dir); err != nil {
		return fail(stderr, "backup", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout)
	defer cancel()
	res, err := backup(ctx, dir, *to)
	if err != nil {
		return fail(stderr, "backup", err)
	}
	return c.emit(stdout, res)
}

func backup(ctx context.Context, dir, to string) (*backupResult, error) {
	abs, err := filepath.Abs(to)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", crdt.ErrInvalidConfig, err)
	}
	before, err := listEmbedded(ctx, dir, listOptions{})
	if err != nil {
		return nil, err
	}
	err = withDeadline(ctx, func() error {
		db, err := openBackupSource(dir)
		if err != nil {
			return err
		}
		defer db.Close()
		b, ok := db.(backuper)
		if !ok {
			return fmt.Errorf("%w: this build's embedded adapter has no online backup (DB.Backup)", crdt.ErrUnavailable)
		}
		// Backup makes the directory: an empty one given is removed first.
		if err := os.Remove(abs); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %v", crdt.ErrUnavailable, err)
		}
		return b.Backup(ctx, abs)
	})
	if err != nil {
		return nil, err
	}
	// The copy opens, verifies and holds the same keys.
	err = withDeadline(ctx, func() error {
		db, err := openEmbedded(to)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.Verify()
	})
	if err != nil {
		return nil, fmt.Errorf("the backup in %s does not verify: %w", to, err)
	}
	after, err := listEmbedded(ctx, to, listOptions{})
	if err != nil {
		return nil, err
	}
	if len(after.Keys) != len(before.Keys) {
		return nil, fmt.Errorf("%w: the backup in %s holds %d keys, the store %d", crdt.ErrCorruptEncoding, to, len(after.Keys), len(before.Keys))
	}
	for i := range before.Keys {
		if before.Keys[i] != after.Keys[i] {
			return nil, fmt.Errorf("%w: the backup in %s holds other keys than %s", crdt.ErrCorruptEncoding, to, dir)
		}
	}
	return &backupResult{From: dir, To: to, Keys: len(after.Keys)}, nil
}
