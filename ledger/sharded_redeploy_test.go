package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestShardedRedeployOtherN: an account used for hours with n=2; a
// redeploy brings processes with n=1, 3 and 4 (old ones still running),
// whose reads may be stale by up to RetireAfter/2. Every operation of a new
// n is refused with crdt.ErrInvalidConfig, writes nothing (no marker, no
// sub-key, no record), and the old layout writes on with nothing lost;
// retries of its transactions through the new n are refused, never
// applied.
func TestShardedRedeployOtherN(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := memory.NewSiblings()
	stale := faulty.NewSiblings(inner, faulty.Options{RecordWrites: true, MaxLag: ledger.DefaultRetireAfter / 2, Clock: clock.Now,
		Policy: faulty.Only(func(faulty.Call) faulty.Fault { return faulty.StaleBy(faulty.MaxStaleness) }, faulty.MethodFetch)})
	opts := func(a crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: a, Clock: clock.Now, Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1}
	}
	old, err := ledger.NewSharded(inner, "acct", 2, opts("old"))
	require.NoError(t, err)
	var want int64
	for i := range 6 {
		_, err := old.Credit(ctx, crdt.TxnID(fmt.Sprint("t", i)), int64(i+1))
		require.NoError(t, err)
		want += int64(i + 1)
		clock.Add(20 * time.Minute)
	}
	clock.Add(time.Hour)
	puts := 0
	stale.SetHook(func(_ context.Context, c faulty.Call, after bool) error {
		if !after && c.Method != faulty.MethodFetch {
			puts++
		}
		return nil
	})
	for _, n := range []int{1, 3, 4} {
		s, err := ledger.NewSharded(stale, "acct", n, opts(crdt.ActorID(fmt.Sprint("new", n))))
		require.NoError(t, err)
		_, err = s.Credit(ctx, "t0", 1)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=%d: a retry of t0", n)
		_, err = s.Credit(ctx, "fresh", 5)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=%d", n)
		_, err = s.Value(ctx)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=%d: Value", n)
		_, err = s.FindAll(ctx)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=%d: FindAll", n)
		_, err = s.HasTransaction(ctx, "t0")
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=%d: HasTransaction", n)
		require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite)
	}
	require.Zero(t, puts, "the refused layouts wrote nothing")
	require.Equal(t, 1, inner.Count("acct"), "one marker")
	_, err = old.Credit(ctx, "after", 100)
	require.NoError(t, err)
	v, err := old.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, want+100, v)
}
