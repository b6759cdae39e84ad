package deltalog

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// Reading is the result of reading a counter: the value, the aggregates of
// every update it includes, and how many cells the read examined (its cost).
// Value is Stats.Sum: when the sum does not fit in int64 both read
// math.MaxInt64 or math.MinInt64 and Stats.BigSum is exact; the other
// aggregates are exact too (stats.Summary.Combine).
type Reading struct {
	Value int64
	Stats Stats
	Cells int
}

// sumVisible folds cells given in clustering order, stopping after the first
// merge cell.
func sumVisible(cells []Cell) Reading {
	var r Reading
	for _, c := range cells {
		r.Cells++
		r.Stats = r.Stats.Combine(c.stats())
		if c.Kind == KindMerge {
			break
		}
	}
	r.Value = r.Stats.Sum
	return r
}

// planMerge computes the merge cell of a log prefix in clustering order that
// ends at its first merge cell: at the newest cell strictly older than
// cutoff, or, when the aggregate there does not fit a cell, at the newest
// older regular cell whose aggregate fits (SPEC.md 8.3); ok is false when
// there is none.
func planMerge(prefix []Cell, cutoff time.Time, written time.Time) (m Cell, ok bool) {
	i := sort.Search(len(prefix), func(i int) bool { return prefix[i].ID.Time().Before(cutoff) })
	var acc Stats
	for j := len(prefix) - 1; j >= i; j-- {
		if acc = acc.Combine(prefix[j].stats()); acc.Fits() && prefix[j].Kind == KindRegular {
			m, ok = Cell{ID: prefix[j].ID, Kind: KindMerge, Delta: acc.Sum, Stats: acc, Written: written.UnixNano()}, true
		}
	}
	return m, ok
}

// Log is the in-memory form of one counter's cells, keyed by (ID, Kind) in
// clustering order: what a store partition holds, without the I/O, for
// tests and for callers that replicate logs themselves.
//
// Log is a state-based CRDT whose Merge is set union; SPEC.md 8.3 gives
// its operations.
//
// The zero Log is empty; a nil *Log reads as empty, and the methods that
// change a log panic on it. A Log is not safe for concurrent use.
type Log struct {
	cells []Cell // clustering order: newest first
}

// all returns the cells, none for a nil log.
func (l *Log) all() []Cell {
	if l == nil {
		return nil
	}
	return l.cells
}

// find returns the index where a cell with c's key is or would be.
func (l *Log) find(c Cell) (int, bool) { return slices.BinarySearchFunc(l.cells, c, CompareCells) }

// check reports whether c could be inserted: it is valid and agrees with
// any cell already stored under its key.
func (l *Log) check(c Cell) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if i, ok := l.find(c); ok && !l.cells[i].sameContent(c) {
		return fmt.Errorf("%w: cell %s/%s holds %d, update has %d",
			crdt.ErrConflictingTransaction, c.ID, c.Kind, l.cells[i].Delta, c.Delta)
	}
	return nil
}

func (l *Log) put(c Cell) {
	if i, ok := l.find(c); ok {
		l.cells[i].Written = max(l.cells[i].Written, c.Written)
	} else {
		l.cells = slices.Insert(l.cells, i, c)
	}
}

// Insert adds c; a cell already present is a no-op, which makes a retry
// idempotent. A cell whose key holds another delta or stats is refused
// with crdt.ErrConflictingTransaction, an invalid one with Validate's
// error; the log is then unchanged. Insert does not check the write window.
func (l *Log) Insert(c Cell) error {
	if err := l.check(c); err != nil {
		return err
	}
	l.put(c)
	return nil
}

// Add inserts a regular cell for one update.
func (l *Log) Add(id ID, delta int64) error {
	return l.Insert(Cell{ID: id, Kind: KindRegular, Delta: delta})
}

// Merge folds other into l (set union). On conflict it returns an error
// wrapping crdt.ErrConflictingTransaction and leaves l unchanged.
func (l *Log) Merge(other *Log) error {
	_ = *l // a nil receiver panics, even with nothing to merge
	if other == nil || other == l {
		return nil
	}
	for _, c := range other.cells {
		if err := l.check(c); err != nil {
			return err
		}
	}
	for _, c := range other.cells {
		l.put(c)
	}
	return nil
}

// Clone returns a deep copy (an empty log for a nil one).
func (l *Log) Clone() *Log {
	return &Log{cells: append([]Cell(nil), l.all()...)}
}

// Equal reports whether the two logs hold exactly the same cells.
func (l *Log) Equal(other *Log) bool { return slices.Equal(l.all(), other.all()) }

// Len returns the number of stored cells.
func (l *Log) Len() int { return len(l.all()) }

// Cells returns a copy of the cells in clustering order.
func (l *Log) Cells() []Cell { return append([]Cell(nil), l.all()...) }

// Read sums the cells from the newest down to the first merge cell,
// exactly (Reading). The error is always nil.
func (l *Log) Read() (Reading, error) { return sumVisible(l.all()), nil }

// Value returns Read's value.
func (l *Log) Value() int64 { return sumVisible(l.all()).Value }

// visiblePrefix returns the cells up to and including the first merge cell.
func (l *Log) visiblePrefix() []Cell {
	if i := slices.IndexFunc(l.cells, func(c Cell) bool { return c.Kind == KindMerge }); i >= 0 {
		return l.cells[:i+1]
	}
	return l.cells
}

// MergeBefore writes and returns a merge cell, written at written, at the
// newest cell strictly older than cutoff, holding the sum of everything at
// or below it; ok is false when there is nothing to merge. When that sum
// or its aggregates do not fit a cell (int64, 2^128) it merges at the
// newest older cell where they fit, or not at all. It is correct only if
// no regular cell older than cutoff can still arrive, which Counters'
// write window guarantees.
func (l *Log) MergeBefore(cutoff, written time.Time) (Cell, bool, error) {
	_ = *l // a nil receiver panics, even with nothing to merge
	m, ok := planMerge(l.visiblePrefix(), cutoff, written)
	if !ok {
		return Cell{}, false, nil
	}
	if err := l.Insert(m); err != nil {
		return Cell{}, false, err
	}
	return m, true, nil
}

// Compact drops every cell below the first merge cell (they are covered by
// it) and returns how many it dropped. The value is unchanged.
func (l *Log) Compact() int {
	_ = *l // a nil receiver panics, even with nothing to drop
	p := len(l.visiblePrefix())
	n := len(l.cells) - p
	l.cells = l.cells[:p:p]
	return n
}
