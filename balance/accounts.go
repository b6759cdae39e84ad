package balance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// MaxRows is the most rows a first read of an account's partition takes.
// A read that finds more reads again up to MaxBacklogRows (a Transactions
// row partition: TxnOptions.BacklogRows), so that a backlog and the
// tombstones of the merges that drain it stay readable and mergeable; a
// partition past that is refused with crdt.ErrTooLarge rather than read
// partially, by Balance, Conflicts and Merge alike (SPEC.md 9.3 step 1).
const MaxRows = 100_000

// Errors specific to this package. Each wraps a crdt sentinel.
var (
	// ErrInvalidKey is returned for an account key that breaks the rules of
	// crdt.ValidateKey. It is crdt.ErrInvalidKey.
	ErrInvalidKey = crdt.ErrInvalidKey

	// ErrSlowMerge is returned when a merge ran longer than
	// Options.MaxMerge before writing its sum row (or, in
	// Transactions.Merge, its records). It then writes nothing more to
	// that partition; tombstones it already wrote are void and collected
	// later. (Transactions.Merge still expires record partitions no call
	// reads, which is safe after any failure.)
	ErrSlowMerge = fmt.Errorf("%w: merge ran longer than MaxMerge", crdt.ErrUnavailable)

	// ErrClockSkew is returned when a merge's clock is behind a valid sum
	// row by FutureSkew or more: its version, 100 ns after that row's,
	// would be more than FutureSkew ahead of the clock (SPEC.md 9.3 step
	// 4). It writes nothing. An invalid sum row ahead of the clock does
	// not stop a merge. A merger whose clock ran ahead leaves such rows:
	// every other merge of the account fails so until its clock comes
	// within FutureSkew of them (SPEC.md 9.3, timing assumptions).
	ErrClockSkew = fmt.Errorf("%w: merge clock is behind the newest sum row", crdt.ErrUnavailable)
)

// Options configure Accounts; a zero field selects its default. SPEC.md
// 9.3 gives the timing assumptions they encode. Every process that writes
// or merges an account must use the same: New checks the bounds among one
// set of Options only.
type Options struct {
	// Window is the write window: Add refuses an update id older than
	// now − Window. Default 5 minutes.
	Window time.Duration
	// FutureSkew is the clock-skew allowance: Add refuses ids more than
	// this far ahead. The clocks of every process writing or merging an
	// account must agree within FutureSkew of each other (not each within
	// it of true time: SPEC.md 9.3, timing assumptions; in Transactions, a
	// retry is answered from its record only by a call whose clock is
	// within FutureSkew of the merge's, SPEC.md 9.4). Default 5 seconds.
	FutureSkew time.Duration
	// SafetyMargin bounds write latency plus twice FutureSkew. Default 30
	// seconds; it must exceed 2·FutureSkew.
	SafetyMargin time.Duration
	// MaxMerge is how long a merge may run before it must abort instead of
	// writing its sum row. Default 10 seconds.
	MaxMerge time.Duration
	// SettleGrace is how old (by its update id) a valid sum row must be
	// before its covered rows are deleted (step 7). At least MaxMerge +
	// SafetyMargin. Default 1 minute.
	SettleGrace time.Duration
	// GCGrace is how old (by update id) an invalid tombstone or sum row
	// must be before it is deleted (step 8). At least Window + SafetyMargin
	// and at least SettleGrace. Default 10 minutes.
	GCGrace time.Duration
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
	// Observer, when set, receives one observe.Event per Add or Apply
	// ("add"), Balance and Conflicts ("read"), Merge and Delete
	// ("delete"), its store calls nested in it. Of Transactions, one per call: Apply ("add", outcome
	// observe.Applied or observe.Duplicate when it succeeds, Attempts the
	// record reads it made), Balance and Conflicts ("read", with the
	// conflicts read, 0 included), Recorded ("recorded"),
	// Merge (all the row partitions' merges, counts summed) and Delete
	// ("delete").
	Observer observe.Observer
}

func (o Options) withDefaults() (Options, error) {
	o.Window = cmp.Or(o.Window, 5*time.Minute)
	o.FutureSkew = cmp.Or(o.FutureSkew, 5*time.Second)
	o.SafetyMargin = cmp.Or(o.SafetyMargin, 30*time.Second)
	o.MaxMerge = cmp.Or(o.MaxMerge, 10*time.Second)
	o.SettleGrace = cmp.Or(o.SettleGrace, time.Minute)
	o.GCGrace = cmp.Or(o.GCGrace, 10*time.Minute)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if err := rowlog.CheckTiming(o, o.Window, o.FutureSkew, o.SafetyMargin, o.MaxMerge, o.SettleGrace, o.GCGrace); err != nil {
		return o, err
	}
	switch {
	case o.SettleGrace-o.SafetyMargin < o.MaxMerge:
		return o, fmt.Errorf("%w: SettleGrace %v must be at least MaxMerge + SafetyMargin", crdt.ErrInvalidConfig, o.SettleGrace)
	case o.GCGrace-o.SafetyMargin < o.Window || o.GCGrace < o.SettleGrace:
		return o, fmt.Errorf("%w: GCGrace %v must be at least Window + SafetyMargin and SettleGrace", crdt.ErrInvalidConfig, o.GCGrace)
	}
	return o, nil
}

// Accounts keeps account balances with the tombstone merge in a
// store.Partitions: one partition per account, one row per N, S or T row,
// keyed by EncodeKey and holding Row.MarshalBinary. It holds no
// per-account state, so any number of Accounts in any number of processes
// may share a store and merge one account at once; it is safe for
// concurrent use.
//
// Each write is one store Apply whose mutations carry consecutive
// timestamps from the process's write clock (Options.Clock in
// microseconds, strictly increasing in the process), so a settled sum row
// replaces the unsettled one and a merge's deletes shadow the rows it read,
// as long as the writers' clocks agree within FutureSkew. Rows another
// package wrote are refused as corrupt (crdt.ErrCorruptEncoding).
//
// Before calling the store, every method refuses an invalid account key
// (ErrInvalidKey) and a done context (crdt.ErrUnavailable and the
// context's error); Apply of an empty batch calls nothing and returns nil
// (SPEC.md 9.3).
type Accounts struct {
	t    rowlog.Table[Row]
	opts Options
	// pt, when set, reads placed partitions (placed.go): Transactions'
	// row partitions, up to backlog rows past MaxRows.
	pt      *rowlog.Table[placedRow]
	backlog int
}

// New returns Accounts over st. Invalid options wrap crdt.ErrInvalidConfig.
func New(st store.Partitions, opts Options) (*Accounts, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if storekit.Nil(st) {
		return nil, fmt.Errorf("%w: nil store", crdt.ErrInvalidConfig)
	}
	return &Accounts{t: rowlog.Table[Row]{Name: "balance", Store: st, Clock: o.Clock, Consecutive: true, Decode: decodeRow,
		CheckKey: func(account string) error { return crdt.ValidateKey("account key", account) }, Observer: o.Observer}, opts: o}, nil
}

// Options returns the effective options.
func (ac *Accounts) Options() Options { return ac.opts }

// Batch collects updates of several accounts that must land together (a
// transfer). The zero Batch is empty; a nil *Batch reads as empty. It is
// not safe for concurrent use.
type Batch struct {
	muts []update
}

// update is one N row addressed to one account.
type update = rowlog.Update[Row]

// Add appends one update of amount (non-zero, exact minor units) to account
// under the client-chosen id.
func (b *Batch) Add(account string, id ID, amount int64) {
	b.muts = append(b.muts, update{Partition: account, Row: NormalRow(id, amount)})
}

// Len returns the number of updates.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return len(b.muts)
}

// Add inserts one N row, an increment (amount > 0) or decrement (< 0) of
// account: one store write, no read. A retry with the client's id rewrites
// the same row and counts once. Reusing the id with another amount writes
// a second row; exactly one amount counts and the id is reported as a
// Conflict (SPEC.md 9.2). Refused, without writing: invalid key
// (ErrInvalidKey) or id (crdt.ErrInvalidTxnID), zero amount
// (crdt.ErrInvalidAmount), id outside [now − Window, now + FutureSkew]
// (crdt.ErrOutsideWindow), id before 1900, the range of Transactions' row
// ids, which a clock before 1900 would let through (crdt.ErrInvalidTxnID).
func (ac *Accounts) Add(ctx context.Context, account string, id ID, amount int64) error {
	u := [1]update{{Partition: account, Row: NormalRow(id, amount)}}
	return ac.apply(ctx, u[:])
}

// Apply validates every update of b and writes them in one atomic store
// call. An invalid update, or one (account, id) given twice with different
// amounts (crdt.ErrConflictingTransaction), fails the whole batch before
// anything is written. So does a batch past the store's limits (SPEC.md
// 10.2: 10,000 updates, and 32 KiB, a few hundred updates, when they span
// accounts): crdt.ErrTooLarge.
func (ac *Accounts) Apply(ctx context.Context, b *Batch) error {
	if b == nil {
		return ac.apply(ctx, nil)
	}
	return ac.apply(ctx, b.muts)
}

// apply is Apply of ups, encoded into one allocation for one update (Add's,
// from the stack), two otherwise.
func (ac *Accounts) apply(ctx context.Context, ups []update) error {
	out, buf := newWrite(len(ups))
	return ac.t.Apply(ctx, ups, out, func(m update, now time.Time) (ID, int64, store.Mutation, error) {
		if err := m.Row.Validate(); err != nil {
			return ID{}, 0, store.Mutation{}, fmt.Errorf("balance %q: %w", m.Partition, err)
		}
		if err := rowlog.InWindow(m.Row.UpdateID, now, ac.opts.Window, ac.opts.FutureSkew); err != nil {
			return ID{}, 0, store.Mutation{}, fmt.Errorf("balance %q: %w", m.Partition, err)
		}
		if IsTxnRowID(m.Row.UpdateID) {
			// Only a clock before 1900 lets one through the window; its
			// row would read as a Transactions row, which no Accounts
			// merge takes.
			return ID{}, 0, store.Mutation{}, fmt.Errorf("balance %q: %w: update id %s is before 1900, where Transactions' row ids are", m.Partition, crdt.ErrInvalidTxnID, m.Row.UpdateID)
		}
		return m.Row.UpdateID, m.Row.Amount, ac.appendN(&buf, m.Partition, now, m.Row), nil
	})
}

func (ac *Accounts) view(ctx context.Context, account string) (View, error) {
	if ac.pt != nil {
		return ac.placedView(ctx, account)
	}
	// A snapshot at store.ReadAny: it must see every acknowledged write,
	// and tolerates a write that landed without an acknowledgement showing
	// in one read and not the next, as it tolerates a merge that stopped
	// between two steps (on Cassandra: QUORUM, so reads stay available
	// with a replica down).
	rows, err := snapshot(ctx, &ac.t, account, MaxBacklogRows)
	if err != nil {
		return View{}, err
	}
	return Evaluate(rows)
}

// Balance returns the account's balance: the sum of the rows that count
// (Evaluate) in one partition read.
func (ac *Accounts) Balance(ctx context.Context, account string) (int64, error) {
	v, err := ac.observedView(ctx, account)
	if err != nil {
		return 0, err
	}
	return v.value()
}

func (ac *Accounts) observedView(ctx context.Context, account string) (View, error) {
	ctx, op := ac.t.Start(ctx, "read")
	defer endAborted(&op)
	v, err := ac.view(ctx, account)
	rowlog.End(&op, err, observe.Event{Attempts: 1, Conflicts: len(v.Conflicts)})
	return v, err
}

// Conflicts returns the account's update ids present with an amount that
// does not count (View.Conflicts), in one partition read, also when the
// balance does not fit int64.
func (ac *Accounts) Conflicts(ctx context.Context, account string) ([]Conflict, error) {
	ctx, op := ac.t.Start(ctx, "read")
	defer endAborted(&op)
	v, err := ac.view(ctx, account)
	if errors.Is(err, crdt.ErrOverflow) {
		err = nil // Evaluate returned the whole View
	}
	rowlog.End(&op, err, observe.Event{Attempts: 1, Conflicts: len(v.Conflicts)})
	return v.Conflicts, err
}

// MergeReport says what steps 5–8 of one Merge did.
type MergeReport struct {
	Version    ID    // the merge's version (and its sum row's update id)
	Tombstones []Row // step 5
	Sum        *Row  // step 6
	Settled    []Row // step 7: sum rows marked settled
	Deleted    []Row // step 7: the rows they covered (of a Transactions row partition: those removed, SPEC.md 9.4)
	Collected  []Row // step 8: invalid rows removed (likewise)
	TooYoung   []Row // step 8: invalid rows not yet GCGrace old
	// Conflicts are the update ids the merge read with an amount that does
	// not count (View.Conflicts); a merge deleting such a row reports it.
	Conflicts []Conflict

	newest time.Time // when the newest update Tombstones fold was made (its event's Lag)
}

// Merge runs one merge of account in the eight steps of SPEC.md 9.3, which
// MergeReport's fields name: one snapshot read, then one batch each for the
// tombstones of the live rows, the sum row that makes them valid (refused
// with ErrSlowMerge past MaxMerge, and nothing is written when the version
// would run ahead of the clock: ErrClockSkew), settling and collection.
// Steps 5–8 are skipped when there is nothing to do, so a merge of a
// settled account is one read. A crash between any two steps leaves the
// balance unchanged. An account whose balance does not fit int64 is not
// merged (crdt.ErrOverflow, nothing written) until debits bring it back,
// nor one past MaxRows rows (crdt.ErrTooLarge). A partition holding live
// rows of Transactions is refused (crdt.ErrTypeMismatch, nothing
// written): Transactions.Merge merges it.
func (ac *Accounts) Merge(ctx context.Context, account string) (MergeReport, error) {
	return ac.merge(ctx, account, nil)
}

// merge is Merge; before, when set, runs after the read, before the merge
// takes its version (Transactions records the transactions it will sum).
func (ac *Accounts) merge(ctx context.Context, account string, before func(context.Context, View) error) (MergeReport, error) {
	var m startedMerge
	defer endAborted(&m.op)
	ac.startMerge(ctx, account, &m)
	if m.err == nil && before != nil {
		m.err = before(m.ctx, m.v)
	} else if m.err == nil && slices.ContainsFunc(m.v.Live, func(r Row) bool { return r.Kind == KindNormal && IsTxnRowID(r.UpdateID) }) {
		// Summing a transaction's row without recording it would let a
		// retry after settling count again.
		m.err = fmt.Errorf("%w: account %q holds rows of balance.Transactions: merge it with Transactions.Merge", crdt.ErrTypeMismatch, account)
	}
	return ac.finishMerge(&m, account)
}

// errAborted is the error of an operation whose call did not return: it
// panicked (the panic goes on) or its goroutine exited.
var errAborted = errors.New("balance: the call panicked before it returned")

// endAborted ends op, unless it was ended, with errAborted. Deferred once
// op is begun, it ends the operation of a call that panicked, which a
// Starter would otherwise leave open (a leaked span).
func endAborted(op *observe.Operation) { rowlog.End(op, errAborted, observe.Event{Attempts: 1}) }

// startedMerge is a merge that has read its snapshot (steps 1–3): its
// observed operation, the clock before the read, the view, or the error
// that ends it.
type startedMerge struct {
	ctx   context.Context
	op    observe.Operation
	start time.Time
	v     View
	err   error
}

// startMerge starts a merge of account into m: it begins its operation,
// which the caller ends with finishMerge, or, when the call panics, with
// endAborted(&m.op) deferred before startMerge, and reads the snapshot.
func (ac *Accounts) startMerge(ctx context.Context, account string, m *startedMerge) {
	*m = startedMerge{start: ac.opts.Clock()}
	m.ctx, m.op = ac.t.Start(ctx, "merge")
	m.v, m.err = ac.view(m.ctx, account)
}

// finishMerge runs steps 4–8 of a started merge (none if it failed) and
// ends its operation.
func (ac *Accounts) finishMerge(m *startedMerge, account string) (MergeReport, error) {
	rep, err := ac.mergeSteps(m, account)
	rowlog.End(&m.op, err, mergeEvent(rep))
	return rep, err
}

// mergeEvent is the event of a merge that reported rep. Folded is the
// rows it folded into its sum row (one tombstone each) and those it
// removed.
func mergeEvent(rep MergeReport) observe.Event {
	e := observe.Event{Attempts: 1, Conflicts: len(rep.Conflicts), Folded: len(rep.Tombstones) + len(rep.Deleted) + len(rep.Collected),
		Rows: len(rep.Tombstones) + len(rep.Settled) + len(rep.Deleted) + len(rep.Collected)}
	if rep.Sum != nil {
		e.Rows++
		if !rep.newest.IsZero() {
			e.Lag = max(rep.Version.Time().Sub(rep.newest), 0) // the version: about when it read
		}
	}
	return e
}

// newestFolded is when the newest update tombstones fold was made: the
// time of its id, or, for a Transactions row (whose id is a hash), where
// it was first placed.
func (v View) newestFolded(tombstones []Row) time.Time {
	var newest time.Time
	later := func(at time.Time) {
		if at.After(newest) {
			newest = at
		}
	}
	for _, t := range tombstones {
		if v.places == nil || t.Target != KindNormal {
			later(t.UpdateID.Time())
			continue
		}
		for _, r := range v.normals[t.UpdateID] {
			if sp, ok := v.places[r.Key()]; ok {
				later(time.UnixMicro(sp.oldest))
			}
		}
	}
	return newest
}

// mergeSteps runs steps 4–8 of a started merge (none if it failed).
func (ac *Accounts) mergeSteps(m *startedMerge, account string) (rep MergeReport, err error) {
	if m.err != nil {
		return MergeReport{}, m.err
	}
	ctx, start, v := m.ctx, m.start, m.v
	// The version must sort after every sum row it may cover, so that
	// validation (ascending version order) meets a merge after the merges
	// it builds on.
	readAt := ac.opts.Clock()
	vt := readAt
	for _, s := range v.Valid {
		if t := s.UpdateID.Time().Add(100 * time.Nanosecond); !t.Before(vt) {
			if t.Sub(readAt) > ac.opts.FutureSkew {
				return MergeReport{}, fmt.Errorf("%w: sum row %s is %v ahead", ErrClockSkew, s.UpdateID, s.UpdateID.Time().Sub(readAt))
			}
			vt = t
		}
	}
	version := timeid.New(vt)
	p, err := planSteps(v, start, version, ac.opts.SettleGrace, ac.opts.GCGrace)
	if err != nil {
		return MergeReport{}, err
	}
	rep = MergeReport{Version: version, TooYoung: p.gcYoung, Conflicts: v.Conflicts}
	if len(p.tombstones) > 0 {
		if err := ac.mergeWrite(ctx, account, v, nil, p.tombstones); err != nil {
			return rep, err
		}
		rep.Tombstones, rep.newest = p.tombstones, v.newestFolded(p.tombstones)
		if el := ac.opts.Clock().Sub(readAt); el > ac.opts.MaxMerge {
			return rep, fmt.Errorf("%w (%v > %v)", ErrSlowMerge, el, ac.opts.MaxMerge)
		}
		if err := ac.mergeWrite(ctx, account, v, nil, []Row{p.sum}); err != nil {
			return rep, err
		}
		rep.Sum = &p.sum
	}
	if v.places != nil {
		return rep, ac.removePlaced(ctx, account, v, p, start, &rep)
	}
	if len(p.deletes)+len(p.settle) > 0 {
		if err := ac.writeRows(ctx, account, p.deletes, p.settle); err != nil {
			return rep, err
		}
		rep.Settled, rep.Deleted = p.settle, p.deletes
	}
	for gc := p.gc; len(gc) > 0; { // deletes only: any split is safe
		n := min(len(gc), store.MaxBatch)
		if err := ac.writeRows(ctx, account, gc[:n], nil); err != nil {
			return rep, err
		}
		rep.Collected, gc = p.gc[:len(rep.Collected)+n], gc[n:]
	}
	return rep, nil
}

// Delete removes the whole account with one partition delete.
func (ac *Accounts) Delete(ctx context.Context, account string) error {
	return ac.t.Delete(ctx, account)
}
