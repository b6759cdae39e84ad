package conformance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

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
// skipped, and the harness is closed when the run ends. The memory,
// embedded, Cassandra and Riak adapters run the suites themselves.
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
