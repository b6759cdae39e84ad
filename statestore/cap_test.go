package statestore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
	"github.com/counterkit/counterkit/statestore"
)

// Two blind saves, each adding its own actor to a state at MaxActors-1:
// each sibling is within the cap, their merge is past it. Load merges them
// (MaxActors caps Increment only, SPEC.md 4.2), Update keeps working for
// an existing actor and refuses a new one, and the result round-trips.
func TestBlindSavesPastMaxActors(t *testing.T) {
	if testing.Short() {
		t.Skip("builds counters of MaxActors actors")
	}
	ctx := context.Background()
	s := memory.NewSiblings()
	base := pncounter.New()
	for i := range gcounter.MaxActors - 1 {
		require.NoError(t, base.Increment(crdt.ActorID(fmt.Sprintf("a%06d", i)), 1))
	}
	for _, w := range []crdt.ActorID{"x", "y"} {
		c := base.Clone()
		require.NoError(t, c.Increment(w, 1))
		require.NoError(t, statestore.Save(ctx, s, "k", w, c))
	}
	c, err := statestore.Load[pncounter.Counter](ctx, s, "k")
	require.NoError(t, err)
	require.EqualValues(t, gcounter.MaxActors+1, c.Value())
	_, err = statestore.Update[pncounter.Counter](ctx, s, "k", "z", func(c *pncounter.Counter) error { return c.Increment("z", 1) })
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	_, err = statestore.Update[pncounter.Counter](ctx, s, "k", "x", func(c *pncounter.Counter) error { return c.Increment("x", 1) })
	require.NoError(t, err)
	c, err = statestore.Load[pncounter.Counter](ctx, s, "k")
	require.NoError(t, err)
	require.EqualValues(t, gcounter.MaxActors+2, c.Value())
}
