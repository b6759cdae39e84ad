package ledger_test

import (
	"context"
	"fmt"
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

// TestGraceDropKeepsGiveUp (found by a review): c's copy of x lands after
// b's (b, the smaller id, folded x: b's copy counts), while b's write of
// y1, computed before c's copy landed and forgetting x (H = F = 1), is
// held in flight. c gives its copy up (record x -> b, taken out: ahead of
// the store) in a write that is refused, and reads again 70 minutes later
// (RetiredGrace 2h). Then b's held write lands. Dropping its state, c
// keeps its incarnation when its read shows the version last known stored
// (SPEC.md 6.10): it gives the copy up again and writes it, x counting
// once. Taking a new incarnation instead left the ceded copy in the old
// entry, which no one takes out, and it counted again once b forgot x: +5.
func TestGraceDropKeepsGiveUp(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	lb, lc := newLane(mem), newLane(mem)
	b, err := ledger.New(lb, advKey, limitOptions(clock, "b", -1))
	require.NoError(t, err)
	c := graceLedger(t, lc, clock, "c")
	require.Less(t, b.Writer(), c.Writer())
	run := &limitRun{t: t}
	run.upd(b, "open", 1000, tpncounter.Applied)
	run.upd(c, "c0", 1, tpncounter.Applied)

	g, done := slowUpdate(lc, c, "x", 5) // c read before b's copy: applies x
	run.upd(b, "x", 5, tpncounter.Applied)
	run.upd(b, "y0", 1, tpncounter.Applied) // x folded in b's entry
	lb.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
	_, err = b.Update(ctx, "y1", 1) // forgets x; held in flight
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	lb.plan.set(nil, nil, nil)
	ans := landSlow(t, g, done)
	t.Logf("c's x: %v owner %+v", ans.r.Outcome, ans.r.Owner)
	ow, _ := stored(t, mem).Owner("x")
	t.Logf("x's owner in the store: %+v", ow)
	require.Equal(t, run.want, stored(t, mem).Value(), "x counted once while the copies meet")

	lc.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = c.Update(ctx, "r", 7) // gives x up (record x -> b); refused: ahead
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	lc.plan.set(nil, nil, nil)
	cw := c.Writer()

	clock.Add(70 * time.Minute)
	run.upd(c, "c1", 1, tpncounter.Applied)
	t.Logf("c writes as %s (was %s)", c.Writer(), cw)
	require.NoError(t, lb.Deliver(0)) // b's y1 lands: b forgets x
	lb.DropHeld()
	run.want++ // y1 landed
	_, err = b.Find(ctx)
	require.NoError(t, err)
	run.settle(b, c)
	st := stored(t, mem)
	_, oldLive := maps.Collect(st.LiveActors())[cw]
	ow, _ = st.Owner("x")
	t.Logf("old c %s live %v holds %v; x's owner %+v", cw, oldLive, maps.Collect(st.Transactions(cw)), ow)
	require.Equal(t, run.want, st.Value(), "each transaction counted once")
	_ = fmt.Sprint
}
