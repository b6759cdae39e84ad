package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/statestore/storetest"
)

func TestStatesConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) statestore.Store { return memory.NewStates() })
}

func TestStatesZeroValue(t *testing.T) {
	var s memory.States
	storetest.Run(t, func(t *testing.T) statestore.Store { return &memory.States{} })
	encs, err := s.Load(context.Background(), "k")
	require.NoError(t, err)
	require.Empty(t, encs)
}

// TestStatesMergesOnWrite checks what is specific to this store: one
// encoding per key, and an actor's regressed save (an older state after a
// newer one) loses nothing, which per-actor stores do not promise.
func TestStatesMergesOnWrite(t *testing.T) {
	ctx := context.Background()
	s := memory.NewStates()
	old := gcounter.New()
	require.NoError(t, old.Increment("a", 1))
	newer := old.Clone()
	require.NoError(t, newer.Increment("a", 1))
	require.NoError(t, statestore.Save(ctx, s, "k", "a", newer))
	require.NoError(t, statestore.Save(ctx, s, "k", "a", old))
	encs, err := s.Load(ctx, "k")
	require.NoError(t, err)
	require.Len(t, encs, 1)
	got, err := statestore.Load[gcounter.Counter](ctx, s, "k")
	require.NoError(t, err)
	require.True(t, got.Equal(newer))
}

func TestStatesOverflowRefused(t *testing.T) {
	ctx := context.Background()
	s := memory.NewStates()
	a, b := gcounter.New(), gcounter.New()
	require.NoError(t, a.Increment("a", 1<<62))
	require.NoError(t, b.Increment("b", 1<<62))
	require.NoError(t, statestore.Save(ctx, s, "k", "a", a))
	require.ErrorIs(t, statestore.Save(ctx, s, "k", "b", b), crdt.ErrOverflow)
	got, err := statestore.Load[gcounter.Counter](ctx, s, "k")
	require.NoError(t, err)
	require.True(t, got.Equal(a))
}

// TestStatesLoadReturnsCopy: callers may scribble on what Load returns.
func TestStatesLoadReturnsCopy(t *testing.T) {
	ctx := context.Background()
	s := memory.NewStates()
	g := gcounter.New()
	require.NoError(t, g.Increment("a", 7))
	require.NoError(t, statestore.Save(ctx, s, "k", "a", g))
	encs, err := s.Load(ctx, "k")
	require.NoError(t, err)
	for i := range encs[0] {
		encs[0][i] = 0xff
	}
	got, err := statestore.Load[gcounter.Counter](ctx, s, "k")
	require.NoError(t, err)
	require.EqualValues(t, 7, got.Value())
}

func ExampleStates() {
	ctx := context.Background()
	store := memory.NewStates()
	for _, actor := range []crdt.ActorID{"web-1", "web-2", "web-1"} {
		_, err := statestore.Update(ctx, store, "page:/home", actor, func(c *gcounter.Counter) error {
			return c.Increment(actor, 1)
		})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	views, _ := statestore.Load[gcounter.Counter](ctx, store, "page:/home")
	fmt.Println(views.Value(), views.Get("web-1"))
	// Output: 3 2
}
