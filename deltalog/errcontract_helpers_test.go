package deltalog_test

import (
	"github.com/counterkit/counterkit/internal/retry"
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

// notWritten reports whether a write's error says that nothing was
// written (package store, "Errors").
func isNotWritten(err error) bool { return err != nil && retry.Classify(err) != retry.Ambiguous }
