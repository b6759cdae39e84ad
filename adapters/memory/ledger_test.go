package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
)

func TestLedgersConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) ledger.Store { return memory.NewLedgers() })
}

// The fault wrapper with no faults configured must behave exactly like the
// store it wraps.
func TestFaultyWithoutFaultsConforms(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) ledger.Store { return memory.NewFaulty(memory.NewLedgers(), 1) })
}

func TestFaultyInjects(t *testing.T) {
	ctx := context.Background()
	inner := memory.NewLedgers()
	f := memory.NewFaulty(inner, 1)
	f.FailPuts(memory.PutRefused, memory.PutAckLost, memory.PutLost)
	require.ErrorIs(t, f.Put(ctx, "k", "a", []byte("1"), nil), crdt.ErrUnavailable)
	require.Zero(t, inner.Siblings("k"), "a refused write does not land")
	require.ErrorIs(t, f.Put(ctx, "k", "a", []byte("2"), nil), crdt.ErrAmbiguousWrite)
	require.Equal(t, 1, inner.Siblings("k"), "a lost acknowledgement: the write landed")
	require.ErrorIs(t, f.Put(ctx, "k", "a", []byte("3"), nil), crdt.ErrAmbiguousWrite)
	require.Equal(t, 1, inner.Siblings("k"), "a lost write did not land")
	require.NoError(t, f.Put(ctx, "k", "a", []byte("4"), nil))
	f.StaleFetches(1)
	stale, _, err := f.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("2")}, stale, "a fetch one write old")
	require.ErrorIs(t, inner.Put(ctx, "k", "a", nil, ledger.Token("x")), crdt.ErrCorruptEncoding)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err = inner.Fetch(cctx, "k")
	require.ErrorIs(t, err, context.Canceled)
}

// Ledgers keeps concurrent writes as siblings.
func ExampleLedgers() {
	ctx := context.Background()
	s := memory.NewLedgers()
	_, tok, _ := s.Fetch(ctx, "k")
	s.Put(ctx, "k", "a", []byte("from a"), tok)
	s.Put(ctx, "k", "b", []byte("from b"), tok) // same token: concurrent
	fmt.Println(s.Siblings("k"))
	_, tok, _ = s.Fetch(ctx, "k")
	s.Put(ctx, "k", "a", []byte("merged"), tok)
	fmt.Println(s.Siblings("k"))
	// Output:
	// 2
	// 1
}

// Faulty injects queued or random faults for tests and demonstrations.
func ExampleFaulty() {
	ctx := context.Background()
	f := memory.NewFaulty(memory.NewLedgers(), 42)
	f.FailPuts(memory.PutAckLost)
	err := f.Put(ctx, "k", "a", []byte("v"), nil)
	sibs, _, _ := f.Fetch(ctx, "k")
	fmt.Println(err, len(sibs))
	// Output: memory: injected lost acknowledgement: counterkit: write outcome unknown 1
}

// Rates draw faults at random from a seeded source.
func ExampleRates() {
	ctx := context.Background()
	f := memory.NewFaulty(memory.NewLedgers(), 7)
	f.SetRates(memory.Rates{Refused: 1})
	fmt.Println(f.Put(ctx, "k", "a", []byte("v"), nil), f.Injected(memory.PutRefused))
	// Output: memory: injected refusal: counterkit: store unavailable 1
}

// PutFault values name the injectable faults.
func ExamplePutFault() {
	f := memory.NewFaulty(memory.NewLedgers(), 1)
	f.FailPuts(memory.PutRefused, memory.PutOK)
	fmt.Println(f.Put(context.Background(), "k", "a", []byte("v"), nil) != nil, f.Put(context.Background(), "k", "a", []byte("v"), nil))
	// Output: true <nil>
}
