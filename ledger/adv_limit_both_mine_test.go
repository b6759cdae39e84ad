package ledger_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitBothRecordsMineThenStaleForget shows the limit SPEC.md 6.11
// states under "Concurrent copies" for two records that each name their
// own writer (traced by a helper from TestOutboxRunsEachEffectOnce, which
// found it now and then). History and folded record hold one transaction.
//
// a and b apply x (7) at once, neither seeing the other's copy: b's put
// of x is slow (b read the account before a's copy landed); a lands and
// confirms its record (6.11 step 3: its lookup finds no record), but its
// record Put is paused; b's put lands, and b's confirming lookup finds no
// record either, so b writes a record naming b; then a's record, naming a,
// is written. Both calls answer applied, no ledger settles or watches
// (settling runs when the records name only other writers), and the
// copies meet in the counter: x counts once. Then b writes from account
// reads that lag (6.9) and do not show a's copy: b's compaction folds x
// into b's total and forgets it. a's copy still counts, a holds nothing to
// settle, and a judgement of its copy stops at the record naming a: x
// stays counted twice after every ledger reads and writes again.
//
// Controls: with b's reads fresh, b drops its copy in favour of a's (its
// give-up, step 6) and x counts once; with a's record written before
// b's confirming lookup, b settles, its copies meet, it watches, and x
// counts once.
func TestLimitBothRecordsMineThenStaleForget(t *testing.T) {
	for _, tc := range []struct {
		name          string
		fresh         bool // b's later reads are fresh
		aRecordsFirst bool // a's record is written before b's lookup
		double        bool // the schedule that counts x twice
	}{
		{name: "both records mine, b forgets on stale reads", double: true},
		{name: "b reads fresh", fresh: true},
		{name: "a's record first: b settles and watches", aRecordsFirst: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, a := limitLedger(t, mem, clock, "a", -1)
			lb, b := limitLedger(t, mem, clock, "b", -1)
			require.Less(t, a.Writer(), b.Writer(), "a's copy counts when both hold x unfolded")
			run := &limitRun{t: t}
			run.upd(b, "b0", 1, tpncounter.Applied)

			// b's call of x: fetch (no copy of a's), apply; put held.
			g, bdone := slowUpdate(lb, b, "x", 7)

			// a's call of x lands; its record Put waits (its confirming
			// lookup found no record).
			paused, release := make(chan struct{}), make(chan struct{})
			var once sync.Once
			if !tc.aRecordsFirst {
				la.mu.Lock()
				la.before = func(method, key string) {
					if method == faulty.MethodPut && ledger.IsRecordKey(key) {
						once.Do(func() { close(paused); <-release })
					}
				}
				la.mu.Unlock()
			}
			adone := make(chan slowAnswer, 1)
			go func() { r, err := a.Update(ctx, "x", 7); adone <- slowAnswer{r, err} }()
			if tc.aRecordsFirst {
				ans := <-adone
				require.NoError(t, ans.err)
				require.Equal(t, tpncounter.Applied, ans.r.Outcome)
			} else {
				<-paused
			}

			// b's put lands; b confirms its record.
			bans := landSlow(t, g, bdone)
			t.Logf("b's call of x: %v owner %+v", bans.r.Outcome, bans.r.Owner)
			if !tc.aRecordsFirst {
				require.Equal(t, tpncounter.Applied, bans.r.Outcome, "b's lookup found no record")
				close(release)
				ans := <-adone
				require.NoError(t, ans.err)
				require.Equal(t, tpncounter.Applied, ans.r.Outcome)
				writers := recordWriters(t, mem, "x")
				require.ElementsMatch(t, []crdt.ActorID{a.Writer(), b.Writer()}, writers, "each record names its own writer")
			}
			run.want += 7
			require.Equal(t, run.want, stored(t, mem).Value(), "x counted once while the copies meet")

			// b writes from reads that lag behind a's copy until its entry
			// no longer holds x.
			for i := 1; i <= 6 && holdsTxn(stored(t, mem), b.Writer(), "x"); i++ {
				if !tc.fresh {
					lb.plan.set(nil, []faulty.Fault{faulty.StaleBy(i)}, nil)
				}
				res, err := b.Update(ctx, crdt.TxnID(fmt.Sprintf("y%d", i)), 1)
				if err != nil {
					t.Logf("b's y%d: %v", i, err) // a stale read refused (the watch)
					continue
				}
				require.Equal(t, tpncounter.Applied, res.Outcome)
				run.want++
			}
			lb.plan.set(nil, nil, nil)
			if st := stored(t, mem); tc.double && !holdsTxn(st, b.Writer(), "x") {
				require.True(t, holdsTxn(st, a.Writer(), "x"), "a's copy is still held")
				t.Logf("after b's writes: b folded x into its total and forgot it; value %d, want %d", st.Value(), run.want)
			}
			run.settle(a, b) // every ledger reads and writes again
			if tc.double {
				require.Equal(t, run.want+7, stored(t, mem).Value(), "the stated limit: x counts twice")
				return
			}
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}

// recordWriters lists the writers the stored records of x name.
func recordWriters(t *testing.T, mem *memory.Siblings, x crdt.TxnID) []crdt.ActorID {
	t.Helper()
	sibs, _, err := mem.Fetch(context.Background(), ledger.RecordKey(advKey, x))
	require.NoError(t, err)
	var out []crdt.ActorID
	for _, v := range sibs {
		var r ledger.Record
		require.NoError(t, r.UnmarshalBinary(v))
		out = append(out, r.Writer)
	}
	return out
}

// holdsTxn reports whether w's live entries in st hold x.
func holdsTxn(st *tpncounter.Counter, w crdt.ActorID, x crdt.TxnID) bool {
	for y := range st.Transactions(w) {
		if y == x {
			return true
		}
	}
	return false
}
