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

// TestBookResumesRefusedGiveUp (found by a review): the schedule of
// TestGraceDropKeepsGiveUp with c a Book (MaxOpen 1) and no RetiredGrace
// drop: c's refused give-up (ahead of the store, nothing unwritten that
// keeps a Ledger open) is evicted by a write to another key. The Book
// remembers the version last known stored, so the key's next Ledger keeps
// the incarnation, gives its copy up again and writes it: x counts once.
// When it remembered the version of the state ahead of the store, the
// next Ledger took a new incarnation, and the old entry kept its ceded
// copy, which counted again once b's held write (forgetting x) landed: +5.
func TestBookResumesRefusedGiveUp(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	lb, lc := newLane(mem), newLane(mem)
	b, err := ledger.New(lb, advKey, limitOptions(clock, "b", -1))
	require.NoError(t, err)
	book, err := ledger.NewBook(lc, ledger.BookOptions{Options: limitOptions(clock, "c", 24*time.Hour), MaxOpen: 1})
	require.NoError(t, err)
	run := &limitRun{t: t}
	cupd := func(x crdt.TxnID, amount int64) {
		t.Helper()
		res, err := book.Update(ctx, advKey, x, amount)
		require.NoError(t, err, x)
		require.Equal(t, tpncounter.Applied, res.Outcome, x)
		run.want += amount
	}
	run.upd(b, "open", 1000, tpncounter.Applied)
	cupd("c0", 1)

	g := lc.slowNext(newSlowPut())
	done := make(chan slowAnswer, 1)
	go func() { res, err := book.Update(ctx, advKey, "x", 5); done <- slowAnswer{res.Result, err} }()
	<-g.held
	run.upd(b, "x", 5, tpncounter.Applied)
	run.upd(b, "y0", 1, tpncounter.Applied)
	lb.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	_, err = b.Update(ctx, "y1", 1) // forgets x; held in flight
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	lb.plan.set(nil, nil, nil)
	ans := landSlow(t, g, done)
	t.Logf("c's x: %v owner %+v", ans.r.Outcome, ans.r.Owner)
	require.Equal(t, run.want, stored(t, mem).Value())

	lc.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	res, err := book.Update(ctx, advKey, "r", 7) // gives x up; refused: ahead
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	lc.plan.set(nil, nil, nil)
	cw := res.Writer
	u, w := ledger.BookHolding(book, advKey)
	t.Logf("c's ledger %s holds unwritten %v watching %v", cw, u, w)

	_, err = book.Update(ctx, "other", "o1", 1) // evicts advKey's Ledger
	require.NoError(t, err)
	res, err = book.Update(ctx, advKey, "c1", 1)
	require.NoError(t, err)
	run.want++
	t.Logf("c writes as %s (was %s)", res.Writer, cw)
	require.NoError(t, lb.Deliver(0)) // b's y1 lands: b forgets x
	lb.DropHeld()
	run.want++
	_, err = b.Find(ctx)
	require.NoError(t, err)
	run.settle(b)
	_, err = book.Find(ctx, advKey)
	require.NoError(t, err)
	st := stored(t, mem)
	ow, _ := st.Owner("x")
	t.Logf("old c %s holds %v; x's owner %+v", cw, maps.Collect(st.Transactions(cw)), ow)
	require.Equal(t, run.want, st.Value(), "each transaction counted once")
}
