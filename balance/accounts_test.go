package balance_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newAccounts(t testing.TB) (*balance.Accounts, *spy, *clock) {
	t.Helper()
	c := &clock{now: t0}
	s := newSpy()
	l, err := balance.New(s, balance.Options{Clock: c.Now})
	require.NoError(t, err)
	return l, s, c
}

func TestAddIsOneWriteAndNoRead(t *testing.T) {
	l, s, c := newAccounts(t)
	ctx := context.Background()
	for i := range 50 {
		require.NoError(t, l.Add(ctx, "a", timeid.New(c.now), int64(i+1)))
		c.now = c.now.Add(time.Millisecond)
	}
	calls := s.Calls()
	require.Equal(t, int64(50), calls.Applies)
	require.Equal(t, int64(50), calls.Puts)
	require.Zero(t, calls.Snapshots, "an increment never reads")
	b, err := l.Balance(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, int64(1275), b)
}

func TestAddRefusesBadInputAndRetriesCountOnce(t *testing.T) {
	l, s, c := newAccounts(t)
	ctx := context.Background()
	require.ErrorIs(t, l.Add(ctx, "a", timeid.New(c.now.Add(-6*time.Minute)), 1), crdt.ErrOutsideWindow)
	require.ErrorIs(t, l.Add(ctx, "a", timeid.New(c.now.Add(time.Minute)), 1), crdt.ErrOutsideWindow)
	require.ErrorIs(t, l.Add(ctx, "a", balance.ID(uuid.New()), 1), crdt.ErrInvalidTxnID)
	require.ErrorIs(t, l.Add(ctx, "a", timeid.New(c.now), 0), crdt.ErrInvalidAmount)
	require.ErrorIs(t, l.Add(ctx, "", timeid.New(c.now), 1), balance.ErrInvalidKey)
	require.ErrorContains(t, l.Add(ctx, "a\x00b", timeid.New(c.now), 1), `account key "a\x00b" contains a control character`)
	require.Zero(t, s.Calls().Applies)

	id := timeid.New(c.now)
	s.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after {
			return crdt.ErrAmbiguousWrite // landed, acknowledgement lost
		}
		return nil
	})
	require.ErrorIs(t, l.Add(ctx, "a", id, 9), crdt.ErrAmbiguousWrite)
	s.SetHook(nil)
	require.NoError(t, l.Add(ctx, "a", id, 9))
	b, _ := l.Balance(ctx, "a")
	require.Equal(t, int64(9), b)
}

func TestApplyIsAllOrNothing(t *testing.T) {
	l, s, c := newAccounts(t)
	ctx := context.Background()
	id := timeid.New(c.now)
	var bad balance.Batch
	bad.Add("a", id, -5)
	bad.Add("b", id, 0)
	require.ErrorIs(t, l.Apply(ctx, &bad), crdt.ErrInvalidAmount)
	var conflict balance.Batch
	conflict.Add("a", id, -5)
	conflict.Add("a", id, 5)
	err := l.Apply(ctx, &conflict)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
	require.ErrorContains(t, err, `balance "a": `, "named like every other Apply error")
	var transfer balance.Batch
	transfer.Add("a", id, -5)
	transfer.Add("b", id, 5)
	s.SetHook(func(context.Context, faulty.Call, bool) error { return crdt.ErrUnavailable })
	require.ErrorIs(t, l.Apply(ctx, &transfer), crdt.ErrUnavailable)
	s.SetHook(nil)
	require.Empty(t, s.Stored("a"))
	require.Empty(t, s.Stored("b"))
	require.NoError(t, l.Apply(ctx, &transfer))
	require.Equal(t, int64(1), s.Calls().Applies)
	a, _ := l.Balance(ctx, "a")
	b, _ := l.Balance(ctx, "b")
	require.Equal(t, [2]int64{-5, 5}, [2]int64{a, b})
	done, cancel := context.WithCancel(ctx)
	cancel()
	calls := s.Calls()
	require.NoError(t, l.Apply(done, &balance.Batch{}), "an empty batch calls nothing, even on a done context")
	require.Equal(t, calls, s.Calls())
	require.ErrorIs(t, l.Apply(done, &transfer), crdt.ErrUnavailable)
}

// TestApplyPastTheStoreLimitWritesNothing sends a batch of more updates
// than a store batch takes, and one spanning accounts past 32 KiB: each is
// refused with crdt.ErrTooLarge and nothing is written.
func TestApplyPastTheStoreLimitWritesNothing(t *testing.T) {
	l, s, c := newAccounts(t)
	ctx := context.Background()
	var many, spread balance.Batch
	for i := range store.MaxBatch + 1 {
		many.Add("a", timeid.FromParts(c.now, 1, uint64(i)), 1)
	}
	for i := range 400 {
		spread.Add(fmt.Sprintf("acct%02d", i%20), timeid.FromParts(c.now, 1, uint64(i)), 1)
	}
	for name, b := range map[string]*balance.Batch{"many": &many, "spread": &spread} {
		s.ResetCalls()
		require.ErrorIs(t, l.Apply(ctx, b), crdt.ErrTooLarge, name)
		require.Zero(t, s.Calls().Applies, name)
	}
	require.Empty(t, s.Stored("a"))
	for i := range 20 {
		require.Empty(t, s.Stored(fmt.Sprintf("acct%02d", i)))
	}
}

// Validity rules, checked on hand-built partitions.

func sumRow(v balance.ID, amount, covers int64) balance.Row {
	return balance.Row{UpdateID: v, Kind: balance.KindSum, Version: v, Amount: amount, Covers: covers}
}

func tomb(target balance.Row, v balance.ID) balance.Row {
	return balance.Row{UpdateID: target.UpdateID, Kind: balance.KindTombstone, Version: v, Amount: target.Amount, Target: target.Kind}
}

func value(t *testing.T, rows ...balance.Row) int64 {
	t.Helper()
	v, err := balance.Evaluate(rows)
	require.NoError(t, err)
	return v.Value
}

func TestEvaluateRules(t *testing.T) {
	n1, n2, n3 := nRow(0, 1, 1), nRow(time.Second, 2, 5), nRow(2*time.Second, 3, 10)
	vA, vB := id(time.Minute, 100), id(time.Minute+time.Millisecond, 101)
	sA, sB := sumRow(vA, 6, 2), sumRow(vB, 16, 3)

	t.Run("plain rows", func(t *testing.T) {
		require.Equal(t, int64(16), value(t, n1, n2, n3))
	})
	t.Run("orphan tombstones count nothing", func(t *testing.T) {
		require.Equal(t, int64(16), value(t, n1, n2, n3, tomb(n1, vA), tomb(n2, vA)))
	})
	t.Run("complete merge replaces its rows", func(t *testing.T) {
		v, err := balance.Evaluate([]balance.Row{n1, n2, n3, tomb(n1, vA), tomb(n2, vA), sA})
		require.NoError(t, err)
		require.Equal(t, int64(16), v.Value)
		require.Equal(t, []balance.Row{sA}, v.Valid)
		require.Len(t, v.Live, 2) // sA and n3
	})
	t.Run("incomplete merge is invalid", func(t *testing.T) {
		v, err := balance.Evaluate([]balance.Row{n1, n2, n3, tomb(n1, vA), sA})
		require.NoError(t, err)
		require.Equal(t, int64(16), v.Value)
		require.Equal(t, []balance.Row{sA}, v.InvalidSums)
	})
	t.Run("amount mismatch is invalid", func(t *testing.T) {
		bad := sumRow(vA, 7, 2)
		require.Equal(t, int64(16), value(t, n1, n2, n3, tomb(n1, vA), tomb(n2, vA), bad))
		changed := n1
		changed.Amount = 2 // the row was overwritten after the merge read it
		require.Equal(t, int64(17), value(t, changed, n2, n3, tomb(n1, vA), tomb(n2, vA), sA))
	})
	t.Run("racing merges: exactly one wins", func(t *testing.T) {
		// Both read n1,n2,n3... A covered n1,n2 and B all three.
		rows := []balance.Row{n1, n2, n3, tomb(n1, vA), tomb(n2, vA), sA, tomb(n1, vB), tomb(n2, vB), tomb(n3, vB), sB}
		v, err := balance.Evaluate(rows)
		require.NoError(t, err)
		require.Equal(t, int64(16), v.Value)
		require.Equal(t, []balance.Row{sA}, v.Valid, "the first in (updateid, version) order wins")
		require.Contains(t, v.InvalidSums, sB)
		require.Len(t, v.InvalidTombstones, 3, "only the winner's tombstones count")
		// Same update-id time: the version breaks the tie.
		vC := timeid.FromParts(vA.Time(), 0x0001, 5)
		vD := timeid.FromParts(vA.Time(), 0x00ff, 5) // sorts first (signed bytes)
		sC, sD := sumRow(vC, 6, 2), sumRow(vD, 6, 2)
		v, err = balance.Evaluate([]balance.Row{n1, n2, tomb(n1, vC), tomb(n2, vC), sC, tomb(n1, vD), tomb(n2, vD), sD})
		require.NoError(t, err)
		require.Equal(t, int64(6), v.Value)
		require.Equal(t, []balance.Row{sD}, v.Valid)
	})
	t.Run("chain: merge 2 covers merge 1", func(t *testing.T) {
		rows := []balance.Row{n1, n2, n3, tomb(n1, vA), tomb(n2, vA), sA, tomb(sA, vB), tomb(n3, vB), sumRow(vB, 16, 2)}
		v, err := balance.Evaluate(rows)
		require.NoError(t, err)
		require.Equal(t, int64(16), v.Value)
		require.Len(t, v.Valid, 2)
		require.Len(t, v.Live, 1)
	})
	t.Run("settled merge keeps its value and cancels a returning retry", func(t *testing.T) {
		settled := sA
		settled.Settled = true
		require.Equal(t, int64(6), value(t, settled, tomb(n1, vA), tomb(n2, vA)))
		require.Equal(t, int64(6), value(t, settled, tomb(n1, vA), tomb(n2, vA), n1), "retried n1 is cancelled")
		require.Equal(t, int64(6), value(t, settled))
	})
	t.Run("overflow and corruption", func(t *testing.T) {
		big1, big2 := nRow(0, 1, math.MaxInt64), nRow(time.Second, 2, 1)
		_, err := balance.Evaluate([]balance.Row{big1, big2})
		require.ErrorIs(t, err, crdt.ErrOverflow)
		_, err = balance.Evaluate([]balance.Row{n1, n1})
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		_, err = balance.Evaluate([]balance.Row{{Kind: balance.KindNormal, Amount: 1}})
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	})
}

func TestMergeOverflowWritesNothing(t *testing.T) {
	l, s, c := newAccounts(t)
	ctx := context.Background()
	// Partial sums may leave the int64 range in some orders; only the total
	// decides, whatever order the rows are summed in.
	require.NoError(t, l.Add(ctx, "b", timeid.New(c.now), math.MaxInt64))
	require.NoError(t, l.Add(ctx, "b", timeid.New(c.now), 1))
	require.NoError(t, l.Add(ctx, "b", timeid.New(c.now), -2))
	_, err := l.Merge(ctx, "b")
	require.NoError(t, err)
	bal, err := l.Balance(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64-1), bal)

	require.NoError(t, l.Add(ctx, "a", timeid.New(c.now), math.MaxInt64))
	require.NoError(t, l.Add(ctx, "a", timeid.New(c.now), 5))
	before := s.Stored("a")
	s.ResetCalls()
	_, err = l.Merge(ctx, "a")
	require.ErrorIs(t, err, crdt.ErrOverflow)
	require.Zero(t, s.Calls().Applies)
	require.Equal(t, before, s.Stored("a"))
}

// TestSlowMergeAborts delays a merge between its tombstones and its sum row
// past MaxMerge: it must stop, the balance must not change, and a later
// merge must collect the void tombstones once they are old enough.
func TestSlowMergeAborts(t *testing.T) {
	l, s, c := newAccounts(t)
	ctx := context.Background()
	require.NoError(t, l.Add(ctx, "a", timeid.New(c.now), 3))
	require.NoError(t, l.Add(ctx, "a", timeid.New(c.now), 4))
	writes := 0
	s.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if call.Method == faulty.MethodApply && after {
			writes++
			c.now = c.now.Add(11 * time.Second) // the merge stalls after its tombstones
		}
		return nil
	})
	rep, err := l.Merge(ctx, "a")
	s.SetHook(nil)
	require.ErrorIs(t, err, balance.ErrSlowMerge)
	require.Len(t, rep.Tombstones, 2)
	require.Nil(t, rep.Sum)
	require.Equal(t, 1, writes)
	b, _ := l.Balance(ctx, "a")
	require.Equal(t, int64(7), b)
	c.now = c.now.Add(11 * time.Minute)
	rep, err = l.Merge(ctx, "a")
	require.NoError(t, err)
	require.Len(t, rep.Collected, 2, "void tombstones are collected")
	require.NotNil(t, rep.Sum)
	b, _ = l.Balance(ctx, "a")
	require.Equal(t, int64(7), b)
}

func TestDeleteAndOptions(t *testing.T) {
	l, s, c := newAccounts(t)
	ctx := context.Background()
	require.NoError(t, l.Add(ctx, "a", timeid.New(c.now), 3))
	require.NoError(t, l.Delete(ctx, "a"))
	require.Empty(t, s.Stored("a"))
	require.Equal(t, int64(1), s.Calls().PartitionDeletes)
	for _, o := range []balance.Options{
		{Window: -1},
		{SettleGrace: time.Second},
		{GCGrace: time.Minute},
		{FutureSkew: time.Minute},
		{GCGrace: math.MaxInt64}, // over 50 years: cutoffs would overflow
	} {
		_, err := balance.New(s, o)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%+v", o)
	}
	_, err := balance.New(nil, balance.Options{})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	require.Equal(t, 10*time.Minute, l.Options().GCGrace)
}

// TestAddRefusesTransactionRowIDs runs a writer whose clock reads 1899, so
// that its window takes ids before 1900, the range of Transactions' row
// ids: Add and Apply refuse them (crdt.ErrInvalidTxnID) without writing,
// and the account stays mergeable by Accounts.
func TestAddRefusesTransactionRowIDs(t *testing.T) {
	ctx := context.Background()
	s := newSpy()
	now := t0
	l, err := balance.New(s, balance.Options{Clock: func() time.Time { return now }})
	require.NoError(t, err)
	require.NoError(t, l.Add(ctx, acct, timeid.New(now), 5))
	now = time.Date(1899, 12, 31, 23, 59, 0, 0, time.UTC)
	early := timeid.New(now)
	require.True(t, balance.IsTxnRowID(early))
	require.ErrorIs(t, l.Add(ctx, acct, early, 3), crdt.ErrInvalidTxnID)
	var b balance.Batch
	b.Add(acct, early, 3)
	require.ErrorIs(t, l.Apply(ctx, &b), crdt.ErrInvalidTxnID)
	require.Len(t, s.Stored(acct), 1)
	now = t0.Add(time.Second)
	_, err = l.Merge(ctx, acct)
	require.NoError(t, err)
	bal, err := l.Balance(ctx, acct)
	require.NoError(t, err)
	require.Equal(t, int64(5), bal)
}
