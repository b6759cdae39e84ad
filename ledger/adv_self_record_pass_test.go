package ledger_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestSelfRecordAfterRefusedPassOnly (found by a review): the schedule of
// TestSelfRecordAtStoredVersion, plus an actor p idle since just before l
// opened, and two Finds of l a few seconds after l1: one lands (it
// compacts l's entry, no pass due), the next is refused; its pass retired
// p, and nothing of l's entry changed. That refused state is not ahead of
// the store (l's entry is as stored), so it is read in place: l's pass in
// the refused write l2 names l at the version the store holds, and the
// pair {l, q} retires within about an hour. When every refused state was
// ahead, no read held this one (the store never got p's retirement), and
// the pair waited for the retry window (~23 h).
func TestSelfRecordAfterRefusedPassOnly(t *testing.T) {
	ctx := context.Background()
	var p *ledger.Ledger
	mp := newMetPair(t, func(mp *metPair) {
		p = watchLedger(t, mp.mem, mp.clock, "p", -1)
		mp.run.upd(p, "p0", 7, tpncounter.Applied) // p goes idle: due for l's pass an hour later
		mp.clock.Add(51*time.Minute + 30*time.Second)
	})
	mem, clock, ll, l, q, m, run := mp.mem, mp.clock, mp.ll, mp.l, mp.q, mp.m, mp.run

	clock.Add(10 * time.Second)
	_, err := l.Find(ctx) // lands, no pass due: l's entry compacted
	require.NoError(t, err)
	vFound := stored(t, mem).Version(l.Writer())
	_, pLive := maps.Collect(stored(t, mem).LiveActors())[p.Writer()]
	require.True(t, pLive)
	clock.Add(50 * time.Second)
	ll.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = l.Find(ctx) // its pass retires p (an hour idle); nothing of l's entry changes; refused
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	ll.plan.set(nil, nil, nil)

	clock.Add(60 * time.Minute)
	vBefore := stored(t, mem).Version(l.Writer())
	require.Equal(t, vFound, vBefore)
	ll.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = l.Update(ctx, "l2", 1) // l's pass records q's x naming l; refused
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	ll.plan.set(nil, nil, nil)
	require.Equal(t, vBefore, stored(t, mem).Version(l.Writer()), "l's write was refused")
	above := recordAbove(t, mem, "x", l, vBefore)

	retiredAt := retiredAfter(t, run, m, mem, clock, 30, l, q)
	t.Logf("l and q retired after m's hour %d (-1: not in 30 hours)", retiredAt)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
	require.False(t, above, "a record of x names l above its stored version")
	require.GreaterOrEqual(t, retiredAt, 0, "l and q retire")
	require.LessOrEqual(t, retiredAt, 2, "about an hour after l's pass, not the retry window")
}
