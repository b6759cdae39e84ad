// Package rowlog holds what balance and deltalog share: rows keyed by a
// client-chosen time-based id, one partition per counter of a
// store.Partitions, written without a read inside a write window and read
// back by a scan that decodes every row. Tally's codec shares Fields.
package rowlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/internal/stamp"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// Table is one package's rows of type R in a store.
type Table[R any] struct {
	Name  string // the package, which prefixes its errors and names its events
	Store store.Partitions
	Clock func() time.Time
	// Consecutive gives the mutations of one write consecutive timestamps,
	// in order, so a later mutation of a row in one batch wins as if
	// applied one by one; otherwise they share one.
	Consecutive bool
	// Decode returns the row a stored row of partition holds.
	Decode func(partition string, sr store.Row) (R, error)
	// CheckKey refuses an invalid partition key, before any store call.
	CheckKey func(partition string) error
	// Observer, when set, receives the events of the operations Start begins.
	Observer observe.Observer
}

// Start begins the operation op on the table's Observer (observe.Start).
func (t *Table[R]) Start(ctx context.Context, op string) (context.Context, observe.Operation) {
	return observe.Start(ctx, t.Observer, t.Name, op)
}

// notDone returns an error wrapping crdt.ErrUnavailable and ctx's error if
// ctx is done.
func (t *Table[R]) notDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w: %w", t.Name, crdt.ErrUnavailable, err)
	}
	return nil
}

// Ready refuses an invalid partition key (CheckKey) and a done ctx.
func (t *Table[R]) Ready(ctx context.Context, partition string) error {
	if err := t.CheckKey(partition); err != nil {
		return err
	}
	return t.notDone(ctx)
}

// Write stamps muts from the process's write clock (all but those with a
// timestamp already) and applies them in one store call. Muts that all
// carry a timestamp take none from the clock, unless the table is
// Consecutive (each mutation then takes its slot).
func (t *Table[R]) Write(ctx context.Context, muts []store.Mutation) error {
	return t.writeAt(ctx, muts, time.Time{})
}

// writeAt is Write stamping from now when it is set (Apply's reading: it
// reads the clock once for the batch), else from the clock's.
func (t *Table[R]) writeAt(ctx context.Context, muts []store.Mutation, now time.Time) error {
	if err := t.notDone(ctx); err != nil {
		return err
	}
	n, step := 1, int64(0)
	if t.Consecutive {
		n, step = len(muts), 1
	} else if !slices.ContainsFunc(muts, func(m store.Mutation) bool { return m.Timestamp == 0 }) {
		return written(t.Store.Apply(ctx, muts))
	}
	if now.IsZero() {
		now = t.Clock()
	}
	ts := stamp.Reserve(now, n)
	for i := range muts {
		if muts[i].Timestamp == 0 {
			muts[i].Timestamp = ts + step*int64(i)
		}
	}
	return written(t.Store.Apply(ctx, muts))
}

// written returns the error of a store write, wrapping crdt.ErrAmbiguousWrite
// when the store did not classify it: such a write may have landed
// (store.Partitions), and the caller and an Observer see it as ambiguous.
func written(err error) error {
	if retry.Classify(err) == retry.Ambiguous {
		return retry.AmbiguousErr(err)
	}
	return err
}

// Update is one row of a batch, addressed to one partition.
type Update[R any] struct {
	Partition string
	Row       R
}

// Apply is a batch write (the Observer's "add"): each update's key
// (CheckKey), then check, which returns its id, amount and write at the
// batch's time now; a repeated (partition, id) is written once (Seen).
// Nothing is written unless all pass; out is room for the writes.
func (t *Table[R]) Apply(ctx context.Context, ups []Update[R], out []store.Mutation, check func(u Update[R], now time.Time) (timeid.ID, int64, store.Mutation, error)) error {
	ctx, op := t.Start(ctx, "add")
	defer op.End(Unreturned(true)) // if apply panics
	err := t.apply(ctx, ups, out, check)
	End(&op, err, observe.Event{Attempts: 1})
	return err
}

func (t *Table[R]) apply(ctx context.Context, ups []Update[R], out []store.Mutation, check func(u Update[R], now time.Time) (timeid.ID, int64, store.Mutation, error)) error {
	if len(ups) == 0 {
		return nil
	}
	now := t.Clock()
	var seen Seen // one update cannot repeat itself
	if len(ups) > 1 {
		seen = make(Seen, len(ups))
	}
	for _, u := range ups {
		if err := t.CheckKey(u.Partition); err != nil {
			return err
		}
		id, amount, m, err := check(u, now)
		if err != nil {
			return err
		}
		repeat, err := seen.Repeat(u.Partition, id, amount)
		if err != nil {
			return fmt.Errorf("%s %q: %w", t.Name, u.Partition, err)
		}
		if !repeat {
			out = append(out, m)
		}
	}
	return t.writeAt(ctx, out, now)
}

// Snapshot reads partition as one snapshot of at most limit rows and
// decodes it, in clustering order.
func (t *Table[R]) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]R, error) {
	if err := t.Ready(ctx, partition); err != nil {
		return nil, err
	}
	stored, err := t.Store.Snapshot(ctx, partition, limit, level)
	if err != nil {
		return nil, err
	}
	out := make([]R, len(stored))
	for i, sr := range stored {
		if out[i], err = t.Decode(partition, sr); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Scan calls fn with partition's rows in clustering order, from the first
// key ≥ from (nil: the first row), until fn returns false. A row that does
// not decode ends the scan with Decode's error.
func (t *Table[R]) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(R) bool) error {
	return t.scan(ctx, partition, from, nil, level, fn)
}

// ScanPrefix is Scan of the rows whose keys start with prefix, from the
// first: it ends at the first other key without decoding that row, so a
// row of another key that does not decode does not fail it.
func (t *Table[R]) ScanPrefix(ctx context.Context, partition string, prefix []byte, level store.Read, fn func(R) bool) error {
	return t.scan(ctx, partition, prefix, prefix, level, fn)
}

// scan is Scan from from, ending before the first key without prefix (nil:
// none).
func (t *Table[R]) scan(ctx context.Context, partition string, from, prefix []byte, level store.Read, fn func(R) bool) error {
	if err := t.Ready(ctx, partition); err != nil {
		return err
	}
	var bad error
	err := t.Store.Scan(ctx, partition, from, level, func(sr store.Row) bool {
		if prefix != nil && !bytes.HasPrefix(sr.Key, prefix) {
			return false
		}
		r, err := t.Decode(partition, sr)
		if err != nil {
			bad = err
			return false
		}
		return fn(r)
	})
	if err != nil {
		return err
	}
	return bad
}

// Delete removes partition with one store call (the Observer's
// "delete").
func (t *Table[R]) Delete(ctx context.Context, partition string) error {
	ctx, op := t.Start(ctx, "delete")
	defer op.End(Unreturned(true)) // if the store panics
	err := t.CheckKey(partition)
	if err == nil {
		err = t.Write(ctx, []store.Mutation{{Partition: partition, Op: store.OpDeletePartition}})
	}
	End(&op, err, observe.Event{Attempts: 1})
	return err
}

// DecodeRow returns the row a stored row of partition holds, decoding its
// key with key and its value with value (which also returns the key the
// row names: another than the stored key is crdt.ErrCorruptEncoding).
// Errors name pkg and the partition, a noun ("account").
func DecodeRow[K comparable, R any](pkg, noun, partition string, sr store.Row, key func([]byte) (K, error), value func([]byte) (R, K, error)) (R, error) {
	var zero R
	k, err := key(sr.Key)
	if err != nil {
		return zero, fmt.Errorf("%s: %s %q: %w", pkg, noun, partition, err)
	}
	r, rk, err := value(sr.Value)
	if err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) {
		// Another type's value, or one too large or of a later version,
		// is a damaged row too.
		err = fmt.Errorf("%w: %w", crdt.ErrCorruptEncoding, err)
	}
	if err != nil {
		return zero, fmt.Errorf("%s: %s %q: row %v: %w", pkg, noun, partition, k, err)
	}
	if rk != k {
		return zero, fmt.Errorf("%w: %s: %s %q: row key %v holds row %v", crdt.ErrCorruptEncoding, pkg, noun, partition, k, rk)
	}
	return r, nil
}

// DecodeID decodes the update id a row key of n bytes starts with (in
// timeid.AppendDescending's encoding); what names the key in errors, which
// wrap crdt.ErrCorruptEncoding.
func DecodeID(b []byte, n int, what string) (timeid.ID, error) {
	if len(b) != n {
		return timeid.ID{}, fmt.Errorf("%w: %s of %d bytes, want %d", crdt.ErrCorruptEncoding, what, len(b), n)
	}
	id, err := timeid.DecodeDescending(b[:timeid.KeyLen])
	if err != nil {
		return timeid.ID{}, err
	}
	if err := id.Validate(); err != nil {
		return timeid.ID{}, fmt.Errorf("%w: %s: %v", crdt.ErrCorruptEncoding, what, err)
	}
	return id, nil
}

// KindString returns k's letter if it is in known, else "Kind(k)".
func KindString(k byte, known string) string {
	if strings.IndexByte(known, k) >= 0 {
		return string(rune(k))
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// MaxFields caps the header of a fixed-shape array before its exact arity
// is checked, so a shape with extra fields is reported as corrupt (not as
// too large) like every other malformed shape.
const MaxFields = 1 << 16

// Fields reads the header of a row's array, which must have n fields; what
// names the row in errors.
func Fields(d *wire.Decoder, n int, what string) error {
	got, err := d.ArrayLen(MaxFields)
	if err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("%w: %s has %d fields, want %d", crdt.ErrCorruptEncoding, what, got, n)
	}
	return nil
}

// Byte reads an unsigned integer that must fit a byte (a kind); what names
// it in errors.
func Byte(d *wire.Decoder, what string) (byte, error) {
	v, err := d.Uint()
	if err != nil {
		return 0, err
	}
	if v > math.MaxUint8 {
		return 0, fmt.Errorf("%w: %s %d", crdt.ErrCorruptEncoding, what, v)
	}
	return byte(v), nil
}

// InWindow refuses an id that is not a version 1 UUID
// (crdt.ErrInvalidTxnID), or whose time is outside [now − window,
// now + skew] (crdt.ErrOutsideWindow).
func InWindow(id timeid.ID, now time.Time, window, skew time.Duration) error {
	if err := id.Validate(); err != nil {
		return err
	}
	if t := id.Time(); t.Before(now.Add(-window)) || t.After(now.Add(skew)) {
		return fmt.Errorf("%w: id %s from %s is outside [now-%v, now+%v]", crdt.ErrOutsideWindow, id, t.UTC().Format(time.RFC3339Nano), window, skew)
	}
	return nil
}

// MaxDuration bounds every duration of the options CheckTiming checks: the
// cutoffs the packages compute (now − Window − SafetyMargin and the like)
// add up to five of them, which must not overflow time.Duration.
const MaxDuration = 50 * 365 * 24 * time.Hour

// CheckTiming checks the durations both packages' options share: none is
// negative or over MaxDuration (opts is printed then) and margin exceeds
// twice skew. Errors wrap crdt.ErrInvalidConfig.
func CheckTiming(opts any, window, skew, margin time.Duration, others ...time.Duration) error {
	bad := false
	for _, d := range append([]time.Duration{window, skew, margin}, others...) {
		bad = bad || d < 0 || d > MaxDuration
	}
	switch {
	case bad:
		return fmt.Errorf("%w: a duration negative or over 50 years in %+v", crdt.ErrInvalidConfig, opts)
	// The durations are not negative from here on, so the bounds are
	// compared without sums that could overflow.
	case margin-skew <= skew:
		return fmt.Errorf("%w: SafetyMargin %v must exceed 2·FutureSkew %v", crdt.ErrInvalidConfig, margin, skew)
	}
	return nil
}

// Key names one update of a batch: an update id of one partition.
type Key struct {
	Partition string
	ID        timeid.ID
}

// Seen holds the amount of each update of a batch so far; a nil Seen
// records nothing.
type Seen map[Key]int64

// Repeat reports whether (partition, id) is already in s, recording it if
// not; another amount for it is crdt.ErrConflictingTransaction.
func (s Seen) Repeat(partition string, id timeid.ID, amount int64) (bool, error) {
	if s == nil {
		return false, nil
	}
	k := Key{partition, id}
	a, ok := s[k]
	if ok && a != amount {
		return true, fmt.Errorf("%w: the batch sets update %s to %d and %d", crdt.ErrConflictingTransaction, id, a, amount)
	}
	s[k] = amount
	return ok, nil
}

// The errors of an operation that did not return: what it called
// panicked (or ended its goroutine). A write may have landed.
var (
	errUnreturnedRead  = errors.New("counterkit: the operation did not return")
	errUnreturnedWrite = fmt.Errorf("%w: the operation did not return", crdt.ErrAmbiguousWrite)
)

// Unreturned is the event of an operation that did not return (what it
// called panicked): one attempt, failed, and for a write (write)
// ambiguous. Deferred, as in
//
//	defer op.End(rowlog.Unreturned(true))
//
// before the operation's own End, it ends only an operation that panics:
// End reports once. (A deferred function that ends the operation with a
// named error result instead sees that error nil while a panic unwinds.)
func Unreturned(write bool) observe.Event {
	if write {
		return observe.Event{Err: errUnreturnedWrite, Attempts: 1, Ambiguous: 1}
	}
	return observe.Event{Err: errUnreturnedRead, Attempts: 1}
}

// End ends op with e, its error err, and whether a write was ambiguous or
// refused by the store (a caller's cancellation is not a refusal, as in
// the ledger and tally).
func End(op *observe.Operation, err error, e observe.Event) {
	e.Err = err
	switch {
	case errors.Is(err, crdt.ErrAmbiguousWrite):
		e.Ambiguous = 1
	case errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, context.Canceled):
		e.Refused = 1
	}
	op.End(e)
}
