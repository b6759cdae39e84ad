package ledger

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestFlushWritesTheRecordItsTakeOutOwes drives a flush whose owed record
// takes a late copy out, and whose take-out's write then owes a record of
// its own (SPEC.md 6.11 step 3, owed records). History and Folded length 1:
//
//  1. a's credit of x is in doubt: its put is held in flight, its retry
//     lost. The caller retries x on b, which applies and records it (the
//     record names b) and credits y1..y3, forgetting x.
//  2. a's held put lands: a's copy of x is late, counting x twice.
//  3. a's credit of w reads the account, finds its pending write landed
//     and owes x's record, naming a. Its put is lost and its retry lands
//     with the acknowledgement lost: a pending write holding w, unacked.
//  4. a's credit of z flushes. Confirming x's owed record reads b's record
//     and settles: b counted x, so a takes its copy out and writes that
//     back at once. That write carries the pending write and lands, so a
//     learns that w landed: w's record is owed, after the round that
//     wrote x's.
//
// The flush must write w's record too (a further round), so the credit of
// z applies. Written in one round, it failed unavailable ("transaction
// records of earlier writes are not yet written") on a healthy store.
func TestFlushWritesTheRecordItsTakeOutOwes(t *testing.T) {
	const key = "k"
	ctx := context.Background()
	mem := memory.NewSiblings()
	fs := faulty.NewSiblings(mem, faulty.Options{})
	copts := tpncounter.Options{HistoryLength: 1, FoldedLength: 1}
	mk := func(actor crdt.ActorID) *Ledger {
		l, err := New(fs, key, Options{Actor: actor, RetryCount: 1, Backoff: Backoff{Initial: -1},
			Counter: copts, MaxGroup: 1, RetireAfter: -1})
		require.NoError(t, err)
		return l
	}
	a, b := mk("a"), mk("b")
	// accountPuts scripts the faults of the next Puts of the account key.
	accountPuts := func(faults ...faulty.Fault) {
		fs.SetPolicy(counterCalls(faulty.Only(faulty.Script(faults...), faulty.MethodPut)))
	}
	credit := func(l *Ledger, x crdt.TxnID, amount int64) {
		t.Helper()
		r, err := l.Credit(ctx, x, amount)
		require.NoError(t, err, "%s: %s", l.Actor(), x)
		require.Equal(t, tpncounter.Applied, r.Outcome, "%s: %s", l.Actor(), x)
	}

	// 1.
	accountPuts(faulty.Hold, faulty.Lose)
	_, err := a.Credit(ctx, "x", 100)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	accountPuts()
	credit(b, "x", 100)
	for _, y := range []crdt.TxnID{"y1", "y2", "y3"} {
		credit(b, y, 1)
	}
	st, err := joinedAt(mem, key, copts)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Status(tpncounter.Unknown), st.Status("x"), "b forgot x")

	// 2.
	require.Equal(t, 1, fs.Held())
	require.NoError(t, fs.DeliverAll())

	// 3.
	accountPuts(faulty.Lose, faulty.LoseAck)
	_, err = a.Credit(ctx, "w", 1)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	accountPuts()
	require.True(t, a.cyc.Pending, "a's write of w is pending")
	require.Equal(t, []crdt.TxnID{"w"}, slices.Sorted(maps.Keys(a.unacked)), "w is unacknowledged")
	require.Equal(t, []crdt.TxnID{"x"}, slices.Sorted(maps.Keys(a.unindexed)), "x's record is owed")
	require.Equal(t, a.Writer(), a.unindexed["x"].Writer, "x's owed record names a's late copy")

	// 4. The take-out's write is the call's first account Put: at the
	// call after it, w's record is owed and x's no longer.
	var afterTakeOut []crdt.TxnID
	puts := 0
	fs.SetHook(func(_ context.Context, c faulty.Call, after bool) error {
		switch {
		case after && c.Method == faulty.MethodPut && !IsRecordKey(c.Key):
			puts++
		case !after && puts == 1 && afterTakeOut == nil:
			// On the goroutine of a's call, which holds a.mu.
			afterTakeOut = slices.Sorted(maps.Keys(a.unindexed))
		}
		return nil
	})
	r, err := a.Credit(ctx, "z", 1)
	fs.SetHook(nil)
	require.NoError(t, err, "the owed records are written and the call runs")
	require.Equal(t, tpncounter.Applied, r.Outcome)
	require.Equal(t, []crdt.TxnID{"w"}, afterTakeOut, "the take-out's write owes w's record")
	require.Empty(t, a.unindexed, "every owed record is written")
	require.Empty(t, a.unacked)
	require.False(t, a.cyc.Pending)

	// x counts once (b's), and every transaction's record is written.
	want := int64(100 + 3 + 1 + 1)
	st, err = joinedAt(mem, key, copts)
	require.NoError(t, err)
	require.Equal(t, want, st.Value(), "each transaction counted once")
	v, err := a.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, want, v)
	for _, rec := range []struct {
		x      crdt.TxnID
		writer crdt.ActorID
	}{{"x", b.Writer()}, {"y1", b.Writer()}, {"y2", b.Writer()}, {"y3", b.Writer()}, {"w", a.Writer()}, {"z", a.Writer()}} {
		idx, err := a.lookup(ctx, rec.x, a.now())
		require.NoError(t, err)
		var writers []crdt.ActorID
		for _, r := range idx.records {
			writers = append(writers, r.Writer)
		}
		require.Equal(t, []crdt.ActorID{rec.writer}, writers, "the records of %s", rec.x)
	}
}
