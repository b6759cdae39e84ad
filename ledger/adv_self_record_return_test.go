package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestSelfRecordThenWriterReturns (from a review): the schedule of
// TestSelfRecordAtStoredVersion (q's late copy of x meets l's, both idle,
// l's pass records q's x naming l, l's write fails), with the failing
// write refused, lost, held in flight and delivered late, or a Find; then
// m writes until the pair retires (or 30 hours), l comes back, every
// ledger writes again, and x is retried everywhere.
func TestSelfRecordThenWriterReturns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		faults []faulty.Fault
		find   bool
		hold   bool
	}{
		{name: "refused", faults: []faulty.Fault{faulty.Refuse, faulty.Refuse}},
		{name: "lost", faults: []faulty.Fault{faulty.Lose, faulty.Refuse}},
		{name: "held then delivered", faults: []faulty.Fault{faulty.Hold, faulty.Refuse}, hold: true},
		{name: "lose-ack", faults: []faulty.Fault{faulty.LoseAck, faulty.Refuse}},
		{name: "find refused", faults: []faulty.Fault{faulty.Refuse, faulty.Refuse}, find: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mp := newMetPair(t, nil)
			mem, clock, ll, l, q, m, run := mp.mem, mp.clock, mp.ll, mp.l, mp.q, mp.m, mp.run

			clock.Add(61 * time.Minute)
			vBefore := stored(t, mem).Version(l.Writer())
			ll.plan.set(tc.faults, nil, nil)
			var err error
			if tc.find {
				_, err = l.Find(ctx)
			} else {
				var res ledger.Result
				res, err = l.Update(ctx, "l2", 1)
				t.Logf("l2: %+v %v", res, err)
			}
			t.Logf("l's failing write: %v", err)
			ll.plan.set(nil, nil, nil)
			lost := stored(t, mem).Version(l.Writer()) == vBefore
			l2in := false
			if !lost && !tc.find {
				run.want++ // l2 landed (lose-ack)
				l2in = true
			}
			t.Logf("l at %d stored (before %d)", stored(t, mem).Version(l.Writer()), vBefore)

			retiredAt := retiredAfter(t, run, m, mem, clock, 30, l, q)
			t.Logf("retired after m's hour %d", retiredAt)
			if tc.hold {
				require.NoError(t, ll.Siblings.DeliverAll())
				if !tc.find {
					run.want++ // l2 lands now
					l2in = true
				}
				t.Logf("held write delivered: l at %d", stored(t, mem).Version(l.Writer()))
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "after the retirement")
			// l comes back.
			res, err := l.Update(ctx, "l3", 1)
			t.Logf("l3: %+v %v (writer %s)", res, err, l.Writer())
			if err == nil && res.Outcome == tpncounter.Applied {
				run.want++
			}
			if !l2in && !tc.find && stored(t, mem).Value() == run.want+1 {
				run.want++ // l2 landed with l's pending write
				l2in = true
			}
			run.settle(l, q, m)
			for _, x := range []crdt.TxnID{"x", "l2"} {
				for _, led := range []*ledger.Ledger{l, q, m} {
					r, err := led.Update(ctx, x, map[crdt.TxnID]int64{"x": 5, "l2": 1}[x])
					require.NoError(t, err)
					if r.Outcome == tpncounter.Applied {
						require.Equal(t, crdt.TxnID("l2"), x, "x applied again on %s", led.Actor())
						require.False(t, l2in, "l2 applied again on %s", led.Actor())
						l2in = true
						run.want++
					}
				}
			}
			run.settle(l, q, m)
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

// TestSelfRecordWhileAhead (found by a review): as
// TestSelfRecordAtStoredVersion, but a minute after l's pass that first
// sees q, l's Find (which compacts its entry: a newer version) is refused,
// so l's state is ahead of the store. l's next write passes, recording q's
// x naming l, and is refused too. The record names l at its version last
// known stored, not at the version of the state it writes (above every
// state, which made the pair {l, q} wait for the retry window, ~23 h): the
// pair retires within about an hour, x counted once.
func TestSelfRecordWhileAhead(t *testing.T) {
	ctx := context.Background()
	mp := newMetPair(t, nil)
	mem, clock, ll, l, q, m, run := mp.mem, mp.clock, mp.ll, mp.l, mp.q, mp.m, mp.run

	clock.Add(time.Minute)
	vBefore := stored(t, mem).Version(l.Writer())
	ll.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err := l.Find(ctx) // no pass due; compacts l's entry; refused
	require.ErrorIs(t, err, crdt.ErrUnavailable)

	clock.Add(60 * time.Minute)
	ll.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = l.Update(ctx, "l2", 1)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	ll.plan.set(nil, nil, nil)
	require.Equal(t, vBefore, stored(t, mem).Version(l.Writer()), "l's writes were refused")
	above := recordAbove(t, mem, "x", l, vBefore)

	retiredAt := retiredAfter(t, run, m, mem, clock, 30, l, q)
	t.Logf("l and q retired after m's hour %d", retiredAt)
	require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
	require.False(t, above, "a record of x names l above its stored version")
	require.GreaterOrEqual(t, retiredAt, 0, "l and q retire")
	require.LessOrEqual(t, retiredAt, 2, "about an hour after l's pass")
}
