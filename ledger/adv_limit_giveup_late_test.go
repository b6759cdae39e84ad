package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitGiveUpNamesALateCopy shows the limit SPEC.md 6.11 states under
// "Concurrent copies" for a give-up that records a late copy as the one
// that counts while the writer that recorded x first still holds it and
// later counts it (what TestPromiseConcurrentDeliveriesLostAcks meets
// about once in 200 runs). History and folded record hold one
// transaction; c groups up to two calls in a write; a < b < c.
//
//  1. a and b each apply x (15) from a read without any copy of x; both
//     puts are slow.
//  2. c credits o, x and p: x is recorded naming c, and c's stored entry
//     lists it (folded o, history x p).
//  3. c credits w1 and w2 in one write (they queue while p's put is in
//     flight): from a read without a's or b's copy its compaction folds
//     x and p and forgets o and x (x is now only in c's total). That put
//     is slow.
//  4. a's put lands; a settles: the record names c, whose stored entry
//     lists x, so the copies meet and a watches its copy. b's the same.
//  5. b reads (Find): the owner of x in its state is a's copy (least id),
//     so b gives its own up (step 6), recording the owner's copy: c's
//     record names c, which lists x there (met, not counted), so the
//     record names a.
//  6. c's put lands. a's watch finds c's entry without x and reads the
//     records: one names a, so a keeps its copy. x counts twice, in c's
//     total and in a's history, after every ledger reads and writes
//     again.
//
// Controls: when c's put lands before b gives up, b finds that c counted
// x and its record names c; without b, a's watch finds only c's record.
// Both count x once: a takes its copy out.
func TestLimitGiveUpNamesALateCopy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cFirst bool // c's forgetting put lands before b gives up
		noB    bool // b never applies x
		double bool
	}{
		{name: "b gives up to a late copy while c forgets x", double: true},
		{name: "c's put lands before b gives up", cFirst: true},
		{name: "no third writer", noB: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, a := limitLedger(t, mem, clock, "a", -1)
			lb, b := limitLedger(t, mem, clock, "b", -1)
			lc := newLane(mem)
			opts := limitOptions(clock, "c", -1)
			opts.MaxGroup = 2
			c, err := ledger.New(lc, advKey, opts)
			require.NoError(t, err)
			require.Less(t, a.Writer(), b.Writer())
			require.Less(t, b.Writer(), c.Writer())
			run := &limitRun{t: t}

			// 1.
			ga, adone := slowUpdate(la, a, "x", 15)
			var gb *slowPut
			var bdone <-chan slowAnswer
			if !tc.noB {
				gb, bdone = slowUpdate(lb, b, "x", 15)
			}
			// 2.
			run.upd(c, "o", 1, tpncounter.Applied)
			run.upd(c, "x", 15, tpncounter.Applied)
			gp, pdone := slowUpdate(lc, c, "p", 1)
			// 3.
			group := make(chan slowAnswer, 2)
			for _, y := range []crdt.TxnID{"w1", "w2"} {
				go func() { r, err := c.Update(ctx, y, 1); group <- slowAnswer{r, err} }()
			}
			waitFor(t, func() bool { return ledger.Queued(c) >= 2 }, "w1 and w2 queued on c")
			gc := lc.slowNext(newSlowPut())
			require.Equal(t, tpncounter.Applied, landSlow(t, gp, pdone).r.Outcome)
			run.want++
			<-gc.held
			e, _ := stored(t, mem).Positive().Entry(c.Writer())
			require.Equal(t, []crdt.TxnID{"x", "p"}, txnIDs(e.History), "c's stored entry lists x")
			landC := func() {
				close(gc.land)
				<-gc.landed
				close(gc.ack)
				for range 2 {
					ans := <-group
					require.NoError(t, ans.err)
					require.Equal(t, tpncounter.Applied, ans.r.Outcome)
				}
				run.want += 2
				require.False(t, holdsTxn(stored(t, mem), c.Writer(), "x"), "c forgot x")
			}
			// 4.
			ans := landSlow(t, ga, adone)
			t.Logf("a's call of x: %v owner %+v", ans.r.Outcome, ans.r.Owner)
			if !tc.noB {
				ans = landSlow(t, gb, bdone)
				t.Logf("b's call of x: %v owner %+v", ans.r.Outcome, ans.r.Owner)
			}
			if tc.cFirst {
				landC()
			}
			// 5.
			if !tc.noB {
				_, err := b.Find(ctx)
				require.NoError(t, err)
			}
			// 6.
			if !tc.cFirst {
				landC()
			}
			run.settle(a, b, c)
			t.Logf("x's records name %v", recordWriters(t, mem, "x"))
			if tc.double {
				require.Contains(t, recordWriters(t, mem, "x"), a.Writer(), "b's give-up record names a")
				require.True(t, holdsTxn(stored(t, mem), a.Writer(), "x"), "a kept its copy")
				require.Equal(t, run.want+15, stored(t, mem).Value(), "the stated limit: x counts twice")
				return
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

func txnIDs(txns []tpncounter.Txn) []crdt.TxnID {
	out := make([]crdt.TxnID, len(txns))
	for i, x := range txns {
		out[i] = x.ID
	}
	return out
}
