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

// memoryHarness makes fresh in-memory stores. A backend with a server
// would open a connection in its HarnessMaker, create a keyspace or bucket
// per Make call and drop them in Close.
type memoryHarness struct {
	siblingsOnly bool
	closed       bool
}

func (h *memoryHarness) MakeSiblings(context.Context, testing.TB) (store.Siblings, error) {
	return memory.NewSiblings(), nil
}

func (h *memoryHarness) MakePartitions(context.Context, testing.TB) (store.Partitions, error) {
	if h.siblingsOnly {
		return nil, fmt.Errorf("memoryHarness: siblings only: %w", errors.ErrUnsupported)
	}
	return memory.NewPartitions(), nil
}

func (h *memoryHarness) Close() { h.closed = true }

// A backend's test file passes its HarnessMaker to Run:
//
//	func TestConformance(t *testing.T) { conformance.Run(t, newMemoryHarness) }
func newMemoryHarness(context.Context, testing.TB) (conformance.Harness, error) {
	return &memoryHarness{}, nil
}

// A Harness makes an empty store per check, so that no check sees another's
// data. A backend without one of the shapes answers errors.ErrUnsupported,
// and Run skips that shape. (The memory stores need no testing.TB; Run
// passes the running test.)
func ExampleHarness() {
	ctx := context.Background()
	var h conformance.Harness = &memoryHarness{siblingsOnly: true}
	defer h.Close()

	first, _ := h.MakeSiblings(ctx, nil)
	_ = first.Put(ctx, "k", "a", []byte("v"), nil)
	second, _ := h.MakeSiblings(ctx, nil)
	v1, _, _ := first.Fetch(ctx, "k")
	v2, _, _ := second.Fetch(ctx, "k")
	fmt.Println(len(v1), len(v2))

	_, err := h.MakePartitions(ctx, nil)
	fmt.Println(errors.Is(err, errors.ErrUnsupported))
	// Output:
	// 1 0
	// true
}

// Run calls the HarnessMaker once per run and closes the Harness it
// returns when the run ends.
func ExampleHarnessMaker() {
	ctx := context.Background()
	var newHarness conformance.HarnessMaker = newMemoryHarness
	h, err := newHarness(ctx, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	p, _ := h.MakePartitions(ctx, nil)
	err = p.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("r"), Value: []byte("1"), Timestamp: 1}})
	rows, _ := p.Snapshot(ctx, "p", 10, store.ReadComplete)
	fmt.Println(err, len(rows))
	h.Close()
	fmt.Println(h.(*memoryHarness).closed)
	// Output:
	// <nil> 1
	// true
}
