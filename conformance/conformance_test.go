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

// noShapes makes no store: Run skips both shapes and closes it.
type noShapes struct{ closed *bool }

func (noShapes) MakeSiblings(context.Context, testing.TB) (store.Siblings, error) {
	return nil, fmt.Errorf("noShapes: no siblings: %w", errors.ErrUnsupported)
}

func (noShapes) MakePartitions(context.Context, testing.TB) (store.Partitions, error) {
	return nil, fmt.Errorf("noShapes: no partitions: %w", errors.ErrUnsupported)
}

func (h noShapes) Close() { *h.closed = true }

// TestRunSkipsUnsupportedShapes: a shape the harness does not make is
// skipped, and the harness is closed when the run ends. Every backend's
// own tests call Run on real stores (memory, the embedded store, Riak and
// its test double, Cassandra and its model).
func TestRunSkipsUnsupportedShapes(t *testing.T) {
	closed := false
	if !t.Run("run", func(t *testing.T) {
		conformance.Run(t, func(context.Context, testing.TB) (conformance.Harness, error) {
			return noShapes{closed: &closed}, nil
		})
	}) {
		t.Error("Run failed on a harness that makes no store")
	}
	if !closed {
		t.Error("Run did not close the harness")
	}
}

// shapeChecks makes memory stores and counts what each method made; its
// Partitions checks are unsupported.
type shapeChecks struct{ made map[string]int }

func (h shapeChecks) MakeSiblings(context.Context, testing.TB) (store.Siblings, error) {
	h.made["drivers-siblings"]++
	return memory.NewSiblings(), nil
}

func (h shapeChecks) MakePartitions(context.Context, testing.TB) (store.Partitions, error) {
	h.made["drivers-partitions"]++
	return memory.NewPartitions(), nil
}

func (h shapeChecks) CheckSiblings(context.Context, testing.TB) (store.Siblings, error) {
	h.made["checks-siblings"]++
	return memory.NewSiblings(), nil
}

func (h shapeChecks) CheckPartitions(context.Context, testing.TB) (store.Partitions, error) {
	h.made["checks-partitions"]++
	return nil, fmt.Errorf("shapeChecks: %w", errors.ErrUnsupported)
}

func (shapeChecks) Close() {}

// TestRunUsesShapeChecks: a harness implementing ShapeChecks gets the
// shape checks on the stores it makes for them, and an unsupported one
// skips those checks alone (one probe), not the drivers' suites.
func TestRunUsesShapeChecks(t *testing.T) {
	h := shapeChecks{made: map[string]int{}}
	if !t.Run("run", func(t *testing.T) {
		conformance.Run(t, func(context.Context, testing.TB) (conformance.Harness, error) { return h, nil })
	}) {
		t.Fatal("Run failed")
	}
	t.Log(h.made)
	if h.made["checks-siblings"] < 10 || h.made["drivers-siblings"] < 10 || h.made["drivers-partitions"] < 10 {
		t.Errorf("the checks and the drivers did not each get their own stores: %v", h.made)
	}
	if h.made["checks-partitions"] != 1 {
		t.Errorf("an unsupported shape check was asked %d times, want 1 (the probe)", h.made["checks-partitions"])
	}
}
