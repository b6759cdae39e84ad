// Package conformance is what every backend of package store runs: the
// contract checks of the two storage shapes (store/storetest) and the
// behaviour suites of every driver built on each shape. A suite added here
// reaches every backend.
//
// A backend that makes fresh stores in a plain way implements Harness and
// calls Run and Benchmark:
//
//	func TestConformance(t *testing.T) { conformance.Run(t, newHarness) }
//
// A backend whose shape checks need other stores than its drivers
// (Cassandra keeps one row per actor and creates tables per check; Riak's
// default bucket type has no dotted version vectors) also implements
// ShapeChecks, and still calls Run.
package conformance

import (
	"context"
	"errors"
	"testing"

	"github.com/counterkit/counterkit/balance/balancetest"
	"github.com/counterkit/counterkit/bounded/boundedtest"
	"github.com/counterkit/counterkit/deltalog/deltalogtest"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/statestore/statestoretest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/storetest"
	"github.com/counterkit/counterkit/tally/tallytest"
)

// suite is one driver's behaviour suite over a store of shape S.
type suite[S any] struct {
	name string
	run  func(*testing.T, func(*testing.T) S)
}

// The drivers of each shape.
var (
	siblingsSuites = []suite[store.Siblings]{
		{"ledger", ledgertest.Run},
		{"statestore", statestoretest.Run},
		{"bounded", boundedtest.Run},
	}
	partitionsSuites = []suite[store.Partitions]{
		{"tally", tallytest.Run},
		{"deltalog", deltalogtest.Run},
		{"balance", balancetest.Run},
	}
)

// siblingDrivers runs the behaviour suite of every driver built on
// store.Siblings (ledger, statestore, bounded), each as a subtest named
// for the driver, every check on a store newStore returns.
func siblingDrivers(t *testing.T, newStore func(t *testing.T) store.Siblings) {
	runSuites(t, siblingsSuites, newStore)
}

// partitionDrivers runs the behaviour suite of every driver built on
// store.Partitions (tally, deltalog, balance), as siblingDrivers does.
func partitionDrivers(t *testing.T, newStore func(t *testing.T) store.Partitions) {
	runSuites(t, partitionsSuites, newStore)
}

func runSuites[S any](t *testing.T, suites []suite[S], newStore func(t *testing.T) S) {
	for _, s := range suites {
		t.Run(s.name, func(t *testing.T) { s.run(t, newStore) })
	}
}

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

// ShapeChecks is implemented by a Harness whose shape checks (storetest)
// run on other stores than its drivers' suites: Run gives the checks the
// stores these return. An error wrapping errors.ErrUnsupported from the
// first call skips that shape's checks (subtest "store", with the error as
// the reason), and its drivers' suites still run; that first call's store
// is not used.
type ShapeChecks interface {
	CheckSiblings(ctx context.Context, t testing.TB) (store.Siblings, error)
	CheckPartitions(ctx context.Context, t testing.TB) (store.Partitions, error)
}

// Run is the whole conformance run of a backend, for the shapes the
// harness makes (a shape whose first Make call fails with
// errors.ErrUnsupported is skipped): under subtest "Siblings",
// storetest.RunSiblings and a subtest per driver built on store.Siblings
// (ledger, statestore, bounded); under "Partitions",
// storetest.RunPartitions and one per driver built on store.Partitions
// (tally, deltalog, balance).
func Run(t *testing.T, newHarness HarnessMaker) {
	h := open(t, newHarness)
	var checkS func(context.Context, testing.TB) (store.Siblings, error)
	var checkP func(context.Context, testing.TB) (store.Partitions, error)
	if c, ok := h.(ShapeChecks); ok {
		checkS, checkP = c.CheckSiblings, c.CheckPartitions
	}
	shape(t, "Siblings", h.MakeSiblings, checked(checkS, storetest.RunSiblings), siblingDrivers)
	shape(t, "Partitions", h.MakePartitions, checked(checkP, storetest.RunPartitions), partitionDrivers)
}

// checked returns run, the shape checks, made to take their stores from
// check instead of the drivers' (see ShapeChecks); run itself when check
// is nil.
func checked[S any](check func(context.Context, testing.TB) (S, error), run func(*testing.T, func(*testing.T) S)) func(*testing.T, func(*testing.T) S) {
	if check == nil {
		return run
	}
	return func(t *testing.T, _ func(*testing.T) S) {
		if _, err := check(t.Context(), t); errors.Is(err, errors.ErrUnsupported) {
			t.Run("store", func(t *testing.T) { t.Skip(err) })
			return
		}
		run(t, func(t *testing.T) S {
			s, err := check(t.Context(), t)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	}
}

// Benchmark runs storetest.BenchmarkSiblings and
// storetest.BenchmarkPartitions for the shapes the harness makes, as Run
// runs the checks.
func Benchmark(b *testing.B, newHarness HarnessMaker) {
	h := open(b, newHarness)
	shape(b, "Siblings", h.MakeSiblings, storetest.BenchmarkSiblings)
	shape(b, "Partitions", h.MakePartitions, storetest.BenchmarkPartitions)
}

// shape runs the suites under subtest (or sub-benchmark) name on stores of
// one shape from mk, and skips it if mk's first call fails with
// errors.ErrUnsupported.
func shape[T interface {
	testing.TB
	Run(string, func(T)) bool
}, S any](tb T, name string, mk func(context.Context, testing.TB) (S, error), suites ...func(T, func(T) S)) {
	tb.Run(name, func(tb T) {
		if _, err := mk(tb.Context(), tb); errors.Is(err, errors.ErrUnsupported) {
			tb.Skip(err)
		}
		for _, run := range suites {
			run(tb, func(tb T) S {
				s, err := mk(tb.Context(), tb)
				if err != nil {
					tb.Fatal(err)
				}
				return s
			})
		}
	})
}

// open makes the harness and closes it when tb ends.
func open(tb testing.TB, newHarness HarnessMaker) Harness {
	h, err := newHarness(tb.Context(), tb)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(h.Close)
	return h
}
