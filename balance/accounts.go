package balance

import (
	"context"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
)

// Mutation is one row write or delete in one account's partition.
type Mutation struct {
	Account string
	Row     Row
	// Delete removes the row with Row's key instead of writing Row.
	Delete bool
}

// MaxRows bounds the rows of one partition a Store returns. Merges keep
// partitions far smaller; a partition above the bound is refused with
// crdt.ErrTooLarge rather than read partially.
const MaxRows = 100_000

// Store is what Ledger needs from a database. It is shaped after the seed's
// Cassandra table (with the version a timeuuid instead of text):
//
//	CREATE TABLE seller_balance (
//	    account  text,
//	    updateid timeuuid,
//	    type     tinyint,   -- 'N' (78), 'S' (83), 'T' (84)
//	    version  timeuuid,  -- null for N rows is stored as the zero UUID
//	    row      blob,      -- Row.MarshalBinary
//	    PRIMARY KEY ((account), updateid, type, version)
//	) WITH CLUSTERING ORDER BY (updateid DESC, type ASC, version ASC);
//
// Every method takes a context first and returns errors wrapping crdt
// sentinels (ErrUnavailable when a write is known not to have landed,
// ErrAmbiguousWrite when it may have). Implementations must be safe for
// concurrent use.
type Store interface {
	// Rows returns a consistent snapshot of every row of account, in
	// clustering order (CompareRows): all effects of a Write either are in
	// it or are not. Cassandra gives this for a single-partition read
	// fetched in one page, so adapters fetch up to MaxRows+1 rows at once
	// and return crdt.ErrTooLarge beyond MaxRows.
	Rows(ctx context.Context, account string) ([]Row, error)

	// Write applies every mutation atomically: all or none (Cassandra: one
	// logged batch; mutations of one partition are also isolated from
	// readers). Writing a key that exists replaces its row; deleting a key
	// that does not exist is a no-op. Write never reads. Invalid rows are
	// refused before anything is written.
	Write(ctx context.Context, muts []Mutation) error

	// DeleteAccount removes the whole partition (one partition delete).
	DeleteAccount(ctx context.Context, account string) error
}

// Errors specific to this package. Each wraps a crdt sentinel.
var (
	// ErrInvalidKey is returned when an account key breaks the rules of
	// crdt.ValidateKey (empty, longer than crdt.MaxKeyLen bytes, not UTF-8,
	// a control character). It is crdt.ErrInvalidKey, the error every
	// driver returns for a bad key.
	ErrInvalidKey = crdt.ErrInvalidKey

	// ErrSlowMerge is returned when a merge ran longer than
	// Options.MaxMerge before writing its sum row. It then writes nothing
	// more; tombstones it already wrote are void and collected later.
	ErrSlowMerge = fmt.Errorf("%w: merge ran longer than MaxMerge", crdt.ErrUnavailable)

	// ErrClockSkew is returned when a merge's clock is behind the newest sum
	// row by more than FutureSkew; it writes nothing.
	ErrClockSkew = fmt.Errorf("%w: merge clock is behind the newest sum row", crdt.ErrUnavailable)
)

// Options configure a Ledger. The zero value of each field selects the
// default beside it. See the package documentation for the timing
// assumptions these encode.
type Options struct {
	// Window is the write window: Add refuses an update id older than
	// now − Window. Default 5 minutes.
	Window time.Duration
	// FutureSkew is the clock-skew allowance: Add refuses ids more than
	// this far ahead. Default 5 seconds.
	FutureSkew time.Duration
	// SafetyMargin bounds write latency plus twice the clock skew. Default
	// 30 seconds; it must exceed 2·FutureSkew.
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
	// and at least SettleGrace. Default 10 minutes, as in the seed.
	GCGrace time.Duration
	// Clock returns the current time. Default time.Now.
	Clock func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.Window, 5*time.Minute)
	def(&o.FutureSkew, 5*time.Second)
	def(&o.SafetyMargin, 30*time.Second)
	def(&o.MaxMerge, 10*time.Second)
	def(&o.SettleGrace, time.Minute)
	def(&o.GCGrace, 10*time.Minute)
	if o.Clock == nil {
		o.Clock = time.Now
	}
	switch {
	case o.Window < 0, o.FutureSkew < 0, o.SafetyMargin < 0, o.MaxMerge < 0, o.SettleGrace < 0, o.GCGrace < 0:
		return o, fmt.Errorf("%w: negative duration in %+v", crdt.ErrInvalidConfig, o)
	case o.SafetyMargin <= 2*o.FutureSkew:
		return o, fmt.Errorf("%w: SafetyMargin %v must exceed 2·FutureSkew %v", crdt.ErrInvalidConfig, o.SafetyMargin, o.FutureSkew)
	case o.SettleGrace < o.MaxMerge+o.SafetyMargin:
		return o, fmt.Errorf("%w: SettleGrace %v must be at least MaxMerge + SafetyMargin", crdt.ErrInvalidConfig, o.SettleGrace)
	case o.GCGrace < o.Window+o.SafetyMargin || o.GCGrace < o.SettleGrace:
		return o, fmt.Errorf("%w: GCGrace %v must be at least Window + SafetyMargin and SettleGrace", crdt.ErrInvalidConfig, o.GCGrace)
	}
	return o, nil
}

// Ledger keeps account balances in a Store with design 000's tombstone
// merge. It holds no per-account state: any number of Ledgers in any number
// of processes may share a store and merge the same account at once. Ledger
// is safe for concurrent use.
type Ledger struct {
	store Store
	opts  Options
}

// New returns a Ledger over store. Invalid options wrap
// crdt.ErrInvalidConfig.
func New(store Store, opts Options) (*Ledger, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", crdt.ErrInvalidConfig)
	}
	return &Ledger{store: store, opts: o}, nil
}

// Options returns the effective options.
func (l *Ledger) Options() Options { return l.opts }

func checkKey(account string) error {
	return crdt.ValidateKey("account key", account)
}

// Batch collects increments and decrements of several accounts that must
// land together (a transfer). The zero Batch is empty and ready to use. A
// nil *Batch reads as empty (Len is 0, Apply writes nothing); Add on a nil
// *Batch panics. A Batch is not safe for concurrent use.
type Batch struct {
	muts []Mutation
}

// Add appends one update of amount (non-zero, exact minor units) to account
// under the client-chosen id.
func (b *Batch) Add(account string, id ID, amount int64) {
	b.muts = append(b.muts, Mutation{Account: account, Row: NormalRow(id, amount)})
}

// Len returns the number of updates.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return len(b.muts)
}

// Add inserts one N row: an increment (amount > 0) or decrement (< 0) of
// account. It costs one store write and no reads. The id is chosen by the
// client (unlike the seed, where the server generates it), so retrying after
// a lost acknowledgement rewrites the same row and counts once. Reusing the
// id with another amount writes a second row: Add cannot see the first
// without a read, so it is not refused; exactly one of the amounts counts
// and the id is reported as a Conflict (see the package documentation).
// Refused,
// without writing: invalid key (ErrInvalidKey) or id (crdt.ErrInvalidTxnID),
// zero amount (crdt.ErrInvalidAmount), id outside [now − Window,
// now + FutureSkew] (crdt.ErrOutsideWindow).
func (l *Ledger) Add(ctx context.Context, account string, id ID, amount int64) error {
	var b Batch
	b.Add(account, id, amount)
	return l.Apply(ctx, &b)
}

// Apply validates every update of b and writes them in one atomic store
// call (Cassandra: one logged batch). Any invalid update fails the whole
// batch before anything is written, as does one (account, id) given twice
// with different amounts (crdt.ErrConflictingTransaction). A nil or empty
// batch writes nothing.
func (l *Ledger) Apply(ctx context.Context, b *Batch) error {
	if b.Len() == 0 {
		return nil
	}
	now := l.opts.Clock()
	type key struct {
		account string
		id      ID
	}
	seen := map[key]int64{}
	out := make([]Mutation, 0, len(b.muts))
	for _, m := range b.muts {
		if err := checkKey(m.Account); err != nil {
			return err
		}
		if err := m.Row.Validate(); err != nil {
			return err
		}
		t := m.Row.UpdateID.Time()
		if t.Before(now.Add(-l.opts.Window)) || t.After(now.Add(l.opts.FutureSkew)) {
			return fmt.Errorf("%w: id %s from %s is outside [now-%v, now+%v]", crdt.ErrOutsideWindow, m.Row.UpdateID, t.UTC().Format(time.RFC3339Nano), l.opts.Window, l.opts.FutureSkew)
		}
		k := key{m.Account, m.Row.UpdateID}
		if a, ok := seen[k]; ok {
			if a != m.Row.Amount {
				return fmt.Errorf("%w: batch sets %s/%s to %d and %d", crdt.ErrConflictingTransaction, m.Account, m.Row.UpdateID, a, m.Row.Amount)
			}
			continue
		}
		seen[k] = m.Row.Amount
		out = append(out, m)
	}
	return l.store.Write(ctx, out)
}

func (l *Ledger) view(ctx context.Context, account string) (View, error) {
	if err := checkKey(account); err != nil {
		return View{}, err
	}
	rows, err := l.store.Rows(ctx, account)
	if err != nil {
		return View{}, err
	}
	if len(rows) > MaxRows {
		return View{}, fmt.Errorf("%w: account %q has %d rows, limit %d", crdt.ErrTooLarge, account, len(rows), MaxRows)
	}
	return Evaluate(rows)
}

// Balance returns the account's balance: one partition read, then the sum of
// the rows that count (see Evaluate). An account with no rows is zero.
func (l *Ledger) Balance(ctx context.Context, account string) (int64, error) {
	v, err := l.view(ctx, account)
	return v.Value, err
}

// Conflicts returns the account's update ids that are present with more than
// one amount, or with an amount other than the one already counted, and
// which amount counts for each (one partition read).
func (l *Ledger) Conflicts(ctx context.Context, account string) ([]Conflict, error) {
	v, err := l.view(ctx, account)
	return v.Conflicts, err
}

// MergeReport says what one Merge did, step by step (the seed's steps 5–8).
type MergeReport struct {
	// Version is the merge's version (and its sum row's update id).
	Version ID
	// Tombstones and Sum are the rows written by steps 5 and 6; both are
	// empty when there was nothing to merge.
	Tombstones []Row
	Sum        *Row
	// Settled are the sum rows marked settled and Deleted the rows they
	// covered, removed by step 7.
	Settled []Row
	Deleted []Row
	// Collected are the invalid rows removed by step 8, and TooYoung those
	// kept because they are not yet GCGrace old.
	Collected []Row
	TooYoung  []Row
	// Conflicts are the update ids the merge's read found with an amount
	// that does not count (see View.Conflicts). A merge that deletes such
	// a row always reports it.
	Conflicts []Conflict
}

// Merge runs one merge of account, following the seed's steps:
//
//  1. read the partition (one snapshot);
//  2. discard invalid tombstones and sum rows (Evaluate);
//  3. sum the live rows;
//  4. take a fresh version (a time-based id later than every valid sum
//     row, the ones it may cover);
//  5. if there is something to merge, write a tombstone for every live row
//     (one batch);
//  6. write the sum row, which makes those tombstones valid — unless the
//     merge has run longer than MaxMerge, in which case it stops with
//     ErrSlowMerge;
//  7. if any valid merge is SettleGrace old, delete the rows it covers and
//     mark it settled (one batch);
//  8. if any invalid tombstone or sum row is GCGrace old, or any tombstone
//     whose target step 7 deleted, delete it (one batch).
//
// Steps 5–8 are skipped when there is nothing to do, so a merge of a
// settled account is one read. A crash between any two steps leaves the
// balance unchanged.
func (l *Ledger) Merge(ctx context.Context, account string) (MergeReport, error) {
	start := l.opts.Clock()
	v, err := l.view(ctx, account)
	if err != nil {
		return MergeReport{}, err
	}
	// The version must sort after every sum row it may cover, so that
	// validation (ascending version order) meets a merge after the merges
	// it builds on.
	readAt := l.opts.Clock()
	vt := readAt
	for _, s := range v.Valid {
		if t := s.UpdateID.Time().Add(100 * time.Nanosecond); !t.Before(vt) {
			if t.Sub(readAt) > l.opts.FutureSkew {
				return MergeReport{}, fmt.Errorf("%w: sum row %s is %v ahead", ErrClockSkew, s.UpdateID, t.Sub(readAt))
			}
			vt = t
		}
	}
	version := deltalog.NewIDAt(vt)
	p, err := planSteps(v, start, version, l.opts.SettleGrace, l.opts.GCGrace)
	if err != nil {
		return MergeReport{}, err
	}
	rep := MergeReport{Version: version, TooYoung: p.gcYoung, Conflicts: v.Conflicts}
	if len(p.tombstones) > 0 {
		muts := make([]Mutation, len(p.tombstones))
		for i, t := range p.tombstones {
			muts[i] = Mutation{Account: account, Row: t}
		}
		if err := l.store.Write(ctx, muts); err != nil {
			return rep, err
		}
		rep.Tombstones = p.tombstones
		if el := l.opts.Clock().Sub(start); el > l.opts.MaxMerge {
			return rep, fmt.Errorf("%w (%v > %v)", ErrSlowMerge, el, l.opts.MaxMerge)
		}
		if err := l.store.Write(ctx, []Mutation{{Account: account, Row: p.sum}}); err != nil {
			return rep, err
		}
		rep.Sum = &p.sum
	}
	if len(p.deletes)+len(p.settle) > 0 {
		muts := make([]Mutation, 0, len(p.deletes)+len(p.settle))
		for _, r := range p.deletes {
			muts = append(muts, Mutation{Account: account, Row: r, Delete: true})
		}
		for _, r := range p.settle {
			muts = append(muts, Mutation{Account: account, Row: r})
		}
		if err := l.store.Write(ctx, muts); err != nil {
			return rep, err
		}
		rep.Settled, rep.Deleted = p.settle, p.deletes
	}
	if len(p.gc) > 0 {
		muts := make([]Mutation, len(p.gc))
		for i, r := range p.gc {
			muts[i] = Mutation{Account: account, Row: r, Delete: true}
		}
		if err := l.store.Write(ctx, muts); err != nil {
			return rep, err
		}
		rep.Collected = p.gc
	}
	return rep, nil
}

// Delete removes the whole account with one store call.
func (l *Ledger) Delete(ctx context.Context, account string) error {
	if err := checkKey(account); err != nil {
		return err
	}
	return l.store.DeleteAccount(ctx, account)
}
