package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestShardedLateMarkerLimit is SPEC.md 6.12's Limit for a marker Put in
// doubt: n=4's first marker Put is held in the network, its retry finds
// n=2's marker and is refused (invalid_config: its credit did not land).
// The account is n=2's for an hour; then the held Put lands. From then on
// n=4 is the larger layout named: n=2 is refused, naming both, n=4 writes,
// and Value, which reads every sub-key of the largest n, counts every
// credit once.
func TestShardedLateMarkerLimit(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner := memory.NewSiblings()
	fs := faulty.NewSiblings(inner, faulty.Options{})
	opts := func(a crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: a, Clock: clock.Now, Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1}
	}
	s2, err := ledger.NewSharded(inner, "hot", 2, opts("B"))
	require.NoError(t, err)
	s4, err := ledger.NewSharded(fs, "hot", 4, opts("A"))
	require.NoError(t, err)

	fetches := 0
	fs.SetHook(func(ctx context.Context, c faulty.Call, after bool) error {
		if !after && c.Method == faulty.MethodFetch && c.Key == "hot" {
			if fetches++; fetches == 2 { // n=4's retry: n=2's first use happened meanwhile
				_, err := s2.Credit(ctx, "b1", 20)
				require.NoError(t, err)
			}
		}
		return nil
	})
	fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Hold), faulty.MethodPut), func(k string) bool { return k == "hot" }))
	_, err = s4.Credit(ctx, "a1", 10)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite, "the credit did not land")
	fs.SetHook(nil)
	fs.SetPolicy(nil)

	for i := range 3 { // the account is n=2's
		clock.Add(20 * time.Minute)
		_, err := s2.Credit(ctx, crdt.TxnID("b-"+string(rune('a'+i))), 1)
		require.NoError(t, err)
	}
	require.NoError(t, fs.DeliverAll()) // the held marker lands
	clock.Add(2 * ledger.LayoutRecheck)

	_, err = s2.Credit(ctx, "b-late", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	require.ErrorContains(t, err, "[2 4]")
	_, err = s4.Credit(ctx, "a2", 100)
	require.NoError(t, err)
	for _, s := range []*ledger.Sharded{s2, s4} {
		v, err := s.Value(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(20+3+100), v)
	}
}
