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

// TestGraceDropGiveUpControl is TestGraceDropKeepsGiveUp without b's held
// write: c gives its copy of x up to a's in a refused write and reads again
// 70 minutes later (RetiredGrace 2h). x counts once, and r's pass retires
// c's old entries as their copies meet a's.
func TestGraceDropGiveUpControl(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	la, lc := newLane(mem), newLane(mem)
	a := watchLedger(t, la, clock, "a", -1)
	o := ledger.Options{Actor: "c", RetireAfter: 24 * time.Hour, RetiredGrace: 2 * time.Hour, RetryCount: 1,
		Backoff: ledger.Backoff{Initial: -1}, MaxGroup: 1, Counter: tpncounter.Options{HistoryLength: 2, FoldedLength: 2}}
	clock.opts(&o)
	c, err := ledger.New(lc, advKey, o)
	require.NoError(t, err)
	require.Less(t, a.Writer(), c.Writer())
	run := &limitRun{t: t}
	upd := run.upd
	upd(c, "open", 1000, tpncounter.Applied)

	g, done := slowUpdate(la, a, "x", -1)
	upd(c, "x", -1, tpncounter.Applied)
	landSlow(t, g, done)
	require.Equal(t, run.want, stored(t, mem).Value(), "x counted once while the copies meet")

	lc.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
	_, err = c.Update(ctx, "y", 5) // gives x up (record x -> a, copy out); refused: ahead
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	lc.plan.set(nil, nil, nil)
	cw := c.Writer()

	clock.Add(70 * time.Minute)
	upd(c, "c1", 1, tpncounter.Applied)
	t.Logf("c writes as %s (was %s)", c.Writer(), cw)
	for i := range 20 {
		upd(a, crdt.TxnID(fmt.Sprintf("d%d", i)), -1, tpncounter.Applied)
	}
	run.settle(a, c)
	r := watchLedger(t, mem, clock, "r", time.Hour)
	retired := -1
	for i := range 30 {
		upd(r, crdt.TxnID(fmt.Sprintf("r%d", i)), 1, tpncounter.Applied)
		if _, live := maps.Collect(stored(t, mem).LiveActors())[cw]; !live && retired < 0 {
			retired = i
		}
		clock.Add(20 * time.Minute)
	}
	t.Logf("c's entry %s retired at r's write %d (-1: not in 10 hours)", cw, retired)
	st := stored(t, mem)
	_, oldLive := maps.Collect(st.LiveActors())[cw]
	held := maps.Collect(st.Transactions(cw))
	ow, _ := st.Owner("x")
	t.Logf("old c live %v holds %v; owner %+v; stored %d want %d", oldLive, held, ow, st.Value(), run.want)
	require.Equal(t, run.want, st.Value(), "each transaction counted once")
	require.GreaterOrEqual(t, retired, 0, "c's idle entry retires")
}
