package proptest

import (
	"cmp"
	"fmt"

	"github.com/leanovate/gopter"

	"github.com/counterkit/counterkit/crdt"
)

// Model describes a state-based CRDT to the checkers: how to make, change,
// merge, copy and compare states of type S, how to generate operations of
// type O, and a plain reference model (Expect) for the observable value.
//
// All fields except Name and Leq are required. The functions must be
// deterministic: a replayed seed reproduces a failure only if the same
// schedule gives the same results. A Model is safe for concurrent use if its
// functions are; the checkers call them from one goroutine.
type Model[S any, O any] struct {
	Name  string     // labels reports ("gcounter", "pncounter/history=4")
	New   func() S   // a fresh empty state
	GenOp gopter.Gen // generates values of type O
	// Apply mutates s as actor. An error means the op was rejected and s is
	// unchanged; the checkers verify the second half.
	Apply func(s S, actor crdt.ActorID, op O) error
	// Merge sets dst to dst ⊔ src. It must not modify src. Any error is
	// reported as a property failure.
	Merge func(dst, src S) error
	Clone func(S) S         // a deep copy
	Equal func(a, b S) bool // whether two states are observably the same
	// Value returns the observable value; it is compared with Expect's
	// result by reflect.DeepEqual, so both must use the same dynamic type.
	Value func(S) any
	// Expect is the reference model: the value after exactly these accepted
	// ops, in any order. The slice may hold the same op value more than once
	// (a retry applied by two actors); deduplicating is the model's job when
	// the type promises exactly-once.
	Expect func(applied []O) any
	// Leq is an optional partial order on states. When set, Apply must be
	// inflationary (s ≤ Apply(s)), Merge must be an upper bound of both
	// operands, and a ≤ b must imply a ⊔ b = b.
	Leq func(a, b S) bool
}

func (m Model[S, O]) validate() error {
	for _, f := range []struct {
		name    string
		missing bool
	}{{"New", m.New == nil}, {"GenOp", m.GenOp == nil}, {"Apply", m.Apply == nil}, {"Merge", m.Merge == nil},
		{"Clone", m.Clone == nil}, {"Equal", m.Equal == nil}, {"Value", m.Value == nil}, {"Expect", m.Expect == nil}} {
		if f.missing {
			return fmt.Errorf("%w: proptest.Model %q has no %s", crdt.ErrInvalidConfig, m.name(), f.name)
		}
	}
	return nil
}

func (m Model[S, O]) name() string {
	return cmp.Or(m.Name, "model")
}
