package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
)

const backupUsage = `usage: counterkit backup -store embedded:DIR -to BACKUPDIR
       counterkit backup -from URL -to BACKUPDIR

Writes a consistent copy of an embedded store into BACKUPDIR, a directory
that does not exist or is empty: one that holds files is never
overwritten. BACKUPDIR is itself a data directory: restore by pointing a
service (or -store embedded:BACKUPDIR) at it, or by moving its files into
place while the service is stopped.

-store: the command opens DIR itself and copies it with the adapter's
online backup (DB.Backup), so no service may hold DIR (that fails with
embedded.ErrLocked). It then opens the copy, verifies it (DB.Verify) and
compares its keys with the store's. A check that -timeout stops is
reported as such (crdt.ErrUnavailable): the copy is written but
unchecked, and counterkit check embedded checks it.

-from: a running service serves the copy. It mounts the adapter's handler
on its administrative mux,

    admin.Handle("GET /debug/counterkit/backup", db.BackupHandler())

and the command downloads URL (http://HOST/debug/counterkit/backup: one
moment of the store, taken while the service writes) into a new directory
beside BACKUPDIR, opens it, which checks the whole file, and verifies it
(DB.Verify), and only then renames it to BACKUPDIR (embedded.Restore). A
download cut short or damaged, or interrupted (SIGINT, SIGTERM, SIGHUP)
before the checked copy is renamed, is refused and leaves nothing behind;
one killed outright (SIGKILL) leaves its directory (.BACKUPDIR.restore-*),
which you remove.
`

// backuper is an embedded store that can copy itself while in use.
type backuper interface {
	Backup(ctx context.Context, dir string) error
}

// openBackupSource opens the store a backup copies; tests replace it.
var openBackupSource = func(dir string) (backupSource, error) { return openEmbedded(dir, false) }

// backupSource is an open embedded store.
type backupSource = io.Closer

// openBackupCopy opens the copy a backup wrote, to verify it; tests
// replace it.
var openBackupCopy = func(dir string) (backupCopy, error) { return openEmbedded(dir, false) }

// backupCopy is an open copy: DB.Verify checks it.
type backupCopy interface {
	Verify() error
	io.Closer
}

// backupResult is what backup prints.
type backupResult struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Keys  int    `json:"keys"`
	Bytes int64  `json:"bytes,omitempty"` // downloaded (-from)
}

func (r *backupResult) writeTable(w io.Writer) {
	fmt.Fprintf(w, "backed up %s into %s: %s, verified\n", r.From, r.To, plural(r.Keys, "key"))
}

func runBackup(args []string, stdout, stderr io.Writer) int {
	c := newCommand("backup", backupUsage, stderr)
	cf := addEmbeddedFlags(c.fs)
	from := c.fs.String("from", "", "the URL of a running service's backup handler (embedded.DB.BackupHandler), instead of -store")
	to := c.fs.String("to", "", "the directory to write the backup to (new or empty)")
	if code := c.parse(args); code >= 0 {
		return code
	}
	if c.fs.NArg() > 0 {
		hint := ""
		if *to == "" {
			hint = fmt.Sprintf(": name the new directory with -to %s", c.fs.Arg(0))
		}
		return fail(stderr, "backup", invalidIf(true, "backup takes no arguments (got %q)%s", c.fs.Arg(0), hint))
	}
	if *from == "" && *cf.store != "" {
		return onEmbedded(c, cf, stdout, func(dir string) error { return emptyTarget(*to, dir, true) },
			func(ctx context.Context, dir string) (*backupResult, error) { return backup(ctx, dir, *to) })
	}
	// -from URL: download a running service's copy (embedded.DB.BackupHandler).
	u, uerr := url.Parse(*from)
	if err := cmp.Or(invalidIf(*from == "", "give -store embedded:DIR or -from URL"), invalidIf(*cf.store != "", "give -store or -from, not both"),
		checkTimeout(*cf.timeout),
		invalidIf(uerr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "",
			"-from must be an http:// or https:// URL of the service's backup handler, not %q", *from), emptyTarget(*to, "", false)); err != nil {
		return fail(stderr, "backup", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout)
	defer cancel()
	// Interrupted or terminated, the download stops and Restore removes
	// what it wrote (only a kill leaves its directory beside -to).
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	res, err := backupFrom(ctx, *from, *to)
	return c.emitResult(stdout, res, err)
}

func backup(ctx context.Context, dir, to string) (*backupResult, error) {
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
		return b.Backup(ctx, to)
	})
	if err != nil {
		return nil, err
	}
	// The copy opens, verifies and holds the same keys. A check that
	// -timeout stops found nothing wrong: it did not finish.
	timedOut := func(err error) bool {
		return errors.Is(err, errNotRead) || ctx.Err() != nil && errors.Is(err, ctx.Err())
	}
	unchecked := func() error {
		return fmt.Errorf("%w: the backup in %s was written but not checked within -timeout: check it with counterkit check embedded -store embedded:%s",
			crdt.ErrUnavailable, to, to)
	}
	err = withDeadline(ctx, func() error {
		db, err := openBackupCopy(to)
		if err != nil {
			return err
		}
		defer db.Close()
		return db.Verify()
	})
	switch {
	case timedOut(err):
		return nil, unchecked()
	case err != nil:
		return nil, fmt.Errorf("the backup in %s does not verify: %w", to, err)
	}
	after, err := listEmbedded(ctx, to, listOptions{})
	switch {
	case timedOut(err):
		return nil, unchecked()
	case err != nil:
		return nil, err
	}
	switch {
	case len(after.Keys) != len(before.Keys):
		return nil, fmt.Errorf("%w: the backup in %s holds %d keys, the store %d", crdt.ErrCorruptEncoding, to, len(after.Keys), len(before.Keys))
	case !slices.Equal(after.Keys, before.Keys):
		return nil, fmt.Errorf("%w: the backup in %s holds other keys than %s", crdt.ErrCorruptEncoding, to, dir)
	}
	return &backupResult{From: dir, To: to, Keys: len(after.Keys)}, nil
}

// restoreBackup makes a data directory of a downloaded copy; tests
// replace it.
var restoreBackup = embedded.Restore

// backupFrom downloads the copy at from into the new directory to.
func backupFrom(ctx context.Context, from, to string) (*backupResult, error) {
	timedOut := func() error {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: the download from %s was interrupted; nothing was written to %s", crdt.ErrUnavailable, from, to)
		}
		return fmt.Errorf("%w: the download from %s did not finish within -timeout; nothing was written to %s", crdt.ErrUnavailable, from, to)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, from, nil)
	if err != nil {
		return nil, cli.Usagef("%w: -from %q: %v", crdt.ErrInvalidConfig, from, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, timedOut()
		}
		return nil, fmt.Errorf("%w: %v", crdt.ErrUnavailable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%w: %s answered %s: %s", crdt.ErrUnavailable, from, resp.Status, strings.TrimSpace(string(body)))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
		return nil, fmt.Errorf("%w: %s served %q, not a backup (application/octet-stream): is it the service's backup handler?", crdt.ErrInvalidConfig, from, ct)
	}
	n, err := restoreBackup(ctx, resp.Body, to)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, timedOut()
	case resp.ContentLength >= 0 && n < resp.ContentLength && errors.Is(err, crdt.ErrUnavailable):
		return nil, fmt.Errorf("the download from %s was cut short after %d of %d bytes; nothing was written to %s: %w", from, n, resp.ContentLength, to, err)
	default:
		return nil, fmt.Errorf("the download from %s was refused; nothing was written to %s: %w", from, to, err)
	}
	keys, err := listEmbedded(ctx, to, listOptions{})
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("%w: the download from %s was interrupted after its copy, checked, became %s: that backup is whole, but its keys were not listed", crdt.ErrUnavailable, from, to)
		}
		return nil, fmt.Errorf("the backup in %s does not list: %w", to, err)
	}
	return &backupResult{From: from, To: to, Keys: len(keys.Keys), Bytes: n}, nil
}
