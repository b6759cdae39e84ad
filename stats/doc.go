// Package stats holds Summary, the exact order-free aggregates of a set of
// int64 observations: how many, their sum, the smallest and largest, and
// the sum of squares. It is the one statistics type of counterkit: a
// tally.Stats aggregate holds a Summary, and a deltalog merge cell and a
// deltalog read carry one (deltalog.Stats is an alias of Summary).
//
// # Design
//
// Every cell is an integer and every operation on cells is exact: the count
// and the sum are int64, the sum of squares an unsigned 128-bit integer
// (SumSqHi:SumSqLo). Combine never fails: a result past those widths (from
// disjoint sets each of which fits) keeps its exact values beside its
// clamped fields (Fits, BigCount, BigSum), so a read of many stored cells
// never fails, and a later Combine can bring it back; such a result cannot
// be stored (Validate refuses it), and Add, for results that are stored,
// refuses it with an error wrapping crdt.ErrOverflow. So a Summary does not
// depend on the order, the grouping or the replica its observations were
// added in: it can be merged, stored and compared byte for byte.
//
// Floating point appears only in Mean and Variance, each the exact
// rational value rounded once to the nearest float64 (SPEC.md 7.1); the
// empty Summary (the zero value) has neither: both return (0, false).
// Validate refuses cells that fail SPEC.md 7.1's exact checks, which every
// real set of observations passes (its documentation lists them).
//
// A Summary is a small value type, safe to copy and to use concurrently.
package stats
