package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
)

const gcRecordsUsage = `usage: counterkit gc records -store embedded:DIR [-after DURATION] [-retry-window DURATION] [-dry-run]

Deletes the transaction records of ledgers and bounded Accounts that no
retry window can need any more (ledger.ExpireAllRecords): each key that
starts with ledger.RecordKeyPrefix and whose every sibling is a record
made more than -after ago, but the newest credit's and debit's record
of each live writer, which date it for retirement (dating; SPEC.md 6.11,
"Storage"). A sibling that is not a record keeps its key and is
reported (crdt.ErrCorruptEncoding, exit status 1). The embedded
store has no TTL: a program that does not run this sweep on a timer
itself (examples/service does, every hour) leaves a key per transaction.
-after must be at least the longest RetryWindow of the store's ledgers
and Accounts plus their FutureSkew and clock skew (SPEC.md 6.11,
"Storage"); 0 means ledger.DefaultExpireAfter (25h). An -after below
-retry-window (that longest RetryWindow; 0: 24h) is refused: it would
delete records that retries inside the window need. With -dry-run it
counts what it would delete and deletes nothing. The directory must not
be in use by a service.
`

// gcRecordsResult is what gc records prints.
type gcRecordsResult struct {
	Store   string `json:"store"`
	DryRun  bool   `json:"dry_run"`
	After   string `json:"after"`
	Deleted int    `json:"deleted"`
	Kept    int    `json:"kept"`
	Dating  int    `json:"dating"`
	Empty   int    `json:"empty"`
	Damaged int    `json:"damaged"`
	// Errors: one per damaged key, and the failure that ended the sweep,
	// each with the sentinels it wraps, as a job's results give them.
	Errors []sweepError `json:"errors,omitempty"`
}

func (r *gcRecordsResult) writeTable(w io.Writer) {
	fmt.Fprintf(w, "%s %s older than %s; kept %s, %d dating a live writer, %d damaged%s\n", cli.Either(r.DryRun, "would delete", "deleted"),
		plural(r.Deleted, "record key"), r.After, plural(r.Kept, "key"), r.Dating, r.Damaged, cli.Either(r.DryRun, " (dry run: nothing written)", ""))
}

// sweepError is an error of the sweep and the sentinels it wraps.
type sweepError struct {
	Error    string `json:"error"`
	Sentinel string `json:"sentinel,omitempty"`
}

// keepRecords is a dry run's store: the sweep reads and judges every
// record, and its deletes do nothing.
type keepRecords struct{ *embedded.Siblings }

func (keepRecords) Delete(context.Context, string, store.Token) error { return nil }

func (keepRecords) DeleteBatch(context.Context, []string, []store.Token) error { return nil }

func runGCRecords(args []string, stdout, stderr io.Writer) int {
	c := newCommand("gc records", gcRecordsUsage, stderr)
	cf := addEmbeddedFlags(c.fs)
	after := c.fs.Duration("after", 0, "delete records made more than this long ago (0: ledger.DefaultExpireAfter, 25h)")
	window := c.fs.Duration("retry-window", 0, "the longest RetryWindow of the store's ledgers and Accounts (0: ledger.DefaultRetryWindow, 24h); a shorter -after is refused")
	dry := c.fs.Bool("dry-run", false, "count what would be deleted; delete nothing")
	if code := c.parse(args); code >= 0 {
		return code
	}
	dir, err := embeddedDir(c, cf)
	least := cmp.Or(*window, ledger.DefaultRetryWindow)
	err = cmp.Or(err, invalidIf(*after < 0, "-after must not be negative, not %s", *after),
		invalidIf(*window < 0, "-retry-window must not be negative, not %s", *window),
		invalidIf(*after > 0 && *after < least, "-after %s is shorter than -retry-window %s: it would delete records that retries inside the window need (SPEC.md 6.11, \"Storage\")", *after, least))
	if err != nil {
		return fail(stderr, c.name, err)
	}
	db, err := openEmbedded(dir, !*dry)
	if err != nil {
		return fail(stderr, c.name, err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout)
	defer cancel()
	var st interface {
		store.SiblingDeleter
		ledger.KeyLister
		store.Siblings
	} = db.Siblings()
	if *dry {
		st = keepRecords{db.Siblings()}
	}
	res, err := ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{After: *after})
	out := &gcRecordsResult{Store: "embedded:" + dir, DryRun: *dry, After: cmp.Or(*after, ledger.DefaultExpireAfter).String(),
		Deleted: res.Deleted, Kept: res.Kept, Dating: res.Dating, Empty: res.Empty, Damaged: res.Damaged}
	if err != nil {
		for _, e := range unjoin(err) {
			if errors.Is(e, context.DeadlineExceeded) {
				e = fmt.Errorf("%w: the sweep did not finish within -timeout and was stopped (%v); %s", crdt.ErrUnavailable, e,
					cli.Either(*dry, "a dry run deleted nothing", "what it deleted stays deleted, and the next sweep takes up the rest"))
			}
			out.Errors = append(out.Errors, sweepError{Error: redact(e), Sentinel: sentinelName(e)})
			fail(stderr, c.name, e)
		}
	}
	return cmp.Or(c.emit(stdout, out), cli.Either(err != nil, 1, 0))
}

// unjoin returns the errors errors.Join joined into err, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
