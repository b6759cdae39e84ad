package deltalog

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/internal/stamp"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// Errors specific to this package. Each wraps a crdt sentinel.
var (
	// ErrInvalidKey is returned for a counter key that breaks the rules of
	// crdt.ValidateKey. It is crdt.ErrInvalidKey.
	ErrInvalidKey = crdt.ErrInvalidKey

	// ErrSlowScan is returned when a read or merge scan took longer than
	// Options.MaxScan. Its result may have missed cells that a compaction
	// removed during the scan, so it is discarded; retrying is safe.
	ErrSlowScan = fmt.Errorf("%w: scan took longer than MaxScan", crdt.ErrUnavailable)
)

// MaxKeyLen is the longest counter key, in bytes: crdt.MaxKeyLen.
const MaxKeyLen = crdt.MaxKeyLen

// DefaultMaxMergeCells is Options.MaxMergeCells' default.
const DefaultMaxMergeCells = 100_000

// Options configure Counters; a zero field selects its default. SPEC.md
// 8.4 gives the timing assumptions they encode and the bounds New checks.
type Options struct {
	// Window is the write window: Add refuses an update whose ID time is
	// older than now − Window. Default 10 minutes.
	Window time.Duration
	// FutureSkew is how far in the future an ID time may be (clock skew
	// allowance). Default 5 seconds.
	FutureSkew time.Duration
	// SafetyMargin is added to Window to get the merge cutoff: only cells
	// older than now − Window − SafetyMargin are merged. It must exceed
	// 2·FutureSkew. Default 1 minute.
	SafetyMargin time.Duration
	// MaxScan bounds how long each scan of a read or a merge may take (a
	// merge that drains runs several); a slower one fails with
	// ErrSlowScan. Compact's scan is not bounded: it reads its horizon
	// first. Default 10 seconds.
	MaxScan time.Duration
	// CompactGrace is how long a merge cell must have existed (by its
	// Written time) before Compact deletes what it covers. Default 2
	// minutes.
	CompactGrace time.Duration
	// MaxMergeCells is the most regular cells one merge scan reads above
	// the merge cell below them: past it (a backlog a merger outage left) a
	// merge folds the oldest cells first, at most this many a merge, so
	// that merges drain any backlog; more than this many in one 100 ns tick
	// are merged whole, by one scan without the limit (SPEC.md 8.5,
	// "Drain"). Default 100,000; it must fit in what the store scans
	// within MaxScan, and exceed what arrives in a merge interval.
	MaxMergeCells int
	// Clock returns the current time. Default time.Now. A merge records it
	// in Unix nanoseconds, so Merge, and Compact, which compares it with
	// that record, refuse a reading before 1970 or after 2262-04-11 with
	// crdt.ErrInvalidConfig (after the key and context checks).
	Clock func() time.Time
	// Observer, when set, receives one observe.Event per Add or Apply
	// ("add"), Read, Merge, Compact and Delete.
	Observer observe.Observer
}

func (o Options) withDefaults() (Options, error) {
	o.Window = cmp.Or(o.Window, 10*time.Minute)
	o.FutureSkew = cmp.Or(o.FutureSkew, 5*time.Second)
	o.SafetyMargin = cmp.Or(o.SafetyMargin, time.Minute)
	o.MaxScan = cmp.Or(o.MaxScan, 10*time.Second)
	o.CompactGrace = cmp.Or(o.CompactGrace, 2*time.Minute)
	o.MaxMergeCells = cmp.Or(o.MaxMergeCells, DefaultMaxMergeCells)
	if o.MaxMergeCells < 1 {
		return o, fmt.Errorf("%w: MaxMergeCells %d must be positive", crdt.ErrInvalidConfig, o.MaxMergeCells)
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if err := rowlog.CheckTiming(o, o.Window, o.FutureSkew, o.SafetyMargin, o.MaxScan, o.CompactGrace); err != nil {
		return o, err
	}
	if o.CompactGrace-o.SafetyMargin < o.MaxScan {
		return o, fmt.Errorf("%w: CompactGrace %v must be at least MaxScan %v + SafetyMargin %v", crdt.ErrInvalidConfig, o.CompactGrace, o.MaxScan, o.SafetyMargin)
	}
	return o, nil
}

// Counters reads and updates log-structured counters kept in a
// store.Partitions: one partition per counter, one row per cell, keyed by
// EncodeKey and holding Cell.MarshalBinary. It holds no per-counter state,
// so any number of Counters in any number of processes may share a store;
// it is safe for concurrent use.
//
// Every write carries a timestamp from the process's write clock
// (Options.Clock in microseconds, strictly increasing in the process), so
// rewriting a cell replaces it and a compaction or a delete shadows every
// cell written before it; a merge cell's is no later than its cutoff, so
// that a Delete after its merge began shadows it too (SPEC.md 8.5). Rows
// another package wrote are refused as corrupt (crdt.ErrCorruptEncoding).
//
// Before calling the store, every method refuses an invalid counter key
// (ErrInvalidKey) and a done context (crdt.ErrUnavailable and the
// context's error); Apply of an empty batch calls nothing and returns nil
// (SPEC.md 8.4).
type Counters struct {
	t    rowlog.Table[Cell]
	opts Options
}

// New returns Counters over st. Invalid options wrap crdt.ErrInvalidConfig.
func New(st store.Partitions, opts Options) (*Counters, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	if storekit.Nil(st) {
		return nil, fmt.Errorf("%w: nil store", crdt.ErrInvalidConfig)
	}
	return &Counters{t: rowlog.Table[Cell]{Name: "deltalog", Store: st, Clock: o.Clock, Decode: decodeRow,
		CheckKey: checkKey, Observer: o.Observer}, opts: o}, nil
}

// Options returns the effective options (defaults filled in).
func (c *Counters) Options() Options { return c.opts }

func checkKey(counter string) error {
	if err := crdt.ValidateKey("counter key", counter); err != nil {
		return fmt.Errorf("deltalog: %w", err)
	}
	return nil
}

// Add records one update of delta (non-zero) to counter under the
// client-chosen id: one store write, no read. A retry with the same id and
// delta rewrites the same cell and counts once; reusing an id with another
// delta keeps exactly one of the two. Refused, without writing: invalid
// key (ErrInvalidKey), an id that is not a version 1 UUID
// (crdt.ErrInvalidTxnID), a zero delta (crdt.ErrInvalidAmount), an id
// outside the write window (crdt.ErrOutsideWindow).
func (c *Counters) Add(ctx context.Context, counter string, id ID, delta int64) error {
	var b Batch
	b.Add(counter, id, delta)
	return c.Apply(ctx, &b)
}

// Batch collects updates to several counters that must land together (a
// transfer). The zero Batch is empty; a nil *Batch reads as empty. It is
// not safe for concurrent use.
type Batch struct {
	entries []entry
}

// entry is one cell addressed to one counter.
type entry = rowlog.Update[Cell]

// Add appends one update. Validation happens in Counters.Apply.
func (b *Batch) Add(counter string, id ID, delta int64) {
	b.entries = append(b.entries, entry{Partition: counter, Row: Cell{ID: id, Kind: KindRegular, Delta: delta}})
}

// Len returns the number of updates in the batch.
func (b *Batch) Len() int {
	if b == nil {
		return 0
	}
	return len(b.entries)
}

// Apply validates every update of b and writes them with one atomic store
// Apply. An invalid update (see Add), or one (counter, id) given twice with
// different deltas (crdt.ErrConflictingTransaction), fails the whole batch
// before anything is written.
func (c *Counters) Apply(ctx context.Context, b *Batch) error {
	var es []entry
	if b != nil {
		es = b.entries
	}
	return c.t.Apply(ctx, es, make([]store.Mutation, 0, len(es)), func(e entry, now time.Time) (ID, int64, store.Mutation, error) {
		if err := rowlog.InWindow(e.Row.ID, now, c.opts.Window, c.opts.FutureSkew); err != nil {
			return ID{}, 0, store.Mutation{}, fmt.Errorf("deltalog %q: %w", e.Partition, err)
		}
		m, err := cellMutation(e.Partition, e.Row) // validates the cell
		if err != nil {
			err = fmt.Errorf("deltalog %q: %w", e.Partition, err)
		}
		return e.Row.ID, e.Row.Delta, m, err
	})
}

// scanVisible reads counter's cells from the first at or after from (nil:
// the newest) down to and including the first merge cell, enforcing
// MaxScan from start, the clock read before it. With limit > 0 it stops
// after limit + 1 regular cells (tooMany).
func (c *Counters) scanVisible(ctx context.Context, counter string, start time.Time, from []byte, limit int) ([]Cell, error) {
	var cells []Cell
	var bad error
	err := c.t.Scan(ctx, counter, from, store.ReadComplete, func(cell Cell) bool {
		if bad = c.checkMergeCell(counter, cell); bad != nil {
			return false
		}
		cells = append(cells, cell)
		return cell.Kind != KindMerge && (limit <= 0 || len(cells) <= limit)
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return nil, err
	}
	if el := c.opts.Clock().Sub(start); el > c.opts.MaxScan {
		return nil, fmt.Errorf("%w (%v > %v)", ErrSlowScan, el, c.opts.MaxScan)
	}
	return cells, nil
}

// checkMergeCell refuses, as crdt.ErrCorruptEncoding, a merge cell whose
// id is not older than now − Window, by the clock read when the scan meets
// it. A merge writes its cell at the id of a cell older than its own
// clock's now − Window − SafetyMargin, and clocks agree within FutureSkew
// (under SafetyMargin / 2), so no merge wrote it; read, it would hide the
// cells Add still accepts below it, and Compact would delete them (SPEC.md
// 8.5).
func (c *Counters) checkMergeCell(counter string, cell Cell) error {
	if cell.Kind != KindMerge {
		return nil
	}
	if floor := c.opts.Clock().Add(-c.opts.Window); !cell.ID.Time().Before(floor) {
		return fmt.Errorf("%w: deltalog: counter %q: merge cell %s at %s is not older than now − Window (%s): no merge writes it",
			crdt.ErrCorruptEncoding, counter, cell.ID, cell.ID.Time().UTC().Format(time.RFC3339Nano), floor.UTC().Format(time.RFC3339Nano))
	}
	return nil
}

// Read returns counter's value and aggregates: the sum of its cells from
// the newest down to the first merge cell, which it costs (Reading.Cells).
// A sum past int64 does not fail the read: Reading.Value clamps and
// Stats.BigSum is exact (SPEC.md 8.3).
func (c *Counters) Read(ctx context.Context, counter string) (Reading, error) {
	ctx, op := c.t.Start(ctx, "read")
	defer op.End(rowlog.Unreturned(false)) // only if the store panics
	cells, err := c.scanVisible(ctx, counter, c.opts.Clock(), nil, 0)
	var r Reading
	if err == nil {
		r = sumVisible(cells)
	}
	rowlog.End(&op, err, observe.Event{Attempts: 1, Rows: r.Cells})
	return r, err
}

// Merge writes, at the ID of the newest cell older than now − Window −
// SafetyMargin, a merge cell holding the sum and aggregates of everything
// at or below it (or, when those do not fit a cell, at the newest older
// cell where they do: Log.MergeBefore): one scan, of the cells from that
// one down to the previous merge cell, at most one write; ok is false when
// there was nothing to merge. Merges need no coordination: no cell that
// old can still be written (Options), so two merges at one cutoff write
// the same content.
func (c *Counters) Merge(ctx context.Context, counter string) (Cell, bool, error) {
	ctx, op := c.t.Start(ctx, "merge")
	defer op.End(rowlog.Unreturned(true)) // only if the store panics
	m, folded, ok, err := c.merge(ctx, counter)
	e := observe.Event{Attempts: 1, Folded: folded}
	if ok { // the merge folded through its newest cell, m.ID
		e.Lag = max(time.Unix(0, m.Written).Sub(m.ID.Time()), 0)
	}
	rowlog.End(&op, err, e)
	return m, ok, err
}

// mergeClock reads the clock for a merge, whose cell records the time as
// Unix nanoseconds (Cell.Written): a reading before 1970 or after
// 2262-04-11 has none and is refused with crdt.ErrInvalidConfig.
func (c *Counters) mergeClock() (time.Time, error) {
	now := c.opts.Clock()
	if now.Before(time.Unix(0, 0)) || now.After(time.Unix(0, math.MaxInt64)) {
		return now, fmt.Errorf("%w: deltalog: the clock reads %s, outside the Unix nanoseconds a merge cell records (1970 to 2262)",
			crdt.ErrInvalidConfig, now.UTC().Format(time.RFC3339Nano))
	}
	return now, nil
}

// merge is Merge; folded is how many regular cells its merge cell adds to
// the one below it (observe.Event.Folded).
func (c *Counters) merge(ctx context.Context, counter string) (m Cell, folded int, ok bool, err error) {
	if err := c.t.Ready(ctx, counter); err != nil {
		return Cell{}, 0, false, err
	}
	// The cell is stamped before the scan, and no later than its cutoff:
	// a Delete acknowledged after the scan began shadows it, as it shadows
	// the cells it sums, even from a process whose clock is FutureSkew
	// behind this one's (every cell at one merge id sums the same cells,
	// so an older stamp loses nothing; a cell a Delete hides leaves reads
	// to the cells below it, which it shadows unless written after it).
	start, err := c.mergeClock()
	if err != nil {
		return Cell{}, 0, false, err
	}
	cutoff := start.Add(-c.opts.Window - c.opts.SafetyMargin)
	ts := min(stamp.Reserve(start, 1), max(cutoff.UnixMicro(), 1))
	// Only cells older than the cutoff are merged: the scan starts at the
	// first of them (SPEC.md 8.5).
	from, ok := timeid.AppendDescendingBefore(nil, cutoff)
	if !ok {
		return Cell{}, 0, false, nil
	}
	cells, err := c.scanVisible(ctx, counter, start, from, c.opts.MaxMergeCells)
	if err == nil && c.tooMany(cells) {
		cells, err = c.drain(ctx, counter, cutoff, from, cells[len(cells)-1].ID.Time())
	}
	if err != nil {
		return Cell{}, 0, false, err
	}
	written, err := c.mergeClock()
	if err != nil {
		return Cell{}, 0, false, err
	}
	if m, ok = planMerge(cells, cutoff, written); !ok {
		return Cell{}, 0, false, nil
	}
	folded = int(m.Stats.Count)
	if below := cells[len(cells)-1]; below.Kind == KindMerge {
		folded -= int(below.Stats.Count)
	}
	mut, err := cellMutation(counter, m)
	if err != nil {
		return Cell{}, 0, false, err
	}
	mut.Timestamp = ts
	if err := c.t.Write(ctx, []store.Mutation{mut}); err != nil {
		return Cell{}, 0, false, err
	}
	return m, folded, true, nil
}

// tooMany reports whether a scan with limit MaxMergeCells stopped before
// the merge cell below its cells (scanVisible).
func (c *Counters) tooMany(cells []Cell) bool {
	return len(cells) > c.opts.MaxMergeCells && cells[len(cells)-1].Kind != KindMerge
}

// drainFloor is how far below the cutoff a merge looks for a backlog's
// oldest cells: 2^62 ns, about 146 years.
const drainFloor = time.Duration(1 << 62)

// drain finds where to merge a backlog: the scan from cutoff (its key
// first) read more than MaxMergeCells cells above the previous merge cell,
// the last of them at time at. It scans from times t below the cutoff: first stepping down,
// by cutoff − at and then twice as far each time, until a scan reads no
// more than MaxMergeCells cells to the merge cell below, or the end; then
// halving the interval between the highest t whose scan did not read too
// many (lo) and the lowest whose scan did (hi; a scan meeting a row that
// does not decode counts as one). It returns the cells of the highest t
// whose scan held a regular cell, once one holds at least MaxMergeCells/2
// cells or the interval is one tick (100 ns) or less; with no such scan by
// then, those of the merge's scan from the cutoff without the limit, as
// before the drain (SPEC.md 8.5, "Drain").
func (c *Counters) drain(ctx context.Context, counter string, cutoff time.Time, first []byte, at time.Time) ([]Cell, error) {
	const tick = 100 * time.Nanosecond
	hi, step, floor := cutoff, max(cutoff.Sub(at), time.Microsecond), cutoff.Add(-drainFloor)
	var lo time.Time // zero: no scan below hi read few enough yet
	var best []Cell
	for {
		var t time.Time
		switch {
		case best != nil && (len(best) >= max(c.opts.MaxMergeCells/2, 1) || hi.Sub(lo) <= tick):
			return best, nil
		case !lo.IsZero() && hi.Sub(lo) <= tick:
			// No time splits what lies above the merge cell (one tick
			// holds more than the limit), or what read too many was
			// stale (a merge cell landed under it since).
			return c.scanVisible(ctx, counter, c.opts.Clock(), first, 0)
		case !lo.IsZero():
			t = lo.Add(hi.Sub(lo) / 2)
		case step >= drainFloor/2 || !hi.Add(-step).After(floor):
			lo = floor // no cell is that old: the bottom
			continue
		default:
			t = hi.Add(-step)
			step *= 2
		}
		from, ok := timeid.AppendDescendingBefore(nil, t)
		if !ok {
			lo = t
			continue
		}
		cells, err := c.scanVisible(ctx, counter, c.opts.Clock(), from, c.opts.MaxMergeCells)
		switch {
		case errors.Is(err, crdt.ErrCorruptEncoding) || err == nil && c.tooMany(cells):
			hi = t
		case err != nil:
			return nil, err
		default:
			lo = t
			if len(cells) > 0 && cells[0].Kind != KindMerge {
				best = cells
			}
		}
	}
}

// Compact deletes, with at most one range delete, the cells covered by the
// newest merge cell that has existed for CompactGrace (by Written), so no
// read or merge begun before it is still scanning. It reports whether it
// deleted; the value is unchanged.
func (c *Counters) Compact(ctx context.Context, counter string) (bool, error) {
	ctx, op := c.t.Start(ctx, "compact")
	defer op.End(rowlog.Unreturned(true)) // only if the store panics
	deleted, err := c.compact(ctx, counter)
	folded := 0
	if deleted {
		folded = 1 // one range delete
	}
	rowlog.End(&op, err, observe.Event{Attempts: 1, Folded: folded})
	return deleted, err
}

func (c *Counters) compact(ctx context.Context, counter string) (deleted bool, err error) {
	if err := c.t.Ready(ctx, counter); err != nil {
		return false, err
	}
	now, err := c.mergeClock() // horizon is compared with a merge cell's Written
	if err != nil {
		return false, err
	}
	var m Cell
	found := false
	horizon := now.Add(-c.opts.CompactGrace)
	// A merge cell written by horizon is older than its Written time less
	// Window and SafetyMargin: the scan starts there (SPEC.md 8.5).
	from, ok := timeid.AppendDescendingBefore(nil, horizon.Add(-c.opts.Window-c.opts.SafetyMargin))
	if !ok {
		return false, nil
	}
	var bad error
	err = c.t.Scan(ctx, counter, from, store.ReadComplete, func(cell Cell) bool {
		if bad = c.checkMergeCell(counter, cell); bad != nil {
			return false
		}
		if cell.Kind == KindMerge && cell.Written <= horizon.UnixNano() {
			m, found = cell, true
			return false
		}
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil || !found {
		return false, err
	}
	// The regular cell at the merge cell's id and every older cell: the
	// rows from (id, 'r') to the end of the partition. The merge cell,
	// (id, 'm'), sorts just before and stays.
	del := store.Mutation{Partition: counter, Op: store.OpDeleteRange, Key: EncodeKey(m.ID, KindRegular)}
	if err := c.t.Write(ctx, []store.Mutation{del}); err != nil {
		return false, err
	}
	return true, nil
}

// Delete removes the whole counter with one partition delete.
func (c *Counters) Delete(ctx context.Context, counter string) error {
	return c.t.Delete(ctx, counter)
}
