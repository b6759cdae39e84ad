package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
	mp := newMetPair(t, nil)
	mem, clock, ll, l, q, m, run := mp.mem, mp.clock, mp.ll, mp.l, mp.q, mp.m, mp.run

	clock.Add(61 * time.Minute)
	vBefore := stored(t, mem).Version(l.Writer())
	// l's pass records q (x naming l at the version about to be written);
	// the write is refused, and l's process ends.
	ll.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err := l.Update(ctx, "l2", 1)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	ll.plan.set(nil, nil, nil)
	require.False(t, recordAbove(t, mem, "x", l, vBefore), "a record of x names l above its stored version")
	require.Equal(t, vBefore, stored(t, mem).Version(l.Writer()), "l's write was refused")

	retiredAt := retiredAfter(t, run, m, mem, clock, 30, l, q)
	t.Logf("l and q retired after m's hour %d (-1: not in 30 hours)", retiredAt)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
	require.GreaterOrEqual(t, retiredAt, 0, "l and q retire")
	require.LessOrEqual(t, retiredAt, 2, "about an hour after l's pass, not the retry window")
}

// retiredAfter has m write three times an hour, for at most hours hours,
// until none of ls is live; it returns that hour (-1: not within them).
func retiredAfter(t *testing.T, run *limitRun, m *ledger.Ledger, mem *memory.Siblings, clock *fakeClock, hours int, ls ...*ledger.Ledger) int {
	t.Helper()
	for h := range hours {
		for i := range 3 {
			run.upd(m, crdt.TxnID(fmt.Sprintf("m%d.%d", h, i)), 1, tpncounter.Applied)
			clock.Add(21 * time.Minute)
		}
		live := maps.Collect(stored(t, mem).LiveActors())
		if !slices.ContainsFunc(ls, func(l *ledger.Ledger) bool { _, ok := live[l.Writer()]; return ok }) {
			return h
		}
	}
	return -1
}

// recordAbove reports whether a stored record of txn names l's writer
// above version v.
func recordAbove(t *testing.T, mem *memory.Siblings, txn crdt.TxnID, l *ledger.Ledger, v uint64) bool {
	t.Helper()
	sibs, _, err := mem.Fetch(context.Background(), ledger.RecordKey(advKey, txn))
	require.NoError(t, err)
	above := false
	for _, b := range sibs {
		var r ledger.Record
		require.NoError(t, r.UnmarshalBinary(b))
		t.Logf("%s's record %+v (l stored at %d)", txn, r, v)
		above = above || r.Writer == l.Writer() && r.Version > v
	}
	return above
}

// metPair is the self-record tests' account: q's late copy of x meets l's
// (l's counts, l < q), then l writes l1, whose pass first sees q; m
// retires after an hour. before, unless nil, runs before l's first credit.
type metPair struct {
	mem     *memory.Siblings
	clock   *fakeClock
	ll      *lane
	l, q, m *ledger.Ledger
	run     *limitRun
}

func newMetPair(t *testing.T, before func(mp *metPair)) *metPair {
	t.Helper()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	ll, lq := newLane(mem), newLane(mem)
	mp := &metPair{mem: mem, clock: clock, ll: ll, run: &limitRun{t: t},
		l: watchLedger(t, ll, clock, "l", time.Hour), q: watchLedger(t, lq, clock, "q", -1), m: watchLedger(t, mem, clock, "m", time.Hour)}
	require.Less(t, mp.l.Writer(), mp.q.Writer())
	if before != nil {
		before(mp)
	}
	mp.run.upd(mp.l, "open", 1000, tpncounter.Applied)
	g, done := slowUpdate(lq, mp.q, "x", 5)
	mp.run.upd(mp.l, "x", 5, tpncounter.Applied)
	require.Equal(t, tpncounter.Duplicate, landSlow(t, g, done).r.Outcome)
	clock.Add(8 * time.Minute)
	mp.run.upd(mp.l, "l1", 1, tpncounter.Applied) // l's pass first sees q
	return mp
}
