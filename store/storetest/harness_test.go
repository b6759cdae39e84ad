package storetest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/storetest"
)

// memHarness makes memory stores; with noPartitions it has Siblings only.
type memHarness struct {
	noPartitions bool
	closed       *bool
}

func (h memHarness) MakeSiblings(context.Context, testing.TB) (store.Siblings, error) {
	return memory.NewSiblings(), nil
}

func (h memHarness) MakePartitions(context.Context, testing.TB) (store.Partitions, error) {
	if h.noPartitions {
		return nil, fmt.Errorf("memHarness: no partitions: %w", errors.ErrUnsupported)
	}
	return &memory.Partitions{PageSize: 16}, nil
}

func (h memHarness) Close() { *h.closed = true }

func TestRunWithHarness(t *testing.T) {
	for _, noPartitions := range []bool{false, true} {
		closed := false
		t.Run(fmt.Sprint("noPartitions=", noPartitions), func(t *testing.T) {
			storetest.Run(t, func(context.Context, testing.TB) (storetest.Harness, error) {
				return memHarness{noPartitions: noPartitions, closed: &closed}, nil
			})
		})
		if !closed {
			t.Error("Run did not close the harness")
		}
	}
}

func BenchmarkHarness(b *testing.B) {
	closed := false
	storetest.Benchmark(b, func(context.Context, testing.TB) (storetest.Harness, error) {
		return memHarness{closed: &closed}, nil
	})
}
