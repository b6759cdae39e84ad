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

// TestLimitSelfRecordDelaysRetirement shows the delay SPEC.md 6.9 states
// for a record newer than the state a pass reads (found by a review). q's
// late copy of x meets l's (l's counts); both go idle. l's pass records
// q's x naming l at the version of the state it writes, but that write is
// refused and l stops: the record names l above its stored version. m's
// passes then find q's records newer than their reads (as for a give-up
// not yet written) and do not check q, so the pair {l, q}, which retires
// together, waits until the record leaves the retry window (24 h), instead
// of about an hour. x counts once throughout.
func TestLimitSelfRecordDelaysRetirement(t *testing.T) {
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
		t.Logf("x's record: %+v", r)
	}
	t.Logf("l's stored version %d", stored(t, mem).Version(l.Writer()))
	_ = vBefore

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
	require.Greater(t, retiredAt, 3, "the stated delay: l and q wait for the record to leave the window")
	require.LessOrEqual(t, retiredAt, 25, "at most the retry window")
}
