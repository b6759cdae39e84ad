package stats

import (
	"fmt"
	"math/big"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
)

// Summary is the exact aggregates of a set of int64 observations. The zero
// Summary is the empty set. The fields are exported so that encoders and
// callers can read and build cells directly; a Summary built by hand should
// pass Validate.
type Summary struct {
	Count int64 // how many observations
	Sum   int64 // their exact sum
	Min   int64 // the smallest; 0 when Count is 0
	Max   int64 // the largest; 0 when Count is 0
	// SumSqHi:SumSqLo is the exact sum of the squared observations, an
	// unsigned 128-bit integer (high and low 64 bits).
	SumSqHi uint64
	SumSqLo uint64
}

// Of returns the Summary of the single observation x. It never fails: x² is
// exact for every int64 (|−2^63|² = 2^126).
func Of(x int64) Summary {
	sq := exact.Square(x)
	return Summary{Count: 1, Sum: x, Min: x, Max: x, SumSqHi: sq.Hi, SumSqLo: sq.Lo}
}

// Add returns the Summary of the union of the (disjoint) sets s and o. When
// the count, the sum or the sum of squares does not fit it returns s and an
// error wrapping crdt.ErrOverflow. Add is commutative and associative
// wherever it succeeds, and the empty Summary is its identity.
func (s Summary) Add(o Summary) (Summary, error) {
	if o.Count == 0 {
		return s, nil
	}
	if s.Count == 0 {
		return o, nil
	}
	count, ok1 := addInt64(s.Count, o.Count)
	sum, ok2 := addInt64(s.Sum, o.Sum)
	sq, ok3 := s.sumSq().Add(o.sumSq())
	switch {
	case !ok1:
		return s, fmt.Errorf("%w: stats count %d + %d", crdt.ErrOverflow, s.Count, o.Count)
	case !ok2:
		return s, fmt.Errorf("%w: stats sum %d + %d does not fit int64", crdt.ErrOverflow, s.Sum, o.Sum)
	case !ok3:
		return s, fmt.Errorf("%w: stats sum of squares exceeds 2^128", crdt.ErrOverflow)
	}
	return Summary{Count: count, Sum: sum, Min: min(s.Min, o.Min), Max: max(s.Max, o.Max), SumSqHi: sq.Hi, SumSqLo: sq.Lo}, nil
}

// Mean returns the arithmetic mean Sum/Count, the exact quotient rounded
// once to the nearest float64 (ties to even), and true; or 0 and false when
// s is empty.
func (s Summary) Mean() (float64, bool) {
	if s.Count == 0 {
		return 0, false
	}
	m, _ := big.NewRat(s.Sum, s.Count).Float64()
	return m, true
}

// Variance returns the population variance (Count·ΣX² − Sum²)/Count²,
// computed exactly from the integer cells and rounded once to the nearest
// float64, and true; or 0 and false when s is empty. It is never negative
// for a Summary that passes Validate.
func (s Summary) Variance() (float64, bool) {
	if s.Count == 0 {
		return 0, false
	}
	n := big.NewInt(s.Count)
	sum := big.NewInt(s.Sum)
	num := new(big.Int).Mul(n, s.SumSquares()) // n·Σx²
	num.Sub(num, new(big.Int).Mul(sum, sum))   // − (Σx)²
	den := new(big.Int).Mul(n, n)              // n²
	v, _ := new(big.Rat).SetFrac(num, den).Float64()
	return v, true
}

// SumSquares returns the exact sum of the squared observations as a new
// big.Int.
func (s Summary) SumSquares() *big.Int { return s.sumSq().Big() }

func (s Summary) sumSq() exact.Uint128 { return exact.Uint128{Hi: s.SumSqHi, Lo: s.SumSqLo} }

// Validate returns nil when some set of Count integers has exactly these
// cells, and otherwise an error wrapping crdt.ErrInvalidAmount that names
// the failing check (SPEC.md 7.1 lists them, all exact). The empty Summary
// is valid; an empty one with any other field set, or a negative count, is
// not. Every real set of observations passes, Add keeps passing Summaries
// passing, and Variance is never negative for one that passes. Decoders
// wrap the error in crdt.ErrCorruptEncoding themselves.
func (s Summary) Validate() error {
	if s.Count == 0 {
		if s != (Summary{}) {
			return fmt.Errorf("%w: stats: an empty summary has every field zero", crdt.ErrInvalidAmount)
		}
		return nil
	}
	if why := exact.StatsDefect(s.Count, s.Sum, s.Min, s.Max, s.SumSquares()); why != "" {
		return fmt.Errorf("%w: stats: %s", crdt.ErrInvalidAmount, why)
	}
	return nil
}

// addInt64 returns a+b and whether it fits in an int64.
func addInt64(a, b int64) (int64, bool) {
	r := a + b
	// Overflow happened iff both operands have the sign the result lacks.
	if (a >= 0) == (b >= 0) && (r >= 0) != (a >= 0) {
		return 0, false
	}
	return r, true
}
