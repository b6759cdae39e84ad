// Package storetest is the conformance kit for the storage shapes of
// package store: every backend runs the same contract checks and the same
// benchmarks.
//
// A backend's tests call RunSiblings and RunPartitions with a function
// returning a fresh, empty store for each check (registering its cleanup
// with t.Cleanup), and its benchmarks call BenchmarkSiblings and
// BenchmarkPartitions the same way:
//
//	func TestSiblings(t *testing.T) {
//		storetest.RunSiblings(t, func(t *testing.T) store.Siblings { return memory.NewSiblings() })
//	}
//
// Package conformance runs these checks together with every driver's
// behaviour suites, and every backend calls conformance.Run rather than
// these directly.
//
// Each check is a subtest named for the rule it checks, so one rule can be
// run alone (go test -run 'TestSiblings/supersede'). Randomised checks
// (the Partitions model and idempotence checks, concurrent writers) log
// their seed and the command that replays it (COUNTERKIT_SEED), and scale
// their number of cases with COUNTERKIT_CASES (see package proptest). The checks demand the contract of package store and nothing
// more: sibling order, token bytes and page sizes are left to the backend.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

// env is what a check gets: fresh stores, the seed, a log.
type env[S any] struct {
	fresh  func() S
	seed   int64
	cases  int
	replay string // the seed and the command that replays the check
	logf   func(format string, args ...any)
}

func (e *env[S]) logSeed() { e.logf("%s", e.replay) }

// seeded adds the seed and the replay command to the error of a
// randomised check.
func (e *env[S]) seeded(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w\n(%s)", err, e.replay)
}

// steps runs the steps of a check on one store and keeps the first error;
// once there is one, every later step does nothing (errors are values: a
// check reads as its list of steps and returns s.err). p or sib is the
// store, by its shape.
type steps struct {
	ctx context.Context
	p   store.Partitions
	sib store.Siblings
	err error
}

// do runs step unless an earlier step failed, and keeps its error.
func (s *steps) do(step func() error) {
	if s.err == nil {
		s.err = step()
	}
}

// fresh moves the steps to a fresh, empty Partitions store.
func (s *steps) fresh(e *env[store.Partitions]) { s.do(func() error { s.p = e.fresh(); return nil }) }

// refused records an error when err does not wrap want; what and args name
// the call.
func (s *steps) refused(err, want error, what string, args ...any) {
	s.do(func() error { return wantErr(err, want, what, args...) })
}

// wantErr returns nil when err wraps want, else an error saying that the
// call what and args name returned err instead.
func wantErr(err, want error, what string, args ...any) error {
	if errors.Is(err, want) {
		return nil
	}
	return fmt.Errorf("%s: %v, want an error wrapping %v", fmt.Sprintf(what, args...), err, want)
}

type check[S any] struct {
	name string
	fn   func(ctx context.Context, e *env[S]) error
}

func run[S any](t *testing.T, checks []check[S], newStore func(t *testing.T) S) {
	t.Helper()
	seed := proptest.Seed()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			e := &env[S]{
				fresh:  func() S { return newStore(t) },
				seed:   seed,
				cases:  proptest.Scale(defaultCases),
				replay: fmt.Sprintf("seed %d; replay: %s", seed, proptest.Replay(t, seed)),
				logf:   t.Logf,
			}
			if err := c.fn(t.Context(), e); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// defaultCases is the number of random op lists a randomised check runs
// before COUNTERKIT_CASES scales it.
const defaultCases = 30
