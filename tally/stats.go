package tally

import (
	"fmt"
	"math/big"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/wire"
)

// Stats keeps the count, sum, minimum, maximum and sum of squares of its
// observations, all exact: the count and sum are int64 and the sum of
// squares is an unsigned 128-bit integer, each overflow-checked. The mean and
// variance are derived from them on demand. The windowed log (package
// deltalog) keeps the same cells in its merge cells.
//
// Decoding refuses cells that no set of observations has: with n
// observations the sum must lie in [(n−1)·min + max, min + (n−1)·max], and
// the sum of squares must have the parity of the sum and lie between the
// least and the greatest sum of squares of any n integers with that sum,
// minimum and maximum (for one observation, or min = max: every observation
// is min). So Variance is never negative for a decoded Stats, nor for any
// Stats that Add and Combine build from decoded ones.
//
// The zero value is empty and ready to use; a nil *Stats reads as it, and
// Add and Combine panic on it. A Stats is not safe for concurrent use.
type Stats struct {
	count    int64
	sum      int64
	min, max int64 // meaningful only when count > 0
	sq       exact.Uint128
}

// Add observes x. When the count, the sum or the sum of squares would
// overflow it returns an error wrapping crdt.ErrOverflow and leaves s
// unchanged.
func (s *Stats) Add(x int64) error {
	one := Stats{count: 1, sum: x, min: x, max: x, sq: exact.Square(x)}
	return s.Combine(&one)
}

// Combine adds other's observations to s. Overflow is an error wrapping
// crdt.ErrOverflow that leaves s unchanged. A nil other is empty.
func (s *Stats) Combine(other *Stats) error {
	_ = *s // a nil receiver panics, even with nothing to add
	if other == nil || other.count == 0 {
		return nil
	}
	if s.count == 0 {
		*s = *other
		return nil
	}
	count, ok1 := addInt64(s.count, other.count)
	sum, ok2 := addInt64(s.sum, other.sum)
	sq, ok3 := s.sq.Add(other.sq)
	switch {
	case !ok1:
		return fmt.Errorf("%w: stats count %d + %d", crdt.ErrOverflow, s.count, other.count)
	case !ok2:
		return fmt.Errorf("%w: stats sum %d + %d does not fit int64", crdt.ErrOverflow, s.sum, other.sum)
	case !ok3:
		return fmt.Errorf("%w: stats sum of squares exceeds 2^128", crdt.ErrOverflow)
	}
	s.count, s.sum, s.sq = count, sum, sq
	s.min = min(s.min, other.min)
	s.max = max(s.max, other.max)
	return nil
}

// The read-only methods below answer for a nil *Stats as for the empty one.

// Count returns the number of observations.
func (s *Stats) Count() int64 { return s.cells().count }

// Sum returns the exact sum of the observations.
func (s *Stats) Sum() int64 { return s.cells().sum }

// Min returns the smallest observation and true, or 0 and false when empty.
func (s *Stats) Min() (int64, bool) { c := s.cells(); return c.min, c.count > 0 }

// Max returns the largest observation and true, or 0 and false when empty.
func (s *Stats) Max() (int64, bool) { c := s.cells(); return c.max, c.count > 0 }

// SumOfSquares returns the exact sum of the squared observations as a new
// big.Int.
func (s *Stats) SumOfSquares() *big.Int { return s.cells().sq.Big() }

// Mean returns the arithmetic mean and true, or 0 and false when empty.
func (s *Stats) Mean() (float64, bool) {
	c := s.cells()
	if c.count == 0 {
		return 0, false
	}
	m, _ := big.NewRat(c.sum, c.count).Float64()
	return m, true
}

// Variance returns the population variance (sum of squares / n − mean²),
// computed exactly from the integer cells and rounded once, and true; or 0
// and false when empty.
func (s *Stats) Variance() (float64, bool) {
	if s == nil || s.count == 0 {
		return 0, false
	}
	n := big.NewInt(s.count)
	sum := big.NewInt(s.sum)
	num := new(big.Int).Mul(n, s.sq.Big())   // n·Σx²
	num.Sub(num, new(big.Int).Mul(sum, sum)) // − (Σx)²
	den := new(big.Int).Mul(n, n)            // n²
	v, _ := new(big.Rat).SetFrac(num, den).Float64()
	return v, true
}

// Clone returns a copy of s.
func (s *Stats) Clone() *Stats { c := s.cells(); return &c }

// Equal reports whether s and other hold the same cells. A nil *Stats is
// empty.
func (s *Stats) Equal(other *Stats) bool { return s.cells() == other.cells() }

func (s *Stats) cells() Stats {
	if s == nil {
		return Stats{}
	}
	return *s
}

// Kind returns KindStats.
func (*Stats) Kind() Kind { return KindStats }

// String renders the cells, for example "n=3 sum=6 min=1 max=3 sumsq=14".
func (s *Stats) String() string {
	c := s.cells()
	if c.count == 0 {
		return "n=0"
	}
	return fmt.Sprintf("n=%d sum=%d min=%d max=%d sumsq=%s", c.count, c.sum, c.min, c.max, c.sq.Big())
}

func (*Stats) identity() *Stats { return new(Stats) }

// Body: nil when empty, else [count, sum, min, max, sumsq_hi, sumsq_lo].
const statsFields = 6

func (s *Stats) encodeBody(e *wire.Encoder) {
	if s.count == 0 {
		e.Nil()
		return
	}
	e.ArrayLen(statsFields)
	e.Int(s.count)
	e.Int(s.sum)
	e.Int(s.min)
	e.Int(s.max)
	e.Uint(s.sq.Hi)
	e.Uint(s.sq.Lo)
}

func (s *Stats) decodeBody(d *wire.Decoder) error {
	isNil, err := d.IsNil()
	if err != nil || isNil {
		return err
	}
	n, err := d.ArrayLen(maxFields)
	if err != nil {
		return err
	}
	if n != statsFields {
		return fmt.Errorf("%w: stats has %d fields, want %d", crdt.ErrCorruptEncoding, n, statsFields)
	}
	var v Stats
	if v.count, err = d.Int(); err != nil {
		return err
	}
	if v.sum, err = d.Int(); err != nil {
		return err
	}
	if v.min, err = d.Int(); err != nil {
		return err
	}
	if v.max, err = d.Int(); err != nil {
		return err
	}
	if v.sq.Hi, err = d.Uint(); err != nil {
		return err
	}
	if v.sq.Lo, err = d.Uint(); err != nil {
		return err
	}
	if err := v.validate(); err != nil {
		return err
	}
	*s = v
	return nil
}

// validate rejects cells no set of observations has, with an error wrapping
// crdt.ErrCorruptEncoding. The empty value is encoded as nil, so an array
// must have count ≥ 1.
func (s *Stats) validate() error {
	if why := exact.StatsDefect(s.count, s.sum, s.min, s.max, s.sq.Big()); why != "" {
		return fmt.Errorf("%w: stats %s: %s", crdt.ErrCorruptEncoding, s, why)
	}
	return nil
}
