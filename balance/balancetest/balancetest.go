// Package balancetest runs balance's account-level behaviours against any
// store.Partitions, so that every backend shows the tombstone balance works
// on it. A backend runs it with one call:
//
//	func TestBalance(t *testing.T) {
//	    balancetest.Run(t, func(t *testing.T) store.Partitions { return newStore(t) })
//	}
//
// Each behaviour is its own subtest with a fresh store from newStore, using
// only balance.Accounts and the store.Partitions interface, so it runs
// unchanged against a real database. Account keys are unique per subtest.
// The store's own contract (ordering, timestamps, atomicity, isolation) is
// checked by package store/storetest.
package balancetest

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// clock is a settable clock for the single goroutine of a subtest.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// rows returns account's stored rows in row order, checking that every row
// decodes, that its key is its row's, and that the order is CompareRows'.
func rows(t *testing.T, s store.Partitions, account string) []balance.Row {
	t.Helper()
	stored, err := s.Snapshot(context.Background(), account, balance.MaxRows, store.ReadComplete)
	require.NoError(t, err)
	out := make([]balance.Row, len(stored))
	for i, sr := range stored {
		k, err := balance.DecodeKey(sr.Key)
		require.NoError(t, err)
		require.NoError(t, out[i].UnmarshalBinary(sr.Value))
		require.Equal(t, k, out[i].Key())
		if i > 0 {
			require.Equal(t, -1, balance.CompareRows(out[i-1], out[i]), "rows %d and %d", i-1, i)
		}
	}
	return out
}

// Run runs every behaviour against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) store.Partitions) {
	t.Helper()
	ctx := context.Background()
	key := func(t *testing.T) string { return fmt.Sprintf("balance-%s-%d", t.Name(), time.Now().UnixNano()) }
	setup := func(t *testing.T) (*balance.Accounts, store.Partitions, *clock, string) {
		s := newStore(t)
		c := &clock{now: time.Now().UTC().Truncate(time.Second)}
		a, err := balance.New(s, balance.Options{Clock: c.Now})
		require.NoError(t, err)
		return a, s, c, key(t)
	}
	balanceOf := func(t *testing.T, a *balance.Accounts, account string) int64 {
		t.Helper()
		b, err := a.Balance(ctx, account)
		require.NoError(t, err)
		return b
	}

	t.Run("EmptyAccountIsZero", func(t *testing.T) {
		a, s, _, k := setup(t)
		require.Zero(t, balanceOf(t, a, k))
		require.Empty(t, rows(t, s, k))
	})
	t.Run("RowsAreStoredInClusteringOrder", func(t *testing.T) {
		a, s, c, k := setup(t)
		// Equal timestamps: the tail decides, as signed bytes.
		ids := []balance.ID{timeid.FromParts(c.now, 0x0001, 1), timeid.FromParts(c.now, 0x00ff, 1),
			timeid.FromParts(c.now.Add(-time.Second), 5, 5)}
		for i, id := range []balance.ID{ids[2], ids[0], ids[1]} {
			require.NoError(t, a.Add(ctx, k, id, int64(i+1)))
		}
		c.now = c.now.Add(time.Second)
		_, err := a.Merge(ctx, k)
		require.NoError(t, err)
		got := rows(t, s, k) // checks the order
		require.Len(t, got, 7, "three N rows, three tombstones, one sum row")
		require.Equal(t, int64(6), balanceOf(t, a, k))
	})
	t.Run("RetryIsCountedOnce", func(t *testing.T) {
		a, s, c, k := setup(t)
		id := timeid.New(c.now)
		for range 3 {
			require.NoError(t, a.Add(ctx, k, id, 4))
		}
		require.Len(t, rows(t, s, k), 1)
		require.Equal(t, int64(4), balanceOf(t, a, k))
	})
	t.Run("ExtremeAmountsRoundTrip", func(t *testing.T) {
		a, s, c, k := setup(t)
		require.NoError(t, a.Add(ctx, k, timeid.New(c.now), math.MinInt64))
		require.Equal(t, int64(math.MinInt64), balanceOf(t, a, k))
		require.NoError(t, a.Add(ctx, k+"-max", timeid.New(c.now), math.MaxInt64))
		require.Equal(t, int64(math.MaxInt64), balanceOf(t, a, k+"-max"))
		require.Equal(t, int64(math.MinInt64), rows(t, s, k)[0].Amount)
	})
	t.Run("ReusedIDCountsOnceAndIsReported", func(t *testing.T) {
		// One update id written with two amounts is two rows (the amount
		// is in the key); one amount counts.
		a, s, c, k := setup(t)
		u := timeid.New(c.now)
		require.NoError(t, a.Add(ctx, k, u, 5))
		require.NoError(t, a.Add(ctx, k, u, 7))
		require.NoError(t, a.Add(ctx, k, u, 5))
		require.Len(t, rows(t, s, k), 2)
		require.Equal(t, int64(5), balanceOf(t, a, k))
		conflicts, err := a.Conflicts(ctx, k)
		require.NoError(t, err)
		require.Equal(t, []balance.Conflict{{UpdateID: u, Counted: 5, Refused: []int64{7}}}, conflicts)
	})
	t.Run("BatchSpansAccountsAtomically", func(t *testing.T) {
		a, s, c, k := setup(t)
		id := timeid.New(c.now)
		var ok balance.Batch
		ok.Add(k, id, -30)
		ok.Add(k+"-b", id, 30)
		require.NoError(t, a.Apply(ctx, &ok))
		require.Equal(t, int64(-30), balanceOf(t, a, k))
		require.Equal(t, int64(30), balanceOf(t, a, k+"-b"))
		var bad balance.Batch
		bad.Add(k+"-c", timeid.New(c.now), 1)
		bad.Add(k+"-d", timeid.New(c.now), 0)
		require.ErrorIs(t, a.Apply(ctx, &bad), crdt.ErrInvalidAmount)
		require.Empty(t, rows(t, s, k+"-c"), "an invalid batch writes nothing")
	})
	t.Run("MergesSettleAndCollect", func(t *testing.T) {
		a, s, c, k := setup(t)
		var want int64
		for i := range 20 {
			amt := int64(i*3 - 20)
			if amt == 0 {
				amt = 1
			}
			want += amt
			require.NoError(t, a.Add(ctx, k, timeid.New(c.now), amt))
			c.now = c.now.Add(time.Second)
			if i%7 == 6 {
				_, err := a.Merge(ctx, k)
				require.NoError(t, err)
				require.Equal(t, want, balanceOf(t, a, k))
			}
		}
		for range 8 {
			c.now = c.now.Add(11 * time.Minute)
			_, err := a.Merge(ctx, k)
			require.NoError(t, err)
			require.Equal(t, want, balanceOf(t, a, k))
		}
		require.Len(t, rows(t, s, k), 1, "fully merged and collected")
	})
	t.Run("AccountsAreIsolated", func(t *testing.T) {
		a, _, c, k := setup(t)
		require.NoError(t, a.Add(ctx, k, timeid.New(c.now), 1))
		require.NoError(t, a.Add(ctx, k+"x", timeid.New(c.now), 2))
		require.NoError(t, a.Delete(ctx, k+"x"))
		require.Equal(t, int64(1), balanceOf(t, a, k))
		require.Zero(t, balanceOf(t, a, k+"x"))
	})
	t.Run("DeleteRemovesEverythingAndTheKeyIsReusable", func(t *testing.T) {
		a, s, c, k := setup(t)
		require.NoError(t, a.Add(ctx, k, timeid.New(c.now), 3))
		c.now = c.now.Add(time.Second)
		_, err := a.Merge(ctx, k)
		require.NoError(t, err)
		require.NoError(t, a.Delete(ctx, k))
		require.Empty(t, rows(t, s, k))
		require.NoError(t, a.Delete(ctx, k), "deleting an empty account is fine")
		require.NoError(t, a.Add(ctx, k, timeid.New(c.now), 2))
		require.Equal(t, int64(2), balanceOf(t, a, k), "a write after the delete counts")
	})
	t.Run("CancelledContextWritesNothing", func(t *testing.T) {
		a, s, c, k := setup(t)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := a.Add(cctx, k, timeid.New(c.now), 1)
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		require.Empty(t, rows(t, s, k))
	})
	t.Run("CorruptRowsAreReported", func(t *testing.T) {
		a, s, c, k := setup(t)
		r := balance.NormalRow(timeid.New(c.now), 5)
		other := balance.NormalRow(timeid.New(c.now), 6)
		v, err := other.MarshalBinary()
		require.NoError(t, err)
		put := func(account string, key, value []byte) {
			require.NoError(t, s.Apply(ctx, []store.Mutation{{Partition: account, Op: store.OpPut,
				Key: key, Value: value, Timestamp: c.now.UnixMicro()}}))
		}
		// A row whose key names another row than its value.
		put(k, balance.EncodeKey(r.Key()), v)
		_, err = a.Balance(ctx, k)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		// A row that does not decode.
		put(k+"-2", balance.EncodeKey(r.Key()), []byte("not a row"))
		_, err = a.Merge(ctx, k+"-2")
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		// A key that is not a row key.
		put(k+"-3", []byte("x"), v)
		_, err = a.Balance(ctx, k+"-3")
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	})
}
