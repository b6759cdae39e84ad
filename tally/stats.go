package tally

import (
	"fmt"
	"math/big"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/stats"
)

// Stats is the Aggregate around a stats.Summary: the exact count, sum,
// minimum, maximum and sum of squares of its observations, with the mean
// and variance derived by the Summary's rules. Decoding refuses cells that
// fail stats.Summary.Validate, so Variance is never negative for a Stats
// built from decoded ones.
type Stats struct {
	s stats.Summary
}

// Add observes x. When the count, the sum or the sum of squares would not
// fit (stats.Summary.Add) it returns an error wrapping crdt.ErrOverflow and
// leaves s unchanged.
func (s *Stats) Add(x int64) error {
	sum, err := s.s.Add(stats.Of(x))
	if err != nil {
		return err
	}
	s.s = sum
	return nil
}

// Combine adds other's observations to s, exactly (stats.Summary.Combine).
func (s *Stats) Combine(other *Stats) error {
	s.s = s.s.Combine(other.Summary())
	return nil
}

func (s *Stats) fits() bool { return s.Summary().Fits() }

// Summary returns the cells as a stats.Summary (a copy).
func (s *Stats) Summary() stats.Summary {
	if s == nil {
		return stats.Summary{}
	}
	return s.s
}

// Count returns the number of observations, or math.MaxInt64 when it does
// not fit; Summary().BigCount() is exact.
func (s *Stats) Count() int64 { return s.Summary().Count }

// Sum returns the sum of the observations, or math.MaxInt64 or
// math.MinInt64 when it does not fit; Summary().BigSum() is exact.
func (s *Stats) Sum() int64 { return s.Summary().Sum }

// Min returns the smallest observation and true, or 0 and false when empty.
func (s *Stats) Min() (int64, bool) { c := s.Summary(); return c.Min, c.Count > 0 }

// Max returns the largest observation and true, or 0 and false when empty.
func (s *Stats) Max() (int64, bool) { c := s.Summary(); return c.Max, c.Count > 0 }

// SumOfSquares returns the exact sum of the squared observations as a new
// big.Int.
func (s *Stats) SumOfSquares() *big.Int { return s.Summary().SumSquares() }

// Mean returns the arithmetic mean (the exact quotient rounded once) and
// true, or 0 and false when empty: stats.Summary.Mean.
func (s *Stats) Mean() (float64, bool) { return s.Summary().Mean() }

// Variance returns the population variance (sum of squares / n − mean²),
// computed exactly from the integer cells and rounded once, and true; or 0
// and false when empty: stats.Summary.Variance.
func (s *Stats) Variance() (float64, bool) { return s.Summary().Variance() }

// Clone returns a copy of s.
func (s *Stats) Clone() *Stats { return &Stats{s: s.Summary()} }

// Equal reports whether s and other hold the same cells, exactly.
func (s *Stats) Equal(other *Stats) bool {
	a, b := s.Summary(), other.Summary()
	return a == b || !a.Fits() && a.String() == b.String()
}

// Kind returns KindStats.
func (*Stats) Kind() Kind { return KindStats }

// String renders the exact cells, for example "n=3 sum=6 min=1 max=3
// sumsq=14" (stats.Summary.String).
func (s *Stats) String() string { return s.Summary().String() }

func (*Stats) identity() *Stats { return new(Stats) }

// Body: nil when empty, else [count, sum, min, max, sumsq_hi, sumsq_lo].

func (s *Stats) encodeBody(e *wire.Encoder) {
	if s.s.Count == 0 {
		e.Nil()
		return
	}
	e.Summary(s.s)
}

// decodeBody refuses cells stats.Summary.Validate refuses, with an error
// wrapping crdt.ErrCorruptEncoding; the empty value encodes as nil, so an
// array needs count ≥ 1.
func (s *Stats) decodeBody(d *wire.Decoder) error {
	isNil, err := d.IsNil()
	if err != nil || isNil {
		return err
	}
	var v Stats
	if v.s, err = d.Summary(); err != nil {
		return err
	}
	if v.s.Count < 1 {
		return fmt.Errorf("%w: stats %s: count must be at least 1", crdt.ErrCorruptEncoding, &v)
	}
	if err := v.s.Validate(); err != nil {
		return fmt.Errorf("%w: stats %s: %v", crdt.ErrCorruptEncoding, &v, err)
	}
	*s = v
	return nil
}
