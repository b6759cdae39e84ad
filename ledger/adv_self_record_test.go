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

// TestSelfRecordAtStoredVersion is the delay a review found: q's late
// copy of x meets l's (l's counts); both go idle. l's pass records q's x
// naming l, and that write is refused, so l stops. When the record named l
// at the version of the state being written it stayed above every state:
// m's passes found q's records newer than their reads (as for a give-up not
// yet written) and did not check q, so the pair {l, q}, which retires
// together, waited for the record to leave the retry window (24 h). The
// record names l at its version in the state read, which the store holds
// (SPEC.md 6.9): the pair retires within about an hour, x counted once.
func TestSelfRecordAtStoredVersion(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	ll, lq := newLane(mem), newLane(mem)
	l := watchLedger(t, ll, clock, "l", time.Hour)
	q := watchLedger(t, lq, clock, "q", -1)
	m := watchLedger(t, mem, clock, "m", time.Hour)
	require.Less(t, l.Writer(), q.Writer())
	run := &limitRun{t: t}
	upd := run.upd
	upd(l, "open", 1000, tpncounter.Applied)

	g, done := slowUpdate(lq, q, "x", 5)
	upd(l, "x", 5, tpncounter.Applied)
	ans := landSlow(t, g, done)
	require.Equal(t, tpncounter.Duplicate, ans.r.Outcome)
	clock.Add(8 * time.Minute)
	upd(l, "l1", 1, tpncounter.Applied) // l's pass first sees q

	clock.Add(61 * time.Minute)
	vBefore := stored(t, mem).Version(l.Writer())
	// l's pass records q (x naming l at the version about to be written);
	// the write is refused, and l's process ends.
	ll.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err := l.Update(ctx, "l2", 1)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	ll.plan.set(nil, nil, nil)
	sibs, _, err := mem.Fetch(ctx, ledger.RecordKey(advKey, "x"))
	require.NoError(t, err)
	for _, b := range sibs {
		var r ledger.Record
		require.NoError(t, r.UnmarshalBinary(b))
		require.LessOrEqual(t, r.Version, vBefore, "x's record %+v names l above its stored version", r)
	}
	require.Equal(t, vBefore, stored(t, mem).Version(l.Writer()), "l's write was refused")

	live := func() (bool, bool) {
		la := maps.Collect(stored(t, mem).LiveActors())
		_, lLive := la[l.Writer()]
		_, qLive := la[q.Writer()]
		return lLive, qLive
	}
	retiredAt := -1
	for h := 0; h < 30; h++ {
		for i := range 3 { // m writes through the hour
			upd(m, crdt.TxnID(fmt.Sprintf("m%d.%d", h, i)), 1, tpncounter.Applied)
			clock.Add(21 * time.Minute)
		}
		if lLive, qLive := live(); !lLive && !qLive {
			retiredAt = h
			break
		}
	}
	t.Logf("l and q retired after m's hour %d (-1: not in 30 hours)", retiredAt)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
	require.GreaterOrEqual(t, retiredAt, 0, "l and q retire")
	require.LessOrEqual(t, retiredAt, 2, "about an hour after l's pass, not the retry window")
}
