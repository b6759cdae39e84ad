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
//	func BenchmarkSiblings(b *testing.B) {
//		storetest.BenchmarkSiblings(b, func(b *testing.B) store.Siblings { return memory.NewSiblings() })
//	}
//
// A backend that needs a server or a directory set up once can implement
// Harness and call Run and Benchmark instead; they run the suites of the
// shapes the harness makes.
//
// Each check is a subtest named for the rule it checks, so one rule can be
// run alone (go test -run 'TestSiblings/supersede'). Randomised checks
// (the Partitions model and idempotence checks, concurrent writers) log
// their seed; replay one with the same seed:
//
//	COUNTERKIT_SEED=<seed> go test -run '<test>/<check>' <package>
//
// and scale their number of cases with COUNTERKIT_CASES (see package
// proptest). The checks demand the contract of package store and nothing
// more: sibling order, token bytes and page sizes are left to the backend.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/balance/balancetest"
	"github.com/counterkit/counterkit/bounded/boundedtest"
	"github.com/counterkit/counterkit/deltalog/deltalogtest"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/statestore/statestoretest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally/tallytest"
)

// Harness makes fresh stores of one backend, for Run and Benchmark.
type Harness interface {
	// MakeSiblings returns an empty Siblings store, or an error wrapping
	// errors.ErrUnsupported if the backend has none.
	MakeSiblings(ctx context.Context, t testing.TB) (store.Siblings, error)
	// MakePartitions returns an empty Partitions store, or an error
	// wrapping errors.ErrUnsupported if the backend has none.
	MakePartitions(ctx context.Context, t testing.TB) (store.Partitions, error)
	// Close releases what the harness holds.
	Close()
}

// HarnessMaker returns a new Harness.
type HarnessMaker func(ctx context.Context, t testing.TB) (Harness, error)

// Run is the whole conformance run of a backend, for the shapes the harness
// makes (a shape whose first Make call fails with errors.ErrUnsupported is
// skipped): under subtest "Siblings", RunSiblings and the behaviour suites
// of the drivers built on that shape (ledger/ledgertest,
// statestore/statestoretest, bounded/boundedtest); under "Partitions", RunPartitions and those of
// tally, deltalog and balance (tally/tallytest, deltalog/deltalogtest,
// balance/balancetest). A new backend implements Harness and calls Run and
// Benchmark: nothing else.
func Run(t *testing.T, newHarness HarnessMaker) {
	h, err := newHarness(t.Context(), t)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	newSiblings := func(t *testing.T) store.Siblings {
		s, err := h.MakeSiblings(t.Context(), t)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	newPartitions := func(t *testing.T) store.Partitions {
		p, err := h.MakePartitions(t.Context(), t)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Run("Siblings", func(t *testing.T) {
		if _, err := h.MakeSiblings(t.Context(), t); errors.Is(err, errors.ErrUnsupported) {
			t.Skip(err)
		}
		RunSiblings(t, newSiblings)
		t.Run("ledger", func(t *testing.T) { ledgertest.Run(t, newSiblings) })
		t.Run("statestore", func(t *testing.T) { statestoretest.Run(t, newSiblings) })
		t.Run("bounded", func(t *testing.T) { boundedtest.Run(t, newSiblings) })
	})
	t.Run("Partitions", func(t *testing.T) {
		if _, err := h.MakePartitions(t.Context(), t); errors.Is(err, errors.ErrUnsupported) {
			t.Skip(err)
		}
		RunPartitions(t, newPartitions)
		t.Run("tally", func(t *testing.T) { tallytest.Run(t, newPartitions) })
		t.Run("deltalog", func(t *testing.T) { deltalogtest.Run(t, newPartitions) })
		t.Run("balance", func(t *testing.T) { balancetest.Run(t, newPartitions) })
	})
}

// Benchmark runs BenchmarkSiblings and BenchmarkPartitions for the shapes
// the harness makes.
func Benchmark(b *testing.B, newHarness HarnessMaker) {
	h, err := newHarness(b.Context(), b)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(h.Close)
	if _, err := h.MakeSiblings(b.Context(), b); !errors.Is(err, errors.ErrUnsupported) {
		b.Run("Siblings", func(b *testing.B) {
			BenchmarkSiblings(b, func(b *testing.B) store.Siblings {
				s, err := h.MakeSiblings(b.Context(), b)
				if err != nil {
					b.Fatal(err)
				}
				return s
			})
		})
	}
	if _, err := h.MakePartitions(b.Context(), b); !errors.Is(err, errors.ErrUnsupported) {
		b.Run("Partitions", func(b *testing.B) {
			BenchmarkPartitions(b, func(b *testing.B) store.Partitions {
				p, err := h.MakePartitions(b.Context(), b)
				if err != nil {
					b.Fatal(err)
				}
				return p
			})
		})
	}
}

// env is what a check gets: fresh stores, the seed, a log.
type env[S any] struct {
	fresh func() S
	seed  int64
	cases int
	name  string // the test name, for the replay command
	logf  func(format string, args ...any)
}

// logSeed logs how to replay a randomised check.
func (e *env[S]) logSeed() {
	e.logf("seed %d; replay: %s=%d go test -run '^%s$' <package>", e.seed, proptest.EnvSeed, e.seed, e.name)
}

// seeded adds the seed and the replay command to the error of a
// randomised check.
func (e *env[S]) seeded(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w\n(seed %d; replay: %s=%d go test -run '^%s$' <package>)", err, e.seed, proptest.EnvSeed, e.seed, e.name)
}

type check[S any] struct {
	name string
	fn   func(ctx context.Context, e *env[S]) error
}

// run runs checks as subtests of t.
func run[S any](t *testing.T, checks []check[S], newStore func(t *testing.T) S) {
	t.Helper()
	seed := proptest.Seed()
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			e := &env[S]{
				fresh: func() S { return newStore(t) },
				seed:  seed,
				cases: proptest.Scale(defaultCases),
				name:  t.Name(),
				logf:  t.Logf,
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
