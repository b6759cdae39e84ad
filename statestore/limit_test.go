package statestore_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestLimitUnionAboveTheStoresLimit, the limit package statestore states:
// two blind Saves of 30,000-actor states with 255-byte ids, each within
// the store's 8 MiB, merge into a state above it. The key still loads;
// every Update fails with crdt.ErrTooLarge and writes nothing.
func TestLimitUnionAboveTheStoresLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 16 MB of state; the first pass runs it")
	}
	ctx := context.Background()
	st := memory.NewSiblings()
	for part := range 2 {
		c := gcounter.New()
		for i := range 30000 {
			h := fmt.Sprintf("%x", sha256.Sum256(fmt.Appendf(nil, "%d-%d", part, i)))
			require.NoError(t, c.Increment(crdt.ActorID(strings.Repeat(h, 4)[:crdt.MaxIDLen]), 1))
		}
		require.NoError(t, statestore.Save(ctx, st, "k", crdt.ActorID(fmt.Sprint("saver-", part)), c))
	}
	c, err := statestore.Load[gcounter.Counter](ctx, st, "k")
	require.NoError(t, err)
	require.Equal(t, int64(60000), c.Value())
	before, _, err := st.Fetch(ctx, "k")
	require.NoError(t, err)
	_, err = statestore.Update(ctx, st, "k", "w", func(c *gcounter.Counter) error { return c.Increment("w", 1) })
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	after, _, err := st.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, before, after, "nothing written")
}

// TestLimitStaleReadLosesAnIncrement, the other limit package statestore
// states: a read that misses the actor's own last write (a lagging
// replica; the README assumes read-your-writes) makes Update count from
// the older state, and that write's increment is lost, with no error.
func TestLimitStaleReadLosesAnIncrement(t *testing.T) {
	ctx := context.Background()
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{RecordWrites: true})
	inc := func(c *gcounter.Counter) error { return c.Increment("w", 1) }
	_, err := statestore.Update(ctx, st, "k", "w", inc)
	require.NoError(t, err)
	st.SetPolicy(faulty.Only(faulty.Script(faulty.StaleBy(1)), faulty.MethodFetch))
	_, err = statestore.Update(ctx, st, "k", "w", inc)
	require.NoError(t, err, "acknowledged")
	st.SetPolicy(nil)
	c, err := statestore.Load[gcounter.Counter](ctx, st, "k")
	require.NoError(t, err)
	require.Equal(t, int64(1), c.Value(), "two acknowledged increments, one counted")
}

// TestLimitSaveOfAnOlderStateOnAPerActorStore, the limit Save states: on
// a store that keeps one value per actor (rowSiblings, as the Cassandra
// adapter), Save replaces the actor's earlier value, so re-sending a state
// after the actor's next Update was acknowledged loses that Update's
// increment. Over siblings (adapters/memory) the same Save is harmless.
func TestLimitSaveOfAnOlderStateOnAPerActorStore(t *testing.T) {
	ctx := context.Background()
	inc := func(c *gcounter.Counter) error { return c.Increment("w", 1) }
	for _, tc := range []struct {
		name string
		st   store.Siblings
		want int64
	}{
		{"siblings", memory.NewSiblings(), 2},
		{"one value per actor", newRowSiblings(), 1},
	} {
		first, err := statestore.Update(ctx, tc.st, "k", "w", inc)
		require.NoError(t, err)
		_, err = statestore.Update(ctx, tc.st, "k", "w", inc)
		require.NoError(t, err)
		require.NoError(t, statestore.Save(ctx, tc.st, "k", "w", first), "the first state, sent again late")
		c, err := statestore.Load[gcounter.Counter](ctx, tc.st, "k")
		require.NoError(t, err)
		require.Equal(t, tc.want, c.Value(), tc.name)
	}
}
