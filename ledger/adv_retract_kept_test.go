package ledger_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestRetractLateKeptPastTheGrace: b's write of x is in doubt (held by the
// store); the caller retries x on c, which counts it, folds it and
// forgets it. b's next read takes x back out of its pending write (SPEC.md
// 6.11 step 4); that cycle's put is refused. The held put then lands, and
// b's next read finds the write landed as it was sent, while its state,
// with the retraction, is ahead of the store. b then only reads for more
// than RetiredGrace/2: the retraction is kept and written (6.9), not
// dropped with a new incarnation, which left b's old entry counting x
// beside c's total. Found by a review of the held-as-sent change.
func TestRetractLateKeptPastTheGrace(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	lb, b := limitLedger(t, mem, clock, "b", -1)
	_, c := limitLedger(t, mem, clock, "c", -1)
	run := &limitRun{t: t}
	run.upd(c, "open", 1000, tpncounter.Applied)

	// b's call of x: its put is held (in doubt).
	lb.plan.set(repeat(faulty.Hold, 2), nil, nil)
	_, err := b.Update(ctx, "x", 5)
	require.Error(t, err)
	require.True(t, b.Pending())
	require.Equal(t, 2, lb.Held())
	lb.plan.set(nil, nil, nil)

	// The caller retries x on c: applied; c folds it and forgets it.
	run.upd(c, "x", 5, tpncounter.Applied)
	for _, x := range []string{"c1", "c2", "c3"} {
		run.upd(c, crdt.TxnID(x), 1, tpncounter.Applied)
	}
	require.Equal(t, tpncounter.Unknown, stored(t, mem).Status("x"), "c forgot x")

	// b's call of y: its read takes x out of the pending write (counted
	// elsewhere); its put is refused.
	lb.plan.set(repeat(faulty.Refuse, 2), nil, nil)
	_, err = b.Update(ctx, "y", 7)
	require.Error(t, err)
	lb.plan.set(nil, nil, nil)

	// The held put lands late.
	require.NoError(t, lb.DeliverAll())
	t.Logf("after the late landing: value %d want %d", stored(t, mem).Value(), run.want)

	// b reads: the write as sent is held.
	_, err = b.Value(ctx)
	require.NoError(t, err)
	wb := b.Writer()
	t.Logf("b pending after the held read: %v", b.Pending())
	// b reads again, now and then, without writing.
	for range 3 {
		clock.Add(3 * 24 * time.Hour)
		_, err = b.Value(ctx)
		require.NoError(t, err)
	}
	run.upd(b, "u", 1, tpncounter.Applied)
	st := stored(t, mem)
	t.Logf("b's writer %s -> %s; old entry's live txns %v; value %d want %d", wb, b.Writer(), maps.Collect(st.Transactions(wb)), st.Value(), run.want)
	run.settle(b, c)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
}

// TestRetractLateKeptWhenRetired is TestRetractLateKeptPastTheGrace with
// b's debits x and w, and r retiring b an hour later at the stored
// version: b's next read shows its entry retired, and b writes its
// retraction, a newer version that wins over the retired entry, rather
// than continuing from the store as a new incarnation (6.9: a take-out of
// a copy another writer counted is kept).
func TestRetractLateKeptWhenRetired(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	lb, b := limitLedger(t, mem, clock, "b", -1)
	_, c := limitLedger(t, mem, clock, "c", -1)
	_, r := limitLedger(t, mem, clock, "r", time.Hour)
	run := &limitRun{t: t}
	run.upd(c, "open", 1000, tpncounter.Applied)

	for _, x := range []crdt.TxnID{"x", "w"} {
		lb.plan.set(repeat(faulty.Hold, 2), nil, nil)
		_, err := b.Update(ctx, x, -5)
		require.Error(t, err)
	}
	require.Equal(t, 4, lb.Held())
	lb.plan.set(nil, nil, nil)

	// The caller retries x on c: applied; c folds it and forgets it.
	run.upd(c, "x", -5, tpncounter.Applied)
	for _, x := range []crdt.TxnID{"c1", "c2", "c3"} {
		run.upd(c, x, -1, tpncounter.Applied)
	}
	require.Equal(t, tpncounter.Unknown, stored(t, mem).Status("x"), "c forgot x")

	// b's call of y takes x out of its pending write; its puts are refused.
	lb.plan.set(repeat(faulty.Refuse, 2), nil, nil)
	_, err := b.Update(ctx, "y", 7)
	require.Error(t, err)
	lb.plan.set(nil, nil, nil)

	// The held puts land late (w counts: it was never retried).
	require.NoError(t, lb.DeliverAll())
	run.want -= 5
	_, err = b.Value(ctx)
	require.NoError(t, err)
	t.Logf("b pending after its read: %v; value %d want %d", b.Pending(), stored(t, mem).Value(), run.want)

	// r sees b, then retires it an hour later.
	run.upd(r, "r1", 1, tpncounter.Applied)
	clock.Add(61 * time.Minute)
	run.upd(r, "r2", 1, tpncounter.Applied)
	wb := b.Writer()
	_, live := maps.Collect(stored(t, mem).LiveActors())[wb]
	t.Logf("b live after r2: %v; value %d want %d", live, stored(t, mem).Value(), run.want)

	run.upd(b, "u", 1, tpncounter.Applied)
	st := stored(t, mem)
	t.Logf("b's writer %s -> %s; value %d want %d", wb, b.Writer(), st.Value(), run.want)
	run.settle(b, c, r)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
}

// TestBookKeepsRetractLate is TestRetractLateKeptPastTheGrace in a Book of
// one open ledger: after the held read the Book keeps b's ledger (its
// retraction is not written) when a call on another key would evict it.
func TestBookKeepsRetractLate(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	lb := newLane(mem)
	book, err := ledger.NewBook(lb, ledger.BookOptions{MaxOpen: 1, Options: limitOptions(clock, "b", -1)})
	require.NoError(t, err)
	_, c := limitLedger(t, mem, clock, "c", -1)
	run := &limitRun{t: t}
	run.upd(c, "open", 1000, tpncounter.Applied)

	// b's call of x: its puts are held (in doubt).
	lb.plan.set(repeat(faulty.Hold, 2), nil, nil)
	_, err = book.Update(ctx, advKey, "x", 5)
	require.Error(t, err)
	require.Equal(t, 2, lb.Held())
	lb.plan.set(nil, nil, nil)

	// The caller retries x on c: applied; c folds it and forgets it.
	run.upd(c, "x", 5, tpncounter.Applied)
	for _, x := range []crdt.TxnID{"c1", "c2", "c3"} {
		run.upd(c, x, 1, tpncounter.Applied)
	}
	require.Equal(t, tpncounter.Unknown, stored(t, mem).Status("x"), "c forgot x")

	// b's call of y takes x out of its pending write; its puts are refused.
	lb.plan.set(repeat(faulty.Refuse, 2), nil, nil)
	_, err = book.Update(ctx, advKey, "y", 7)
	require.Error(t, err)
	lb.plan.set(nil, nil, nil)

	// The held puts land late; b reads: the write as sent is held.
	require.NoError(t, lb.DeliverAll())
	_, err = book.Value(ctx, advKey)
	require.NoError(t, err)
	t.Logf("after b's read: %+v", book.Stats())

	// A call on another key drops advKey's ledger when it holds nothing
	// the Book must keep.
	_, err = book.Update(ctx, "other", "o1", 1)
	require.NoError(t, err)
	t.Logf("after the other key: %+v", book.Stats())

	res, err := book.Update(ctx, advKey, "u", 1)
	require.NoError(t, err)
	run.want++
	t.Logf("u: %+v; value %d want %d", res, stored(t, mem).Value(), run.want)
	_, err = book.Find(ctx, advKey)
	require.NoError(t, err)
	run.settle(c)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
}
