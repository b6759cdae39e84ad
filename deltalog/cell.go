package deltalog

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/stats"
	"github.com/counterkit/counterkit/timeid"
)

// ID is the time-based id (a version 1 UUID) of a cell, chosen by the
// client, so a retry of an update overwrites the same cell.
type ID = timeid.ID

// Kind distinguishes a regular update cell from a merge cell. The byte
// values are part of the storage format: KindMerge sorts before
// KindRegular, so a merge cell is met before the regular cell sharing its
// ID.
type Kind byte

// The two cell kinds.
const (
	KindMerge   Kind = 'm'
	KindRegular Kind = 'r'
)

// String returns "m" or "r".
func (k Kind) String() string { return rowlog.KindString(byte(k), "mr") }

// Stats are the exact, order-free aggregates of a set of regular cells: a
// stats.Summary. A merge cell whose Stats fail stats.Summary.Validate is
// invalid (Cell.Validate), so Variance is never negative for a valid cell
// or a Read.
type Stats = stats.Summary

// Cell is one stored entry of a counter's log. A regular cell holds one
// update's signed Delta, with Stats and Written zero. A merge cell holds
// the exact sum of every regular cell at or below its ID (Delta), their
// aggregates (Stats, Stats.Sum == Delta) and when its writer sent it
// (Written, Unix nanoseconds, which only decides when Compact may drop
// what it covers).
type Cell struct {
	ID      ID
	Kind    Kind
	Delta   int64
	Stats   Stats
	Written int64
}

// Validate reports whether c is well formed. The error wraps
// crdt.ErrInvalidTxnID (bad id), crdt.ErrInvalidAmount (zero delta, stats
// that disagree with the delta, that are empty or that Summary.Validate
// refuses; see Stats) or crdt.ErrCorruptEncoding (unknown kind).
func (c Cell) Validate() error {
	if err := c.ID.Validate(); err != nil {
		return err
	}
	switch c.Kind {
	case KindRegular:
		if c.Delta == 0 {
			return fmt.Errorf("%w: a regular cell needs a non-zero delta", crdt.ErrInvalidAmount)
		}
		if c.Stats != (Stats{}) || c.Written != 0 {
			return fmt.Errorf("%w: a regular cell carries no stats or write time", crdt.ErrInvalidAmount)
		}
	case KindMerge:
		s := c.Stats
		if s.Sum != c.Delta {
			return fmt.Errorf("%w: merge cell stats %+v disagree with delta %d", crdt.ErrInvalidAmount, s, c.Delta)
		}
		if s.Count < 1 {
			return fmt.Errorf("%w: merge cell stats %+v: count must be at least 1", crdt.ErrInvalidAmount, s)
		}
		if err := s.Validate(); err != nil {
			return fmt.Errorf("merge cell stats %+v: %w", s, err)
		}
		if c.Written < 0 {
			return fmt.Errorf("%w: negative merge write time", crdt.ErrInvalidAmount)
		}
	default:
		return fmt.Errorf("%w: unknown cell kind %d", crdt.ErrCorruptEncoding, byte(c.Kind))
	}
	return nil
}

// stats returns the aggregates this cell contributes to a read.
func (c Cell) stats() Stats {
	if c.Kind == KindMerge {
		return c.Stats
	}
	return stats.Of(c.Delta)
}

// sameContent reports whether two cells with the same key carry the same
// value. Written is metadata (two racing merges at one cutoff compute the
// same content at different times) and is ignored.
func (c Cell) sameContent(d Cell) bool {
	return c.Delta == d.Delta && c.Stats == d.Stats
}

// CompareCells orders cells the way stores cluster them: ID descending,
// then Kind ascending (-1 if a comes first, +1 if b does, 0 for one key).
func CompareCells(a, b Cell) int {
	return cmp.Or(b.ID.Compare(a.ID), cmp.Compare(a.Kind, b.Kind))
}

// Encoding caps and version.
const (
	// FormatVersion is the envelope version MarshalBinary writes.
	FormatVersion = 1
	// MaxCellSize is the largest encoded cell UnmarshalBinary accepts. A
	// valid cell encodes to at most 109 bytes (a merge cell whose integers
	// each take nine).
	MaxCellSize = 256
)

// MarshalBinary encodes c inside the crdt envelope (tag crdt.TagLogCell):
//
//	[id: bin16, kind: uint, delta: int, written: int, stats: nil | [count, sum, min, max, sumsq_hi, sumsq_lo]]
//
// Regular cells encode stats as nil. The encoding is deterministic. Invalid
// cells are refused with the error Validate returns.
func (c Cell) MarshalBinary() ([]byte, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	e := wire.NewEncoder(crdt.TagLogCell, FormatVersion)
	e.ArrayLen(5)
	e.Bin(c.ID[:])
	e.Uint(uint64(c.Kind))
	e.Int(c.Delta)
	e.Int(c.Written)
	if c.Kind == KindRegular {
		e.Nil()
	} else {
		e.Summary(c.Stats)
	}
	return e.Bytes()
}

// UnmarshalBinary decodes MarshalBinary's canonical encoding, at most
// MaxCellSize bytes. On error c is unchanged and the error wraps
// crdt.ErrCorruptEncoding, crdt.ErrTooLarge, crdt.ErrTypeMismatch or
// crdt.ErrUnsupportedVersion.
func (c *Cell) UnmarshalBinary(data []byte) error {
	d, _, err := wire.NewDecoder(data, crdt.TagLogCell, FormatVersion, MaxCellSize)
	if err != nil {
		return err
	}
	if err := rowlog.Fields(d, 5, "cell"); err != nil {
		return err
	}
	var out Cell
	if out.ID, err = d.TimeID(); err != nil {
		return err
	}
	k, err := rowlog.Byte(d, "kind")
	if err != nil {
		return err
	}
	out.Kind = Kind(k)
	if out.Delta, err = d.Int(); err != nil {
		return err
	}
	if out.Written, err = d.Int(); err != nil {
		return err
	}
	isNil, err := d.IsNil()
	if err != nil {
		return err
	}
	if !isNil {
		if out.Stats, err = d.Summary(); err != nil {
			return err
		}
	}
	if err := d.Finish(); err != nil {
		return err
	}
	if isNil != (out.Kind == KindRegular) {
		return fmt.Errorf("%w: stats present iff merge cell", crdt.ErrCorruptEncoding)
	}
	if err := out.Validate(); err != nil {
		return fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, err)
	}
	// Only the canonical encoding is accepted (smallest integer forms), so
	// equal values always have equal bytes.
	if canon, err := out.MarshalBinary(); err != nil || !bytes.Equal(canon, data) {
		return fmt.Errorf("%w: non-canonical encoding", crdt.ErrCorruptEncoding)
	}
	*c = out
	return nil
}
