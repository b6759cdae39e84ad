package deltalog_test

import (
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// errPartitions is a store whose writes a faulty.Plan answers: its Set
// chooses the error of each write by number, from 1.
type errPartitions struct {
	*faulty.Partitions
	*faulty.Plan
}

func newErrPartitions(inner store.Partitions) *errPartitions {
	p := faulty.NewPlan(nil)
	return &errPartitions{faulty.NewPartitions(inner, faulty.Options{Hook: p.Hook, History: -1}), p}
}

// ecUnavailable is crdt.ErrUnavailable as a faulty.WriteError: like a
// refusal, a store returns it only when nothing was written.
var ecUnavailable = faulty.WriteError{Name: "unavailable", Err: fmt.Errorf("faulty: injected: %w", crdt.ErrUnavailable), Refusal: true}

// ecTrials returns faulty.Trials(n, broken) and the same trials of
// ecUnavailable, which faulty.Trials leaves out: only not landed, unless
// broken (then also landed, which a store never answers with it).
func ecTrials(n int, broken bool) []faulty.Trial {
	out := faulty.Trials(n, broken)
	for _, apply := range []bool{false, true} {
		if apply && !broken {
			continue
		}
		for p := 1; p <= n+2; p++ {
			for q := p; q <= min(p+1, n+2); q++ {
				out = append(out, faulty.Trial{Kind: ecUnavailable, Apply: apply, First: p, Last: q})
			}
		}
	}
	return out
}

// ecNotWritten reports whether err says that nothing was written
// (package store, "Errors"): crdt.ErrUnavailable, or a refusal of the
// write for what it is, and not crdt.ErrAmbiguousWrite.
func ecNotWritten(err error) bool {
	if err == nil || errors.Is(err, crdt.ErrAmbiguousWrite) {
		return false
	}
	for _, e := range []error{crdt.ErrUnavailable, crdt.ErrTooLarge, crdt.ErrCorruptEncoding, crdt.ErrInvalidKey} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
