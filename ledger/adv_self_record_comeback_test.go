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

// TestSelfRecordComeback (found by a review): r's late copy of y meets
// l's (l's counts, l < r); l's pass, in a Find that compacts l's entry,
// records r's y naming l, and that Find's put is refused. Then q's late
// copy of t lands (q < l: q's copy counts); l does not read it. m retires
// the idle group {l, q, r} at l's stored version within the hour: t is
// counted by q's retired total, l's copy leaving without counting. When l
// writes again, two hours later, t counts once: a refused state, with no
// transaction to take back, is still ahead of the store, so l reads apart,
// finds its entry retired and takes a new incarnation (SPEC.md 6.9).
// Before, the refused state stayed l's Local, read in place: its newer,
// never-written entry won over the retired one and t counted twice.
//
// Subtests: "refused find" (the finding); "landed find", a control; "held
// update", l's pass in an Update whose put is held in flight past m's
// retirement, then delivered: the limit SPEC.md 6.11 states as
// "Retirement of a writer whose write is in doubt" (t counts twice).
func TestSelfRecordComeback(t *testing.T) {
	for _, mode := range []string{"refused find", "held update", "landed find"} {
		t.Run(mode, func(t *testing.T) { selfRecordComeback(t, mode) })
	}
}

func selfRecordComeback(t *testing.T, mode string) {
	held := mode == "held update"
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	ll, lq, lr := newLane(mem), newLane(mem), newLane(mem)
	l := watchLedger(t, ll, clock, "l", time.Hour)
	q := watchLedger(t, lq, clock, "b", -1)
	r := watchLedger(t, lr, clock, "r", -1)
	m := watchLedger(t, mem, clock, "m", time.Hour)
	require.Less(t, q.Writer(), l.Writer())
	require.Less(t, l.Writer(), r.Writer())
	run := &limitRun{t: t}
	upd := run.upd
	upd(l, "open", 1000, tpncounter.Applied)

	gr, doneR := slowUpdate(lr, r, "y", 5) // r read before l's y
	gq, doneQ := slowUpdate(lq, q, "t", 7) // q read before l's t
	upd(l, "y", 5, tpncounter.Applied)
	upd(l, "t", 7, tpncounter.Applied)
	ans := landSlow(t, gr, doneR)
	require.Equal(t, tpncounter.Duplicate, ans.r.Outcome, "r's copy of y meets l's")
	clock.Add(8 * time.Minute)
	upd(l, "l1", 1, tpncounter.Applied) // l's pass first sees r

	clock.Add(61 * time.Minute)
	vBefore := stored(t, mem).Version(l.Writer())
	var err error
	if held {
		// l's pass runs in an Update whose put is held in flight (in
		// doubt), then refused; l stops until its held put lands.
		ll.plan.set([]faulty.Fault{faulty.Hold, faulty.Refuse}, nil, nil)
		_, err = l.Update(ctx, "l2h", 1)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	} else if mode == "landed find" {
		_, err = l.Find(ctx)
		require.NoError(t, err)
		vBefore = stored(t, mem).Version(l.Writer())
	} else {
		ll.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
		_, err = l.Find(ctx) // compacts l's entry; its pass records r's y naming l
		require.ErrorIs(t, err, crdt.ErrUnavailable)
	}
	ll.plan.set(nil, nil, nil)
	require.Equal(t, vBefore, stored(t, mem).Version(l.Writer()), "l's write did not land")
	sibs, _, err := mem.Fetch(ctx, ledger.RecordKey(advKey, "y"))
	require.NoError(t, err)
	for _, b := range sibs {
		var rec ledger.Record
		require.NoError(t, rec.UnmarshalBinary(b))
		t.Logf("y's record %+v (l stored at %d)", rec, vBefore)
	}

	ans = landSlow(t, gq, doneQ) // q's late copy of t lands after l's Find
	require.Equal(t, tpncounter.Duplicate, ans.r.Outcome, "q's copy of t meets l's")
	own, _ := stored(t, mem).Owner("t")
	require.Equal(t, q.Writer(), own.Actor, "q's copy of t counts")
	require.Equal(t, run.want, stored(t, mem).Value())

	retiredAt := -1
	for h := 0; h < 3; h++ {
		for i := range 3 {
			upd(m, crdt.TxnID(fmt.Sprintf("m%d.%d", h, i)), 1, tpncounter.Applied)
			clock.Add(21 * time.Minute)
		}
		la := maps.Collect(stored(t, mem).LiveActors())
		_, lLive := la[l.Writer()]
		_, qLive := la[q.Writer()]
		_, rLive := la[r.Writer()]
		if retiredAt < 0 && !lLive && !qLive && !rLive {
			retiredAt = h
		}
	}
	t.Logf("l, q and r retired after m's hour %d (-1: not in 3 hours)", retiredAt)
	require.Equal(t, run.want, stored(t, mem).Value(), "after m's hours")
	limit := int64(0)
	if held {
		require.NoError(t, ll.Siblings.DeliverAll())
		run.want++ // l2h lands
		limit = 7  // the stated limit: t counts twice
	}

	upd(l, "l2", 1, tpncounter.Applied) // l comes back
	require.Equal(t, run.want+limit, stored(t, mem).Value(), "after l writes again")
	run.settle(l, q, r, m)
	for _, led := range []*ledger.Ledger{l, q, r, m} {
		res, err := led.Update(ctx, "t", 7)
		require.NoError(t, err)
		require.True(t, isRecognised(res.Outcome), "a retry of t on %s: %v", led.Actor(), res.Outcome)
	}
	require.Equal(t, run.want+limit, stored(t, mem).Value(), "each transaction counted once")
}
