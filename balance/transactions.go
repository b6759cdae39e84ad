package balance

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// Transactions applies credits and debits to accounts by transaction id, a
// string the caller chooses (an idempotency key), and recognises a retry of
// the transaction for RetryWindow after a merge recorded it, whatever the
// rate, the writers and the time between. A call reads the transaction's
// record and writes one N row; neither depends on the account's size.
//
// The transaction's N row is keyed by TxnRowID(txn), so every writer of
// it, and every retry, writes the same row, which counts once (SPEC.md
// 9.2). A merge records each transaction whose row it is about to sum,
// before it writes the tombstones, and settling collects those tombstones
// no sooner than SettleGrace later; a call writes its row within Deadline
// of reading the record and not at all if the record is there. SPEC.md
// 9.4 gives the protocol and the bound it needs (SettleGrace ≥ Deadline +
// SafetyMargin, which NewTransactions checks).
//
// An account's rows spread over TxnOptions.Partitions balance partitions
// (RowPartitions), each merged on its own, so that a hot account's
// partitions stay under MaxRows: a partition holds about its credits of
// the last SettleGrace plus those since its last merge. Records are N rows
// too, one partition per account, RetryWindow and record shard
// (TxnOptions.RecordShards); merges delete those no call reads any more.
//
// A row partition's keys start with each row's place, the time its writer
// chose, so a merge removes the settled rows with one delete-range, plus
// deletes of the few rows that removal needs elsewhere (on Cassandra one
// range tombstone, which reads scan once, SPEC.md 9.4 and 10.2).
//
// Merge each active account regularly (a hot one every few seconds): only
// merges record transactions, and until one has, a retry rewrites the
// same row (counting once) and is answered Applied.
//
// Transactions keeps only when it last checked each account's layout (at
// most 16,384 accounts: SPEC.md 9.4 "Layout") and is safe for concurrent use;
// any number of them, in any number of processes, may share a store. Its
// partitions are the account key followed by '#' (refused in its account
// keys): a plain Accounts sharing the store must not use such keys.
type Transactions struct {
	ac      *Accounts // the records, the expiry mark and the layout marker
	rows    *Accounts // the row partitions, placed (placed.go)
	opts    TxnOptions
	checked layoutChecks // txnlayout.go
}

// TxnOptions configure Transactions; a zero field selects its default.
// Every Transactions of an account must use the same: the layout marker
// refuses another layout (Partitions, RecordShards, RetryWindow), but
// nothing checks that the timing of one process (Deadline, Options) fits
// another's, and a writer whose Deadline exceeds a merger's SettleGrace −
// SafetyMargin can count a retry twice (SPEC.md 9.3, timing assumptions).
type TxnOptions struct {
	// Options are the accounts' timing (their Window bounds Accounts.Add
	// only: a transaction's row is not checked against it).
	Options
	// RetryWindow is how long a retry is recognised after a merge recorded
	// the transaction. Default 24 hours; at least SettleGrace. Part of
	// the layout.
	RetryWindow time.Duration
	// Deadline is how long after reading the transaction's record a call
	// may still send its row; a call that would send later reads the
	// record again. Default 5 seconds; SettleGrace must be at least
	// Deadline + SafetyMargin.
	Deadline time.Duration
	// Partitions is how many balance partitions an account's rows spread
	// over, 1..64. A partition holds two rows (the row and its tombstone)
	// for each of its credits of about the last SettleGrace plus two
	// merge intervals, and a copy of the row for each retry before a
	// merge recorded it. A read past MaxRows (100,000) reads again up to
	// MaxBacklogRows, so that a backlog drains; past that its reads and
	// merges fail with crdt.ErrTooLarge, which no merge with the same
	// BacklogRows undoes (a larger one does: BacklogRows): size it for the peak rate with room for a backlog (SPEC.md 9.4).
	// Default 16: 3,000 credits per second with merges every 5 seconds
	// survive a five-minute merger pause; 11,200 (about 91,000 rows a
	// partition) survive a 10-second one, not 30 seconds. It is
	// part of the account's layout (with RecordShards and RetryWindow):
	// the account's first Apply records it, and a Transactions with
	// another layout is refused (crdt.ErrInvalidConfig).
	Partitions int
	// RecordShards is how many record partitions each RetryWindow of an
	// account spreads over, 1..256. Default 16. Part of the layout.
	RecordShards int
	// BacklogRows is the most rows a read of a row partition takes once
	// it found more than MaxRows (SPEC.md 9.4), MaxRows..100,000,000:
	// past it the partition's reads and merges fail crdt.ErrTooLarge.
	// Default MaxBacklogRows. Not part of the layout: to drain a partition
	// past the default, merge the account with a larger BacklogRows
	// (counterkit merge transactions -backlog-rows) until it is under;
	// each read of it then holds its rows in memory at once.
	BacklogRows int
	// TxnTime, when set, gives every transaction a time carried by every
	// retry (tpncounter.TimeUUID reads a version 1 UUID's). Apply then
	// refuses an id without one (crdt.ErrInvalidTxnID), and one not
	// recorded whose time is more than RetryWindow old or more than
	// FutureSkew ahead (crdt.ErrOutsideWindow): its record may have
	// expired, so a late retry is refused rather than counted again. Nil:
	// a retry after the record expired counts again.
	TxnTime func(crdt.TxnID) (time.Time, bool)
}

// Transactions' defaults.
const (
	DefaultRetryWindow  = 24 * time.Hour
	DefaultDeadline     = 5 * time.Second
	DefaultPartitions   = 16
	DefaultRecordShards = 16
)

// maxBacklogRowsOption bounds TxnOptions.BacklogRows.
const maxBacklogRowsOption = 100_000_000

// MaxTxnAccountLen is the longest account key Transactions accepts: its
// record partitions' keys add at most 32 bytes to it.
const MaxTxnAccountLen = crdt.MaxKeyLen - 32

// MaxRetryWindow is the longest RetryWindow: ten years, far from the
// durations' overflow.
const MaxRetryWindow = 10 * 365 * 24 * time.Hour

// Outcome is what Transactions.Apply did.
type Outcome uint8

// The outcomes.
const (
	// Applied: the call wrote the transaction's row. A retry that comes
	// before a merge recorded the transaction writes the same row again
	// (a copy at its own place, until a merge removes it) and is Applied
	// too: the row counts once either way.
	Applied Outcome = iota + 1
	// Duplicate: a merge had recorded the transaction; nothing was written.
	Duplicate
)

// String returns "applied" or "duplicate".
func (o Outcome) String() string {
	switch o {
	case Applied:
		return "applied"
	case Duplicate:
		return "duplicate"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// checkPlace refuses a clock before 1970, which cannot place a row (a
// place is whole µs since 1970, SPEC.md 9.4).
func checkPlace(now time.Time) error {
	if now.UnixMicro() < 0 {
		return fmt.Errorf("%w: the clock reads %v, before 1970, where no row can be placed (Options.Clock)", crdt.ErrInvalidConfig, now)
	}
	return nil
}

// errLate is a call that read its record more than Deadline ago.
var errLate = errors.New("balance: record read more than Deadline ago")

// NewTransactions returns Transactions over st. Invalid options wrap
// crdt.ErrInvalidConfig.
func NewTransactions(st store.Partitions, opts TxnOptions) (*Transactions, error) {
	o, err := opts.Options.withDefaults()
	if err != nil {
		return nil, err
	}
	opts.Options = o
	if opts.RetryWindow == 0 {
		opts.RetryWindow = DefaultRetryWindow
	}
	if opts.Deadline == 0 {
		opts.Deadline = DefaultDeadline
	}
	if opts.Partitions == 0 {
		opts.Partitions = DefaultPartitions
	}
	if opts.RecordShards == 0 {
		opts.RecordShards = DefaultRecordShards
	}
	if opts.BacklogRows == 0 {
		opts.BacklogRows = MaxBacklogRows
	}
	switch {
	case opts.RetryWindow < o.SettleGrace || opts.RetryWindow > MaxRetryWindow || opts.RetryWindow%time.Microsecond != 0:
		return nil, fmt.Errorf("%w: RetryWindow %v must be whole microseconds, at least SettleGrace and at most %v", crdt.ErrInvalidConfig, opts.RetryWindow, MaxRetryWindow)
	case opts.Deadline < 0 || o.SettleGrace-o.SafetyMargin < opts.Deadline:
		return nil, fmt.Errorf("%w: SettleGrace %v must be at least Deadline %v + SafetyMargin", crdt.ErrInvalidConfig, o.SettleGrace, opts.Deadline)
	case opts.Partitions < 1 || opts.Partitions > 64:
		return nil, fmt.Errorf("%w: Partitions %d is outside 1..64", crdt.ErrInvalidConfig, opts.Partitions)
	case opts.RecordShards < 1 || opts.RecordShards > 256:
		return nil, fmt.Errorf("%w: RecordShards %d is outside 1..256", crdt.ErrInvalidConfig, opts.RecordShards)
	case opts.BacklogRows < MaxRows || opts.BacklogRows > maxBacklogRowsOption:
		return nil, fmt.Errorf("%w: BacklogRows %d is outside %d..%d", crdt.ErrInvalidConfig, opts.BacklogRows, MaxRows, maxBacklogRowsOption)
	}
	// The Accounts of the records and the rows report nothing: each call
	// of Transactions is one operation (start), its store calls nested.
	inner := o
	inner.Observer = nil
	ac, err := New(st, inner)
	if err != nil {
		return nil, err
	}
	return &Transactions{ac: ac, rows: ac.placed(opts.BacklogRows), opts: opts}, nil
}

// start begins the operation op of a call on Options.Observer. The call
// ends it on return (rowlog.End) and defers endAborted, which ends it if
// the call panicked.
func (tx *Transactions) start(ctx context.Context, op string) (context.Context, observe.Operation) {
	return observe.Start(ctx, tx.opts.Observer, tx.ac.t.Name, op)
}

// Options returns the options in effect, defaults filled in.
func (tx *Transactions) Options() TxnOptions { return tx.opts }

// Conflicts returns the transactions of account whose id was applied with
// more than one amount (by row id: Conflict.UpdateID is TxnRowID of the
// transaction) and whose rows are still stored, one read of each row
// partition, after the account's layout check (as Balance's). Every merge
// reports those it reads (MergeReport.Conflicts, and its observer event);
// once merges have settled and removed their rows, Conflicts no longer
// lists them.
func (tx *Transactions) Conflicts(ctx context.Context, account string) ([]Conflict, error) {
	ctx, op := tx.start(ctx, "read")
	defer endAborted(&op)
	out, err := tx.conflicts(ctx, account)
	rowlog.End(&op, err, observe.Event{Attempts: 1, Conflicts: len(out)})
	return out, err
}

func (tx *Transactions) conflicts(ctx context.Context, account string) ([]Conflict, error) {
	if err := tx.checkAccount(account); err != nil {
		return nil, err
	}
	if _, err := tx.checkLayout(ctx, account, false); err != nil {
		return nil, err
	}
	var out []Conflict
	for _, p := range tx.RowPartitions(account) {
		v, err := tx.rows.view(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, v.Conflicts...)
	}
	return out, nil
}

// Delete removes the account, in this order, in batches of at most
// expireBatch partition deletes: its row partitions; the record
// partitions of every window a record not yet expired can be in (those
// its merges wrote before, as expiry bounds them, however long the account
// idled: at most 1,024 windows, or 64 after the expiry mark without a sum
// row; and those of its clock's windows, from three before to the last a
// merge whose clock is up to FutureSkew ahead writes); its expiry mark;
// its layout marker. Records expiry misses stay (SPEC.md 9.4, "Not
// covered": those a merge wrote before it failed, with no sum row after
// them, which no call reads). Without an expiry mark (or with one ahead of its
// clock) it first writes one where the old windows start, so that a
// Delete called again finds them. A layout marker of another layout
// refuses it (crdt.ErrInvalidConfig); a damaged one does not. If it
// fails, call it again. Its deletes carry this
// process's clock: call it once no process writes to or merges the account
// (and SafetyMargin has passed since), and reuse the key no sooner than
// SafetyMargin after it returned, or a process whose clock is behind may
// write a row or record the deletes shadow or miss (SPEC.md 9.4).
func (tx *Transactions) Delete(ctx context.Context, account string) error {
	ctx, op := tx.start(ctx, "delete")
	defer endAborted(&op)
	err := tx.delete(ctx, account)
	rowlog.End(&op, err, observe.Event{Attempts: 1})
	return err
}

func (tx *Transactions) delete(ctx context.Context, account string) error {
	if err := tx.checkAccount(account); err != nil {
		return err
	}
	// A damaged marker does not stop Delete, which removes it with the
	// rest, by this Transactions' layout.
	if _, err := tx.checkLayout(ctx, account, false); err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) {
		return err
	}
	now := tx.opts.Clock()
	var muts []store.Mutation
	for _, p := range tx.RowPartitions(account) {
		muts = append(muts, store.Mutation{Partition: p, Op: store.OpDeletePartition})
	}
	first, last := tx.window(now)-3, tx.window(tx.lastRecorded(now.Add(tx.opts.FutureSkew)))
	old, ok, err := tx.oldRecordWindows(ctx, account, now)
	if err != nil {
		return err
	}
	if ok {
		if !old.marked && old.first > 1 {
			// Keep where the old windows start (replacing a mark ahead)
			// for a Delete called again after this one failed: the row
			// partitions go first.
			if err := tx.writeMark(ctx, tx.expiredPartition(account), old.marks, old.damaged, old.first-1); err != nil {
				return err
			}
		}
		if old.last < first-1 { // apart from the clock's windows
			muts = tx.deleteRecords(muts, account, old.first, old.last)
		} else {
			first = min(first, old.first)
		}
	}
	muts = tx.deleteRecords(muts, account, first, last)
	muts = append(muts, store.Mutation{Partition: tx.expiredPartition(account), Op: store.OpDeletePartition},
		store.Mutation{Partition: layoutPartition(account), Op: store.OpDeletePartition})
	err = tx.writeBatches(ctx, muts)
	tx.checked.mu.Lock()
	delete(tx.checked.at, account) // the marker is gone: check it again
	tx.checked.mu.Unlock()
	return err
}

// oldRecordWindows returns the windows that may still hold records
// account's merges wrote before its last windows, as expire bounds them:
// up to two after the window of the newest sum row its row partitions hold
// (by their keys: a partition too large to read, or a key that does not
// decode, is skipped, so that Delete works on a damaged account; another
// failed read is returned, as the windows it may name would be missed),
// from the one after the expiry mark's (a mark after now's window + 1 is
// ignored) or, without one, three before; at most deleteWindows of them. Without a
// sum row, the expireWindows after the mark's. ok is false when neither is
// found.
func (tx *Transactions) oldRecordWindows(ctx context.Context, account string, now time.Time) (old oldRecords, ok bool, err error) {
	var newest time.Time
	for _, p := range tx.RowPartitions(account) {
		err := tx.ac.t.Store.Scan(ctx, p, nil, store.ReadAny, func(r store.Row) bool {
			if _, k, err := DecodeTxnRowKey(r.Key); err == nil && k.Kind == KindSum && k.UpdateID.Time().After(newest) {
				newest = k.UpdateID.Time()
			}
			return true
		})
		if err != nil && !errors.Is(err, crdt.ErrTooLarge) && !errors.Is(err, crdt.ErrCorruptEncoding) {
			return old, false, err
		}
	}
	marks, damaged, err := tx.readMarks(ctx, tx.expiredPartition(account))
	if err != nil {
		if !errors.Is(err, crdt.ErrTooLarge) && !errors.Is(err, crdt.ErrCorruptEncoding) {
			return old, false, err
		}
		marks, damaged = nil, nil
	}
	mark, marked := markOf(marks, tx.window(now))
	old = oldRecords{marks: marks, damaged: damaged, marked: marked}
	switch {
	case !newest.IsZero():
		n := tx.window(newest)
		old.first, old.last = n-3, n+2
		if marked {
			old.first = mark + 1
		}
		old.first = max(old.first, old.last-deleteWindows+1)
		return old, old.first <= old.last, nil
	case marked:
		old.first, old.last = mark+1, mark+expireWindows
		return old, true, nil
	}
	return old, false, nil
}

// oldRecords are the windows oldRecordWindows found, and the expiry mark
// rows read (marked: one not ahead of the clock).
type oldRecords struct {
	first, last int64
	marks       []Row
	damaged     [][]byte // mark rows that do not decode
	marked      bool
}

// deleteWindows is the most windows before its clock's that Delete
// deletes records in.
const deleteWindows = 1024

// writeBatches writes partition deletes in batches of at most
// expireBatch, in order.
func (tx *Transactions) writeBatches(ctx context.Context, muts []store.Mutation) error {
	for len(muts) > 0 {
		n := min(len(muts), expireBatch)
		if err := tx.ac.t.Write(ctx, muts[:n]); err != nil {
			return err
		}
		muts = muts[n:]
	}
	return nil
}

// RowPartitions returns the balance partitions of account's rows:
// "<account>#<i>" for i in 0..Partitions−1, so that the partitions of a
// smaller Partitions are among those of a larger (SPEC.md 9.4 "Layout").
// Only Transactions.Merge merges them: Accounts.Merge,
// which records nothing, refuses a partition holding live transaction
// rows (crdt.ErrTypeMismatch).
func (tx *Transactions) RowPartitions(account string) []string {
	out := make([]string, tx.opts.Partitions)
	for i := range out {
		out[i] = tx.rowPartition(account, i)
	}
	return out
}

func (tx *Transactions) rowPartition(account string, i int) string {
	return account + "#" + strconv.Itoa(i)
}

// rowsOf returns the partition of the row id's row: its byte 14 modulo
// Partitions.
func (tx *Transactions) rowsOf(account string, id ID) string {
	return tx.rowPartition(account, int(id[14])%tx.opts.Partitions)
}

// Apply credits (amount > 0) or debits (amount < 0) account by amount
// under txn, unless a merge recorded txn in the last RetryWindow. It reads
// the record (one point read, in the record partition of its clock's
// window), then writes the row: two store calls, and a read of the
// account's layout marker when this Transactions has not checked it in
// the last second (the account's first Apply writes it).
//
// Refused, without writing: a Transactions whose Partitions, RecordShards
// or RetryWindow are not the account's (crdt.ErrInvalidConfig; SPEC.md
// 9.4 "Layout"; a damaged marker: crdt.ErrCorruptEncoding), a clock
// before 1970 (crdt.ErrInvalidConfig), an invalid account (crdt.ErrInvalidKey, also
// past MaxTxnAccountLen or containing '#') or txn (crdt.ErrInvalidTxnID),
// a zero amount (crdt.ErrInvalidAmount), txn recorded with another amount
// (crdt.ErrConflictingTransaction), with TxnTime a transaction not
// recorded and outside its window (crdt.ErrOutsideWindow). A store error
// is returned as the store wraps it (crdt.ErrAmbiguousWrite when the row
// may have landed: a retry rewrites the same row). Apply does not read the
// balance, so a credit that takes it past int64 is stored: Balance then
// fails crdt.ErrOverflow until debits bring it back (merges go on, SPEC.md
// 9.3 step 5).
func (tx *Transactions) Apply(ctx context.Context, account string, txn crdt.TxnID, amount int64) (Outcome, error) {
	ctx, op := tx.start(ctx, "add")
	defer endAborted(&op)
	out, attempts, err := tx.apply(ctx, account, txn, amount)
	e := observe.Event{Attempts: attempts}
	switch out {
	case Applied:
		e.Outcome = observe.Applied
	case Duplicate:
		e.Outcome = observe.Duplicate
	}
	rowlog.End(&op, err, e)
	return out, err
}

// apply is Apply, which also returns the cycles (record read, then write)
// it began: 1, or up to 3 when it read its record more than Deadline
// before writing.
func (tx *Transactions) apply(ctx context.Context, account string, txn crdt.TxnID, amount int64) (_ Outcome, attempts int, _ error) {
	if err := tx.checkAccount(account); err != nil {
		return 0, 1, err
	}
	if err := txn.Validate(); err != nil {
		return 0, 1, err
	}
	if amount == 0 {
		return 0, 1, fmt.Errorf("%w: transaction %q has a zero amount", crdt.ErrInvalidAmount, txn)
	}
	var at time.Time
	if tx.opts.TxnTime != nil {
		var ok bool
		if at, ok = tx.opts.TxnTime(txn); !ok {
			return 0, 1, fmt.Errorf("%w: transaction %q has no time (TxnOptions.TxnTime)", crdt.ErrInvalidTxnID, txn)
		}
	}
	if err := checkPlace(tx.opts.Clock()); err != nil {
		return 0, 1, err
	}
	unmarked, err := tx.checkLayout(ctx, account, true)
	if err != nil {
		return 0, 1, err
	}
	id := TxnRowID(txn)
	const cycles = 3
	for attempt := 1; attempt <= cycles; attempt++ {
		read := tx.opts.Clock()
		recorded, err := tx.lookup(ctx, account, id, read)
		switch {
		case err != nil:
			return 0, attempt, err
		case slices.Contains(recorded, amount):
			return Duplicate, attempt, nil
		case len(recorded) > 0:
			return 0, attempt, fmt.Errorf("%w: transaction %q was recorded with amount %d, not %d", crdt.ErrConflictingTransaction, txn, recorded[0], amount)
		case tx.opts.TxnTime != nil && (at.Before(read.Add(-tx.opts.RetryWindow)) || at.After(read.Add(tx.opts.FutureSkew))):
			return 0, attempt, fmt.Errorf("%w: transaction %q of %v is outside [now − RetryWindow, now + FutureSkew]", crdt.ErrOutsideWindow, txn, at)
		}
		// The row, and on the account's first row its layout with it, in
		// one batch.
		u := []update{{Partition: tx.rowsOf(account, id), Row: NormalRow(id, amount)}}
		if unmarked {
			u = append([]update{{Partition: layoutPartition(account), Row: NormalRow(layoutMarkID, tx.opts.layout())}}, u...)
		}
		out, buf := newWrite(len(u))
		err = tx.rows.t.Apply(ctx, u, out, func(m update, now time.Time) (ID, int64, store.Mutation, error) {
			if now.Sub(read) > tx.opts.Deadline && !brokenTxnNoDeadline {
				return ID{}, 0, store.Mutation{}, errLate
			}
			if err := checkPlace(now); err != nil {
				return ID{}, 0, store.Mutation{}, err
			}
			if m.Row.UpdateID == layoutMarkID {
				return m.Row.UpdateID, m.Row.Amount, appendPut(&buf, m.Partition, m.Row), nil
			}
			return m.Row.UpdateID, m.Row.Amount, tx.rows.appendN(&buf, m.Partition, now, m.Row), nil
		})
		if !errors.Is(err, errLate) {
			if err != nil {
				return 0, attempt, err
			}
			if unmarked {
				tx.trustLayout(account, tx.opts.Clock())
			}
			return Applied, attempt, nil
		}
	}
	return 0, cycles, fmt.Errorf("%w: transaction %q: its record was read more than Deadline (%v) before each of %d writes", crdt.ErrUnavailable, txn, tx.opts.Deadline, cycles)
}

// Recorded returns the amounts merges recorded for txn on account that a
// retry now would find: at least those of the last RetryWindow, and
// perhaps older ones not yet expired (none: not recorded). An id applied with one amount has
// one; with several before a merge recorded it (a caller's error, see
// Conflicts), each merge records the amount that counted when it ran. The
// window runs from a merge's records being acknowledged (SPEC.md 9.4):
// records of a merge that failed may be found, then not after the next
// window boundary. It checks the account's layout as Apply does (without
// writing).
func (tx *Transactions) Recorded(ctx context.Context, account string, txn crdt.TxnID) ([]int64, error) {
	ctx, op := tx.start(ctx, "recorded")
	defer endAborted(&op)
	amounts, err := tx.recorded(ctx, account, txn)
	rowlog.End(&op, err, observe.Event{Attempts: 1})
	return amounts, err
}

func (tx *Transactions) recorded(ctx context.Context, account string, txn crdt.TxnID) ([]int64, error) {
	if err := tx.checkAccount(account); err != nil {
		return nil, err
	}
	if err := txn.Validate(); err != nil {
		return nil, err
	}
	if _, err := tx.checkLayout(ctx, account, true); err != nil {
		return nil, err
	}
	return tx.lookup(ctx, account, TxnRowID(txn), tx.opts.Clock())
}

// Balance returns the account's balance: the exact sum of its
// RowPartitions' balances (one read each; a partition's may pass int64
// while the sum fits), crdt.ErrOverflow when it does not fit int64. It
// first reads the account's layout marker (crdt.ErrInvalidConfig for
// another layout, crdt.ErrCorruptEncoding for a damaged marker).
func (tx *Transactions) Balance(ctx context.Context, account string) (int64, error) {
	ctx, op := tx.start(ctx, "read")
	defer endAborted(&op)
	v, conflicts, err := tx.balance(ctx, account)
	rowlog.End(&op, err, observe.Event{Attempts: 1, Conflicts: conflicts})
	return v, err
}

// balance is Balance, which also returns the conflicts it read.
func (tx *Transactions) balance(ctx context.Context, account string) (_ int64, conflicts int, _ error) {
	if err := tx.checkAccount(account); err != nil {
		return 0, 0, err
	}
	if _, err := tx.checkLayout(ctx, account, false); err != nil {
		return 0, 0, err
	}
	var sum exact.Int128
	for _, p := range tx.RowPartitions(account) {
		v, err := tx.rows.view(ctx, p)
		if err != nil {
			return 0, conflicts, err
		}
		sum.AddInt128(v.total)
		conflicts += len(v.Conflicts)
	}
	v, ok := sum.Int64()
	if !ok {
		return 0, conflicts, fmt.Errorf("%w: account %q: the balance does not fit int64", crdt.ErrOverflow, account)
	}
	return v, conflicts, nil
}

// Merge merges each of the account's RowPartitions (Accounts.Merge): it
// reads every row partition, then records every transaction whose row the
// merges will sum (one batch per record partition), then runs each
// partition's merge steps. A merge whose newest sum row read is in a
// window before its clock's then deletes the record partitions no call
// reads any more that earlier merges have not (expire). It first refuses
// a clock before 1970 and checks the account's layout
// (crdt.ErrInvalidConfig; a damaged marker crdt.ErrCorruptEncoding). It returns the partitions'
// reports, in RowPartitions' order (empty for a partition that failed),
// and the errors joined. A crash between any two steps leaves the balance
// and the records correct: a transaction is recorded only once its row is
// stored, and summed only once recorded.
func (tx *Transactions) Merge(ctx context.Context, account string) ([]MergeReport, error) {
	ctx, op := tx.start(ctx, "merge")
	defer endAborted(&op)
	reps, err := tx.merge(ctx, account)
	e := observe.Event{Attempts: 1}
	lag := false
	for _, r := range reps { // the partitions' merges, as Accounts reports each
		pe := mergeEvent(r)
		e.Conflicts, e.Folded, e.Rows = e.Conflicts+pe.Conflicts, e.Folded+pe.Folded, e.Rows+pe.Rows
		if r.Sum != nil && (!lag || pe.Lag < e.Lag) { // the newest update folded
			e.Lag, lag = pe.Lag, true
		}
	}
	rowlog.End(&op, err, e)
	return reps, err
}

func (tx *Transactions) merge(ctx context.Context, account string) ([]MergeReport, error) {
	if err := tx.checkAccount(account); err != nil {
		return nil, err
	}
	if err := checkPlace(tx.opts.Clock()); err != nil {
		return nil, err
	}
	if _, err := tx.checkLayout(ctx, account, false); err != nil {
		return nil, err
	}
	parts := tx.RowPartitions(account)
	merges := make([]startedMerge, len(parts))
	var newest ID // the newest valid S row the merges read
	var views []View
	for i, p := range parts {
		tx.rows.startMerge(ctx, p, &merges[i])
		if merges[i].err == nil {
			if n := newestSum(merges[i].v); newest.IsZero() || n.Compare(newest) > 0 {
				newest = n
			}
			views = append(views, merges[i].v)
		}
	}
	now := tx.opts.Clock()
	recErr := tx.record(ctx, account, views, now)
	if el := tx.opts.Clock().Sub(now); recErr == nil && el > tx.opts.MaxMerge {
		recErr = fmt.Errorf("%w: its records took %v (> MaxMerge %v)", ErrSlowMerge, el, tx.opts.MaxMerge)
	}
	reps := make([]MergeReport, len(parts))
	var errs []error
	for i, p := range parts {
		if merges[i].err == nil {
			merges[i].err = recErr
		}
		var err error
		if reps[i], err = tx.rows.finishMerge(&merges[i], p); err != nil && !errors.Is(err, recErr) {
			errs = append(errs, err)
		}
	}
	if recErr != nil {
		errs = append(errs, recErr)
	}
	// Expiry deletes only windows no call reads: safe after a failed
	// merge too, so a partition that keeps failing does not stop it.
	if now := tx.opts.Clock(); !newest.IsZero() && tx.window(newest.Time()) < tx.window(now) {
		if err := tx.expire(ctx, account, tx.window(newest.Time()), tx.window(now)); err != nil {
			errs = append(errs, err)
		}
	}
	return reps, errors.Join(errs...)
}

// record writes the record of every transaction row step 5 will cover in
// views (View.covered: at most MaxCover a partition, so a backlog costs a
// merge no more records than a busy partition does) into each of
// recordWindows(now): one batch per record partition (of at most
// store.MaxBatch rows), in byte order of the partitions' keys.
func (tx *Transactions) record(ctx context.Context, account string, views []View, now time.Time) error {
	byPart := map[string][]Row{}
	first, last := tx.recordWindows(now)
	for _, v := range views {
		for _, r := range v.covered() {
			if r.Kind == KindNormal && IsTxnRowID(r.UpdateID) && !brokenTxnNoRecord {
				for w := first; w <= last; w++ {
					p := tx.recordPartition(account, w, r.UpdateID)
					byPart[p] = append(byPart[p], NormalRow(r.UpdateID, r.Amount))
				}
			}
		}
	}
	for _, p := range slices.Sorted(maps.Keys(byPart)) {
		rows := byPart[p]
		for len(rows) > 0 { // records need no atomicity: any split is safe
			batch := rows[:min(len(rows), store.MaxBatch)]
			rows = rows[len(batch):]
			muts := make([]store.Mutation, len(batch))
			var buf []byte
			for i, r := range batch {
				muts[i] = appendPut(&buf, p, r)
			}
			if err := tx.ac.t.Write(ctx, muts); err != nil {
				return err
			}
		}
	}
	return nil
}

// expire deletes account's record partitions of the windows after the
// last one expired (the account's expiry mark; without one, newest − 4),
// at most expireWindows of them, and no later than newest + 2 and now − 2,
// where newest is the window of the newest sum row the merge read and now
// the clock's: no clock within FutureSkew of now reads them (a call reads
// its clock's window only), every record in them that is less than
// RetryWindow old is in a later window too (recordWindows), and the merges
// up to that sum row wrote no record after newest + 2. The account's first
// expiry writes the mark before deleting, and every expiry moves it after.
// So an account idle for any number of windows leaves no records behind
// once it is merged again at least four windows after its last sum, an
// expiry that failed is made up by the next, and a merge of an account
// already expired reads the mark and writes nothing. Deletes go oldest
// first, in batches of at most expireBatch.
func (tx *Transactions) expire(ctx context.Context, account string, newest, now int64) error {
	mark := tx.expiredPartition(account)
	marks, damaged, err := tx.readMarks(ctx, mark)
	if err != nil {
		return err
	}
	first, last := newest-3, min(now-2, newest+2)
	m, marked := markOf(marks, now)
	if marked {
		first = m + 1 // so windows an expiry that failed left are made up
	}
	last = min(last, first+expireWindows-1)
	if first > last {
		return nil
	}
	if !marked && first > 1 {
		// The account's first expiry marks where it starts (replacing
		// a mark ahead), so that the next one makes up for it if it
		// fails.
		if err := tx.writeMark(ctx, mark, marks, damaged, first-1); err != nil {
			return err
		}
		marks, damaged = []Row{NormalRow(expiryMarkID, first-1)}, nil
	}
	if err := tx.writeBatches(ctx, tx.deleteRecords(nil, account, first, last)); err != nil {
		return err
	}
	if last <= 0 { // no window of a sane clock; the mark's amount must not be zero
		return nil
	}
	return tx.writeMark(ctx, mark, marks, damaged, last)
}

// readMarks reads the expiry mark partition: the rows that decode, and
// the keys of those that do not (damage: no merge writes them), which are
// passed over, as markOf passes over rows of another kind or amount, and
// deleted when the next mark is written.
func (tx *Transactions) readMarks(ctx context.Context, mark string) (marks []Row, damaged [][]byte, err error) {
	stored, err := tx.ac.t.Store.Snapshot(ctx, mark, MaxRows, store.ReadAny)
	if err != nil {
		return nil, nil, err
	}
	for _, sr := range stored {
		if r, err := decodeRow(mark, sr); err != nil {
			damaged = append(damaged, sr.Key)
		} else {
			marks = append(marks, r)
		}
	}
	return marks, damaged, nil
}

// writeMark writes the expiry mark w in one batch that deletes the mark
// rows read, those that did not decode included.
func (tx *Transactions) writeMark(ctx context.Context, mark string, marks []Row, damaged [][]byte, w int64) error {
	muts := make([]store.Mutation, 0, len(damaged)+len(marks)+1)
	for _, k := range damaged {
		muts = append(muts, store.Mutation{Partition: mark, Op: store.OpDelete, Key: k})
	}
	for _, r := range marks {
		muts = append(muts, store.Mutation{Partition: mark, Op: store.OpDelete, Key: EncodeKey(r.Key())})
	}
	var buf []byte
	return tx.ac.t.Write(ctx, append(muts, appendPut(&buf, mark, NormalRow(expiryMarkID, w))))
}

// markOf returns the expiry mark of the mark rows read, the largest
// amount of an N row, and whether there is one. Merges write N rows of
// amount at least 1, so another row is damage: it is passed over, and
// deleted with the rows read when the next mark is written. A merge marks
// at most its clock's window − 2, so a mark after now + 1 is another
// RetryWindow's (a layout race) or damage: it is read as no mark, and the
// next mark written replaces it.
func markOf(marks []Row, now int64) (m int64, ok bool) {
	for _, r := range marks {
		if r.Kind == KindNormal && r.Amount >= 1 {
			m, ok = max(m, r.Amount), true
		}
	}
	return m, ok && m <= now+1
}

// expireWindows is the most windows one expiry deletes: an account idle
// for years catches up over a few merges.
const expireWindows = 64

// expireBatch is the most partition deletes expire writes in one batch,
// half what store.MaxSpanningBatchBytes allows.
const expireBatch = store.MaxSpanningBatchBytes / store.SpanningOverhead / 2

// expiredPartition is the partition of account's expiry mark:
// "<account>#txn.expired", holding an N row whose amount is the last
// window expire deleted (more than one after concurrent merges: the
// largest counts).
func (tx *Transactions) expiredPartition(account string) string { return account + "#txn.expired" }

// expiryMarkID is the update id of the expiry mark's row.
var expiryMarkID = timeid.FromParts(uuidEpoch, 0, 0)

// deleteRecords appends to muts the deletes of account's record partitions
// of windows first to last, every shard.
func (tx *Transactions) deleteRecords(muts []store.Mutation, account string, first, last int64) []store.Mutation {
	for w := first; w <= last; w++ {
		for s := range tx.opts.RecordShards {
			muts = append(muts, store.Mutation{Partition: tx.partition(account, w, s), Op: store.OpDeletePartition})
		}
	}
	return muts
}

// newestSum returns the version of the newest valid S row of v (zero if
// none).
func newestSum(v View) ID {
	var n ID
	for _, s := range v.Valid {
		if n.IsZero() || s.Version.Compare(n) > 0 {
			n = s.Version
		}
	}
	return n
}

// lookup returns the amounts of id's records in the record partition of
// now's window, in key order. A damaged record of another transaction
// does not fail it.
func (tx *Transactions) lookup(ctx context.Context, account string, id ID, now time.Time) (amounts []int64, err error) {
	// The key's prefix (id and kind): every N row of id, whatever the
	// amount in its version, starts with it.
	prefix := EncodeKey(Key{UpdateID: id, Kind: KindNormal})[:RowKeyLen-timeid.KeyLen]
	err = tx.ac.t.ScanPrefix(ctx, tx.recordPartition(account, tx.window(now), id), prefix, store.ReadAny, func(r Row) bool {
		amounts = append(amounts, r.Amount)
		return true
	})
	return amounts, err
}

// recordWindows returns the first and last windows a record made at now is
// written in: every one that [now − FutureSkew, lastRecorded(now)] meets (two or
// three when MaxMerge + 3·FutureSkew is less than RetryWindow, as with the
// defaults; else up to four). A merge whose records are not all acknowledged within MaxMerge
// of now stops before its tombstones (ErrSlowMerge), so a call whose
// clock, within FutureSkew of the merge's, is less than RetryWindow past
// the acknowledgement finds the record in its own clock's window; so does
// one less than RetryWindow past the transaction's TxnTime, which is at
// most 2·FutureSkew past the merge's clock.
func (tx *Transactions) recordWindows(now time.Time) (first, last int64) {
	return tx.window(now.Add(-tx.opts.FutureSkew)), tx.window(tx.lastRecorded(now))
}

// lastRecorded is the latest time a record made at now is kept for: now +
// MaxMerge + RetryWindow + 2·FutureSkew.
func (tx *Transactions) lastRecorded(now time.Time) time.Time {
	return now.Add(tx.opts.MaxMerge + tx.opts.RetryWindow + 2*tx.opts.FutureSkew)
}

// window numbers the RetryWindow t falls in: floor(t in µs since 1970 /
// RetryWindow in µs).
func (tx *Transactions) window(t time.Time) int64 {
	us, rw := t.UnixMicro(), tx.opts.RetryWindow.Microseconds()
	w := us / rw
	if us%rw < 0 {
		w--
	}
	return w
}

func (tx *Transactions) recordPartition(account string, window int64, id ID) string {
	return tx.partition(account, window, int(id[15])%tx.opts.RecordShards)
}

// partition is the key of account's record partition of window and shard:
// "<account>#txn.<window>.<shard>".
func (tx *Transactions) partition(account string, window int64, shard int) string {
	return account + "#txn." + strconv.FormatInt(window, 10) + "." + strconv.Itoa(shard)
}

func (tx *Transactions) checkAccount(account string) error { return checkTxnAccount(account) }

// checkTxnAccount refuses an account key Transactions does not take.
func checkTxnAccount(account string) error {
	if err := crdt.ValidateKey("account key", account); err != nil {
		return err
	}
	if len(account) > MaxTxnAccountLen {
		return fmt.Errorf("%w: account key is %d bytes, longer than %d", crdt.ErrInvalidKey, len(account), MaxTxnAccountLen)
	}
	if strings.Contains(account, "#") {
		return fmt.Errorf("%w: account key %q contains '#', which separates its row and record partitions", crdt.ErrInvalidKey, account)
	}
	return nil
}

// The ids of transactions' rows have times in [1582-10-15, 1900-01-01),
// which no update Accounts.Add accepts has.
var (
	uuidEpoch   = time.Date(1582, time.October, 15, 0, 0, 0, 0, time.UTC)
	txnIDsBelow = time.Date(1900, time.January, 1, 0, 0, 0, 0, time.UTC)
	txnIDTicks  = uint64(txnIDsBelow.Unix()-uuidEpoch.Unix()) * 10_000_000
)

// TxnRowID returns the update id of txn's N row: a version 1 UUID whose 60
// bits of time (taken modulo the ticks before 1900) and 62 bits of clock
// sequence and node come from SHA-256 of "counterkit.balance.txn\x00" and
// txn, so every writer of txn writes one row (SPEC.md 9.4).
func TxnRowID(txn crdt.TxnID) ID {
	const prefix = "counterkit.balance.txn\x00"
	var buf [len(prefix) + crdt.MaxIDLen]byte // on the stack for a valid id
	h := sha256.Sum256(append(append(buf[:0], prefix...), txn...))
	ticks := binary.BigEndian.Uint64(h[0:8]) % txnIDTicks
	t := time.Unix(uuidEpoch.Unix()+int64(ticks/10_000_000), int64(ticks%10_000_000)*100)
	return timeid.FromParts(t, binary.BigEndian.Uint16(h[8:10]), binary.BigEndian.Uint64(h[8:16]))
}

// IsTxnRowID reports whether id is the id of a transaction's row
// (TxnRowID's range: a time before 1900).
func IsTxnRowID(id ID) bool { return id.Time().Before(txnIDsBelow) }
