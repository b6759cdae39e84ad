package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/conformance"
	"github.com/counterkit/counterkit/store"
)

// sharedHarness gives every driver suite the same store (the drivers use
// keys of their own, as on a server where a keyspace per suite is costly),
// and implements ShapeChecks to give each shape check an empty store of
// its own. It has no partition checks.
type sharedHarness struct {
	siblings   store.Siblings
	partitions store.Partitions
}

func (h *sharedHarness) MakeSiblings(context.Context, testing.TB) (store.Siblings, error) {
	return h.siblings, nil
}

func (h *sharedHarness) MakePartitions(context.Context, testing.TB) (store.Partitions, error) {
	return h.partitions, nil
}

func (h *sharedHarness) CheckSiblings(context.Context, testing.TB) (store.Siblings, error) {
	return memory.NewSiblings(), nil
}

func (h *sharedHarness) CheckPartitions(context.Context, testing.TB) (store.Partitions, error) {
	return nil, fmt.Errorf("sharedHarness: no partition checks: %w", errors.ErrUnsupported)
}

func (h *sharedHarness) Close() {}

// Run gives the shape checks the stores of ShapeChecks when the Harness
// implements it: here the drivers share one store, each check gets an
// empty one, and the unsupported partition checks are skipped while the
// partition drivers' suites still run.
func ExampleShapeChecks() {
	ctx := context.Background()
	var h conformance.Harness = &sharedHarness{siblings: memory.NewSiblings(), partitions: memory.NewPartitions()}
	checks, ok := h.(conformance.ShapeChecks) // what Run looks for
	fmt.Println("implements ShapeChecks:", ok)

	driver, _ := h.MakeSiblings(ctx, nil)
	_ = driver.Put(ctx, "ledger-suite/k", "a", []byte("v"), nil)
	another, _ := h.MakeSiblings(ctx, nil)
	check, _ := checks.CheckSiblings(ctx, nil)
	seen, _, _ := another.Fetch(ctx, "ledger-suite/k")
	fresh, _, _ := check.Fetch(ctx, "ledger-suite/k")
	fmt.Println("driver stores shared:", len(seen), "check store empty:", len(fresh) == 0)

	_, err := checks.CheckPartitions(ctx, nil)
	fmt.Println("partition checks skipped:", errors.Is(err, errors.ErrUnsupported))
	// Output:
	// implements ShapeChecks: true
	// driver stores shared: 1 check store empty: true
	// partition checks skipped: true
}
