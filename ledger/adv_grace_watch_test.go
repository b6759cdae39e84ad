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

// TestGraceDropKeepsWatch (found by a review): a's copy of x lands after
// b's and counts (a's id is smaller, b's copy is in its history), so a
// watches it (met, SPEC.md 6.11 step 3). b's writes of y0 and y1, computed
// before a's copy landed (y1 forgets x: H = F = 1), are held in flight.
// a's next Update is refused (its state is ahead of the store), and a
// reads again 70 minutes later (RetiredGrace 2h). Then b's held writes
// land: b's total counts x. a kept its incarnation (its read shows the
// version last known stored) and its watch, finds b counted x and takes
// its copy out: once. Taking a new incarnation dropped the watch with the
// state, and the old entry's copy counted x a second time: +5.
func TestGraceDropKeepsWatch(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, lb := newLane(mem), newLane(mem)
	a := graceLedger(t, la, clock, "a")
	b, err := ledger.New(lb, advKey, limitOptions(clock, "b", -1))
	require.NoError(t, err)
	require.Less(t, a.Writer(), b.Writer())
	run := &limitRun{t: t}
	run.upd(b, "open", 1000, tpncounter.Applied)
	run.upd(a, "a0", 1, tpncounter.Applied)

	g, done := slowUpdate(la, a, "x", 5) // a read before b's copy: applies x
	run.upd(b, "x", 5, tpncounter.Applied)
	lb.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold, faulty.Hold, faulty.Hold}, nil, nil)
	_, err = b.Update(ctx, "y0", 1)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	_, err = b.Update(ctx, "y1", 1)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	lb.plan.set(nil, nil, nil)
	ans := landSlow(t, g, done)
	ow, _ := stored(t, mem).Owner("x")
	t.Logf("a's x: %v owner %+v; store's owner %+v", ans.r.Outcome, ans.r.Owner, ow)
	_, watching := ledger.Holding(a)
	t.Logf("a watching: %v", watching)
	require.Equal(t, run.want, stored(t, mem).Value(), "x counted once while the copies meet")

	la.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = a.Update(ctx, "r", 7) // refused: a's state is ahead
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	la.plan.set(nil, nil, nil)
	aw := a.Writer()

	clock.Add(70 * time.Minute)
	run.upd(a, "a1", 1, tpncounter.Applied)
	t.Logf("a writes as %s (was %s)", a.Writer(), aw)
	t.Logf("b holds %d puts", lb.Held())
	require.NoError(t, lb.DeliverAll()) // b's y0, y1 land: b forgets x
	lb.DropHeld()
	run.want += 2
	run.settle(a, b)
	st := stored(t, mem)
	_, oldLive := maps.Collect(st.LiveActors())[aw]
	ow, _ = st.Owner("x")
	t.Logf("old a %s live %v holds %v; x's owner %+v", aw, oldLive, maps.Collect(st.Transactions(aw)), ow)
	require.Equal(t, run.want, st.Value(), "each transaction counted once")
}
