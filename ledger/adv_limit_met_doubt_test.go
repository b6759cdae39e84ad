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

// TestLimitRecordNamesAMetCopyInDoubt shows the limit SPEC.md 6.11 states
// under "Concurrent copies" as a retirement that records a copy that met
// another writer's as the one that counts while that writer's forgetting
// write is in flight or missing from the pass's read. Traced from
// TestAdvWatchRandom (seed 101, COUNTERKIT_CASES=1500, H=F=1/case1147).
// History and folded record hold one transaction; a < b.
//
// a applies x; both of its puts are lost (ambiguous_write: a's copy stays
// in its pending write). b applies x, which lands and is recorded naming
// b, then y1. b writes y2 and y3, every put held in flight: in its pending
// state b has folded x into its total and forgotten it (no other entry
// held x in the state it read). Fifty minutes on, a writes a1: its
// pending copy lands and meets b's (b's entry in the store still holds x
// in its history); a's copy counts (smaller id). a writes a2: settling
// its owed record of x it finds b holding x, watches its copy, and folds
// it. r, retiring after an hour, has seen b unchanged since before a's
// copy landed: its pass records b's transactions, x naming a (the owner
// in r's state), and retires b there. b's forgetting write is newer than
// the retired entry and wins: b's total counts x. a's watch finds b no
// longer holding x, reads a record naming a, and keeps its copy: x counts
// twice. r's record beats a's watch when b's write is still in flight at
// the pass, or when it has landed and the pass reads one state stale (the
// retirement is void, its records stay). Without r's pass, or with r
// reading fresh after b's write landed, a's watch takes its copy out.
func TestLimitRecordNamesAMetCopyInDoubt(t *testing.T) {
	for _, tc := range []struct {
		name          string
		bFirst, stale bool // b's forgetting write lands before r's pass; the pass reads one state stale
		noPass        bool // r makes no pass after the hour
		limit         bool // x counted twice
	}{
		{name: "b's forgetting write in flight", limit: true},
		{name: "b's forgetting write landed, r reads stale", bFirst: true, stale: true, limit: true},
		{name: "r reads fresh after b's write landed", bFirst: true},
		{name: "no pass by r", noPass: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, a := limitLedger(t, mem, clock, "a", -1)
			lb, b := limitLedger(t, mem, clock, "b", -1)
			lr, r := limitLedger(t, mem, clock, "r", time.Hour)
			require.Less(t, a.Writer(), b.Writer())
			run := &limitRun{t: t}
			upd := run.upd
			upd(r, "open", 1000, tpncounter.Applied)

			la.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
			_, err := a.Update(ctx, "x", 7)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x in doubt on a")
			require.Equal(t, tpncounter.Unknown, stored(t, mem).Status("x"))

			upd(b, "x", 7, tpncounter.Applied)
			upd(b, "y1", 1, tpncounter.Applied)
			upd(r, "r1", 1, tpncounter.Applied) // r first sees b, holding x and y1

			lb.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold, faulty.Hold, faulty.Hold}, nil, nil)
			_, err = b.Update(ctx, "y2", 2)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "y2 in doubt")
			_, err = b.Update(ctx, "y3", 3)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "y3 in doubt")
			require.Equal(t, 4, lb.Held())
			landB := func() { // b's last write: x folded and forgotten
				require.NoError(t, lb.Deliver(lb.Held()-1))
				lb.DropHeld()
				run.want += 2 + 3
				_, held := maps.Collect(stored(t, mem).Transactions(b.Writer()))["x"]
				require.False(t, held, "b's entry no longer holds x: its total counts it")
			}

			clock.Add(50 * time.Minute)
			upd(a, "a1", 1, tpncounter.Applied) // a's pending copy lands and meets b's
			st := stored(t, mem)
			o, ok := st.Owner("x")
			require.True(t, ok && o.Actor == a.Writer(), "a's copy counts: %+v", o)
			require.NotZero(t, maps.Collect(st.Transactions(b.Writer()))["x"], "b's entry in the store still holds x")
			upd(a, "a2", 1, tpncounter.Applied)
			o, _ = stored(t, mem).Owner("x")
			require.True(t, o.Actor == a.Writer() && o.Folded, "a folded x: %+v", o)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counted once while the copies meet")

			if tc.stale {
				upd(r, "r2", 1, tpncounter.Applied) // r's state: a folded x, b holds it
			}
			if tc.bFirst {
				landB()
			}
			clock.Add(11 * time.Minute) // b unchanged in r's view for an hour
			if !tc.noPass {
				if tc.stale {
					lr.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil)
				}
				upd(r, "r3", 1, tpncounter.Applied)
			}
			namesA := false
			sibs, _, err := mem.Fetch(ctx, ledger.RecordKey(advKey, "x"))
			require.NoError(t, err)
			for _, v := range sibs {
				var rec ledger.Record
				require.NoError(t, rec.UnmarshalBinary(v))
				namesA = namesA || rec.Writer == a.Writer()
			}
			if !tc.bFirst {
				landB()
			}

			run.settle(a, b, r)
			if tc.limit {
				require.True(t, namesA, "r's record of b's x names a's copy")
				require.Equal(t, run.want+7, stored(t, mem).Value(), "the stated limit: x (7) counted twice")
				return
			}
			require.False(t, namesA, "no record names a's copy")
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}
