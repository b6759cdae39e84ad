package bounded_test

import (
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// errSiblings is a store whose writes a faulty.Plan answers: its Set
// chooses the error of each write by number, from 1.
type errSiblings struct {
	*faulty.Siblings
	*faulty.Plan
}

func newErrSiblings(inner store.Siblings) *errSiblings {
	p := faulty.NewPlan(nil)
	return &errSiblings{faulty.NewSiblings(inner, faulty.Options{Hook: p.Hook, History: -1}), p}
}
