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
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// eachSiblingShape runs fn on the memory store (every sibling kept) and
// on a RowStore (one row per actor, SPEC.md 10.1), Puts stamped at the
// call.
func eachSiblingShape(t *testing.T, fn func(t *testing.T, inner store.Siblings, stamp func(store.Siblings) store.Siblings)) {
	t.Run("memory", func(t *testing.T) {
		fn(t, memory.NewSiblings(), func(s store.Siblings) store.Siblings { return s })
	})
	t.Run("one row per actor", func(t *testing.T) {
		fn(t, &ledger.RowStore{}, ledger.StampPuts)
	})
}

// sameActorShardings returns two Sharded values of account "hot" with one
// Actor ("svc"), over 4 and 2 sub-keys, each through its own faulty
// wrapper of inner, on one fake clock.
func sameActorShardings(t *testing.T, inner store.Siblings, stamp func(store.Siblings) store.Siblings) (clock *fakeClock, fs4, fs2 *faulty.Siblings, s4, s2 *ledger.Sharded) {
	clock = newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts := ledger.Options{Actor: "svc", Clock: clock.Now, Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1}
	fs4, fs2 = faulty.NewSiblings(inner, faulty.Options{}), faulty.NewSiblings(inner, faulty.Options{})
	s4, err := ledger.NewSharded(stamp(fs4), "hot", 4, opts)
	require.NoError(t, err)
	s2, err = ledger.NewSharded(stamp(fs2), "hot", 2, opts)
	require.NoError(t, err)
	return clock, fs4, fs2, s4, s2
}

// txnOutside returns a transaction whose sub-key under 4 is 2 or 3 (not a
// sub-key of n=2).
func txnOutside(prefix string) crdt.TxnID {
	for i := 0; ; i++ {
		x := crdt.TxnID(fmt.Sprint(prefix, i))
		if ledger.ShardOf(x, 4) >= 2 {
			return x
		}
	}
}

// TestShardedRaceSameActorKeepsBothMarkers (found by a review): two
// processes of one actor ("svc", e.g. an old and a new replica in a
// rolling deploy) make their first use of a new Sharded account at once,
// with n=4 and n=2 (SPEC.md 6.12, two first uses raced). n=2 reads no
// marker; before its marker Put, n=4 reads none, puts its marker and
// credits x on sub-key 2 or 3 (acknowledged); then n=2 puts its marker.
// Both markers must stay, so that Value reads the larger layout's
// sub-keys: when both were put as Options.Actor, on a store with one row
// per actor n=2's replaced n=4's, and the acknowledged x was lost from
// every Value (20 for 27). Each n's marker is put as its own actor now.
func TestShardedRaceSameActorKeepsBothMarkers(t *testing.T) {
	eachSiblingShape(t, func(t *testing.T, inner store.Siblings, stamp func(store.Siblings) store.Siblings) {
		ctx := context.Background()
		clock, _, fs, s4, s2 := sameActorShardings(t, inner, stamp)
		x := txnOutside("x-")

		var r4 ledger.Result
		var err4 error
		fired := false
		fs.SetHook(func(ctx context.Context, c faulty.Call, after bool) error {
			if after && !fired && c.Method == faulty.MethodFetch && c.Key == "hot" {
				fired = true // n=2 read no marker; n=4 runs before its Put
				r4, err4 = s4.Credit(ctx, x, 7)
			}
			return nil
		})
		_, err := s2.Credit(ctx, "b", 20)
		fs.SetHook(nil)
		require.NoError(t, err)
		require.NoError(t, err4)
		require.Equal(t, tpncounter.Applied, r4.Outcome, "n=4 acknowledged x")
		require.True(t, r4.Landed)

		// A retry of x is recognised (its record is the account's).
		clock.Add(2 * ledger.LayoutRecheck)
		r, err := s4.Credit(ctx, x, 7)
		if err == nil {
			require.NotEqual(t, tpncounter.Applied, r.Outcome)
		} else {
			t.Logf("n=4's retry of x: %v", err)
		}

		// Every reader of the account counts the acknowledged x.
		for _, n := range []int{2, 4} {
			rd, err := ledger.NewSharded(inner, "hot", n, ledger.Options{Actor: crdt.ActorID(fmt.Sprint("reader-", n))})
			require.NoError(t, err)
			v, err := rd.Value(ctx)
			if err != nil {
				t.Errorf("n=%d reader: Value: %v", n, err)
				continue
			}
			if v != 27 {
				t.Errorf("n=%d reader: Value = %d, want 27 (x=7 on sub-key %d acknowledged, b=20)", n, v, ledger.ShardOf(x, 4))
			}
		}
		v, err := s2.Value(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(27), v, "n=2's own Value counts the acknowledged x")
	})
}

// TestShardedRaceSameActorLandsTheSmallers (found by a review): the same
// race the other way round. n=4 reads no marker; before its marker Put,
// n=2 puts its marker and credits x, whose copy lands but whose record Put
// is refused (ambiguous_write, the record owed); n=4 then puts its marker.
// n=2's next write finds both markers, writes its owed record and is
// refused, and a retry of x through n=4 is recognised. When n=4's marker
// replaced n=2's (one row per actor, one actor), n=2 was refused as for
// an n no marker names, without writing its record, and the retry
// applied x again on another sub-key: 34 for 27, for good.
func TestShardedRaceSameActorLandsTheSmallers(t *testing.T) {
	eachSiblingShape(t, func(t *testing.T, inner store.Siblings, stamp func(store.Siblings) store.Siblings) {
		ctx := context.Background()
		clock, fs4, fs2, s4, s2 := sameActorShardings(t, inner, stamp)
		x := splitTxn("x-")
		rec := ledger.RecordKey("hot", x)

		var err2 error
		fired := false
		fs4.SetHook(func(ctx context.Context, c faulty.Call, after bool) error {
			if after && !fired && c.Method == faulty.MethodFetch && c.Key == "hot" {
				fired = true // n=4 read no marker; n=2 runs before its Put
				fs2.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse, faulty.Refuse), faulty.MethodPut), func(k string) bool { return k == rec }))
				_, err2 = s2.Credit(ctx, x, 7)
				fs2.SetPolicy(nil)
			}
			return nil
		})
		_, err := s4.Credit(ctx, "a", 20)
		fs4.SetHook(nil)
		require.NoError(t, err)
		require.ErrorIs(t, err2, crdt.ErrAmbiguousWrite, "n=2's record Put refused: x landed, its record owed")

		clock.Add(2 * ledger.LayoutRecheck)
		_, err = s2.Credit(ctx, "late", 1)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=2 refused")
		r, err := s4.Credit(ctx, x, 7)
		require.NoError(t, err)
		if r.Outcome == tpncounter.Applied {
			t.Errorf("a retry of %s through n=4 applied again (sub-key %d; n=2's copy on sub-key %d)", x, ledger.ShardOf(x, 4), ledger.ShardOf(x, 2))
		}
		v, err := s4.Value(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(27), v, "x counted once")
	})
}
