package wire

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/stats"
)

// summaryFields is the length of a stats.Summary's array (SPEC.md 7.1).
const summaryFields = 6

// Summary writes s as [count, sum, min, max, sumsq_hi, sumsq_lo], the form
// tally's stats and deltalog's merge cells share (SPEC.md 7.1, 8.3). An
// empty summary is written as nil by the caller, not here.
func (e *Encoder) Summary(s stats.Summary) {
	e.ArrayLen(summaryFields)
	e.Int(s.Count)
	e.Int(s.Sum)
	e.Int(s.Min)
	e.Int(s.Max)
	e.Uint(s.SumSqHi)
	e.Uint(s.SumSqLo)
}

// Summary reads what Encoder.Summary writes. An array of another length is
// crdt.ErrCorruptEncoding; the values are not validated (the caller runs
// its own checks, stats.Summary.Validate among them).
func (d *Decoder) Summary() (stats.Summary, error) {
	var s stats.Summary
	n, err := d.ArrayLen(1 << 16)
	if err != nil {
		return s, err
	}
	if n != summaryFields {
		return s, fmt.Errorf("%w: stats has %d fields, want %d", crdt.ErrCorruptEncoding, n, summaryFields)
	}
	for _, p := range []*int64{&s.Count, &s.Sum, &s.Min, &s.Max} {
		if *p, err = d.Int(); err != nil {
			return s, err
		}
	}
	for _, p := range []*uint64{&s.SumSqHi, &s.SumSqLo} {
		if *p, err = d.Uint(); err != nil {
			return s, err
		}
	}
	return s, nil
}
