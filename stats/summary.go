package stats

import (
	"fmt"
	"math"
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

	// past is nil unless a Combine passed the widths above (see Fits).
	past *wide
}

// wide is an exact count, sum and sum of squares (sq + sqTop·2^128) of
// fewer than 2^64 observations (a set that Combine doubles reaches more
// in 64 calls: no store holds that many).
type wide struct {
	count, sum exact.Int128
	sq         exact.Uint128
	sqTop      uint64
}

// Of returns the Summary of the single observation x. It never fails: x² is
// exact for every int64 (|−2^63|² = 2^126).
func Of(x int64) Summary {
	sq := exact.Square(x)
	return Summary{Count: 1, Sum: x, Min: x, Max: x, SumSqHi: sq.Hi, SumSqLo: sq.Lo}
}

// Combine returns the Summary of the union of the (disjoint) sets s and o,
// exactly: it never fails, is commutative and associative, and the empty
// Summary is its identity. When the count or the sum passes int64, or the
// sum of squares 2^128, the result does not fit (Fits is false): its
// fields hold those values clamped (math.MaxInt64 or math.MinInt64, and
// 2^128−1), while BigCount, BigSum, SumSquares, Mean and Variance stay
// exact, and a later Combine that brings them back gives a Summary that
// fits (SPEC.md 7.1).
func (s Summary) Combine(o Summary) Summary {
	if o.Count == 0 {
		return s
	}
	if s.Count == 0 {
		return o
	}
	if s.past == nil && o.past == nil {
		count, ok1 := addInt64(s.Count, o.Count)
		sum, ok2 := addInt64(s.Sum, o.Sum)
		if sq, ok3 := s.sumSq().Add(o.sumSq()); ok1 && ok2 && ok3 {
			return Summary{Count: count, Sum: sum, Min: min(s.Min, o.Min), Max: max(s.Max, o.Max), SumSqHi: sq.Hi, SumSqLo: sq.Lo}
		}
	}
	w, v := s.exact(), o.exact()
	w.count.AddInt128(v.count)
	w.sum.AddInt128(v.sum)
	sq, ok := w.sq.Add(v.sq)
	w.sq, w.sqTop = sq, w.sqTop+v.sqTop
	if !ok {
		w.sqTop++
	}
	r := Summary{Count: w.count.Clamp(), Sum: w.sum.Clamp(), Min: min(s.Min, o.Min), Max: max(s.Max, o.Max), SumSqHi: sq.Hi, SumSqLo: sq.Lo}
	_, countFits := w.count.Int64()
	_, sumFits := w.sum.Int64()
	if !countFits || !sumFits || w.sqTop > 0 {
		r.past = &w
	}
	if w.sqTop > 0 {
		r.SumSqHi, r.SumSqLo = math.MaxUint64, math.MaxUint64
	}
	return r
}

// Add is Combine for a result that is stored: when the count, the sum or
// the sum of squares does not fit (Fits), it returns s and an error
// wrapping crdt.ErrOverflow.
func (s Summary) Add(o Summary) (Summary, error) {
	if s.past == nil && o.past == nil && s.Count != 0 && o.Count != 0 { // Combine's first case, inlined: the hot path
		count, ok1 := addInt64(s.Count, o.Count)
		sum, ok2 := addInt64(s.Sum, o.Sum)
		if sq, ok3 := s.sumSq().Add(o.sumSq()); ok1 && ok2 && ok3 {
			return Summary{Count: count, Sum: sum, Min: min(s.Min, o.Min), Max: max(s.Max, o.Max), SumSqHi: sq.Hi, SumSqLo: sq.Lo}, nil
		}
	}
	r := s.Combine(o)
	if err := r.pastErr(); err != nil {
		return s, err
	}
	return r, nil
}

func (s Summary) pastErr() error {
	if s.Fits() {
		return nil
	}
	return fmt.Errorf("%w: stats: count %d, sum %d, sum of squares %d: past int64, int64 or 2^128", crdt.ErrOverflow, s.BigCount(), s.BigSum(), s.SumSquares())
}

// Fits reports whether the fields hold s exactly: always, except for the
// result of a Combine that passed them. Only a Summary that fits can be
// stored (Validate), and only those compare by == (String is exact).
func (s Summary) Fits() bool { return s.past == nil }

// BigCount returns the exact count as a new big.Int.
func (s Summary) BigCount() *big.Int { w := s.exact(); return w.count.Big() }

// BigSum returns the exact sum as a new big.Int.
func (s Summary) BigSum() *big.Int { w := s.exact(); return w.sum.Big() }

func (s Summary) exact() wide {
	if !s.Fits() {
		return *s.past
	}
	w := wide{sq: s.sumSq()}
	w.count.Add(s.Count)
	w.sum.Add(s.Sum)
	return w
}

// Mean returns the arithmetic mean Sum/Count, the exact quotient rounded
// once to the nearest float64 (ties to even), and true; or 0 and false when
// s is empty.
func (s Summary) Mean() (float64, bool) {
	if s.Count == 0 {
		return 0, false
	}
	m, _ := new(big.Rat).SetFrac(s.BigSum(), s.BigCount()).Float64()
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
	n, sum := s.BigCount(), s.BigSum()
	num := new(big.Int).Mul(n, s.SumSquares()) // n·Σx²
	num.Sub(num, new(big.Int).Mul(sum, sum))   // − (Σx)²
	den := new(big.Int).Mul(n, n)              // n²
	v, _ := new(big.Rat).SetFrac(num, den).Float64()
	return v, true
}

// SumSquares returns the exact sum of the squared observations as a new
// big.Int.
func (s Summary) SumSquares() *big.Int {
	w := s.exact()
	top := new(big.Int).SetUint64(w.sqTop)
	return top.Lsh(top, 128).Add(top, w.sq.Big())
}

// String renders the exact cells, for example "n=3 sum=6 min=1 max=3
// sumsq=14", or "n=0" when s is empty.
func (s Summary) String() string {
	if s.Count == 0 {
		return "n=0"
	}
	return fmt.Sprintf("n=%d sum=%d min=%d max=%d sumsq=%d", s.BigCount(), s.BigSum(), s.Min, s.Max, s.SumSquares())
}

func (s Summary) sumSq() exact.Uint128 { return exact.Uint128{Hi: s.SumSqHi, Lo: s.SumSqLo} }

// Validate returns an error wrapping crdt.ErrInvalidAmount that names the
// failing check when no set of Count integers can have these cells by
// SPEC.md 7.1's checks (all exact: the sum and the sum of squares within
// the least and greatest that the count, min and max allow, and of one
// parity), and nil otherwise. The checks are necessary, not sufficient:
// cells that no set has pass them too, about a quarter of those with a
// small count and range (n=4 sum=-10 min=-4 max=-1 sumsq=32). The empty Summary
// is valid; an empty one with any other field set, or a negative count, is
// not. Every real set of observations passes, Add keeps passing Summaries
// passing, and Variance is never negative for one that passes. Decoders
// wrap the error in crdt.ErrCorruptEncoding themselves. A Summary that
// does not fit (Fits) is refused first, with an error wrapping
// crdt.ErrOverflow: it cannot be stored.
func (s Summary) Validate() error {
	if err := s.pastErr(); err != nil {
		return err
	}
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
