package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestShardedHasTransactionAfterRace: after two first uses raced, n=2
// (still trusting its check) applies x on its sub-key, acknowledged. The
// larger n=4 then writes alone: a retry of x through it is a duplicate,
// Value counts x, and HasTransaction and Find through n=4 read x's
// sub-key under n=2 too, as its writes do (SPEC.md 6.12; a review found
// them reading only x's n=4 sub-key: false and unknown).
func TestShardedHasTransactionAfterRace(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	_, s4, s2 := racedLayouts(t, clock)
	x := splitTxn("x-")
	r, err := s2.Credit(ctx, x, 7)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, r.Outcome)
	clock.Add(2 * ledger.LayoutRecheck)
	has, err := s4.HasTransaction(ctx, x)
	require.NoError(t, err)
	c, err := s4.Find(ctx, x)
	require.NoError(t, err)
	v, err := s4.Value(ctx)
	require.NoError(t, err)
	t.Logf("n=4: HasTransaction(x) %v, Find(x).Status %v, Value %d (x counted)", has, c.Status(x), v)
	r, err = s4.Credit(ctx, x, 7)
	require.NoError(t, err)
	t.Logf("n=4: retry of x: %v", r.Outcome)
	require.True(t, has, "HasTransaction through n=4 of x, acknowledged and counted in Value")
	require.NotEqual(t, tpncounter.Unknown, c.Status(x), "Find through n=4 of x")
}
