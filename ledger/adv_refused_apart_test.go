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
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestRefusedFindReadsApart (found by a review): a Put refused with no
// transaction to take back (a Find that compacted l's entry) leaves a
// never-written state, ahead of the store, which l reads apart (SPEC.md
// 6.9). l idles; o's late copy of z (o's id is smaller) meets l's and
// folds, the copy that counts; m retires l at its stored version, l's copy
// of z leaving without counting (6.10); o then forgets z (no other
// holder). l writes again: its read apart shows its entry retired, and l
// takes a new incarnation: z counts once. When the refused state was read
// in place (Cycle.Undo saw nothing taken back), its newer entry won over
// the retired one and z counted twice. Without the refused Find
// (control), l continues from the retired entry: once.
func TestRefusedFindReadsApart(t *testing.T) {
	for _, refusedFind := range []bool{false, true} {
		t.Run(fmt.Sprintf("refused find %v", refusedFind), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			ll, lo := newLane(mem), newLane(mem)
			l := watchLedger(t, ll, clock, "l", -1)
			o := watchLedger(t, lo, clock, "a", -1)
			m := watchLedger(t, mem, clock, "m", time.Hour)
			require.Less(t, o.Writer(), l.Writer())
			run := &limitRun{t: t}
			upd := run.upd
			upd(l, "open", 1000, tpncounter.Applied)

			g, done := slowUpdate(lo, o, "z", 5) // o read before l's z
			upd(l, "z", 5, tpncounter.Applied)
			upd(l, "l1", 1, tpncounter.Applied)
			vStored := stored(t, mem).Version(l.Writer())
			if refusedFind {
				clock.Add(time.Minute)
				ll.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
				_, err := l.Find(ctx)
				require.ErrorIs(t, err, crdt.ErrUnavailable)
				ll.plan.set(nil, nil, nil)
				require.Equal(t, vStored, stored(t, mem).Version(l.Writer()))
			}
			ans := landSlow(t, g, done) // o's late copy lands, meets l's
			t.Logf("o's z: %v owner %+v", ans.r.Outcome, ans.r.Owner)
			for i := range 3 {
				upd(o, crdt.TxnID(fmt.Sprintf("a%d", i)), 1, tpncounter.Applied)
			}
			own, _ := stored(t, mem).Owner("z")
			t.Logf("z's owner %+v", own)
			require.Equal(t, run.want, stored(t, mem).Value())

			retired := false
			for h := 0; h < 6 && !retired; h++ {
				for i := range 3 {
					upd(m, crdt.TxnID(fmt.Sprintf("m%d.%d", h, i)), 1, tpncounter.Applied)
					clock.Add(21 * time.Minute)
				}
				_, live := maps.Collect(stored(t, mem).LiveActors())[l.Writer()]
				retired = !live
			}
			require.True(t, retired, "m retires l")
			require.Equal(t, run.want, stored(t, mem).Value(), "after l's retirement")
			for i := range 4 { // o folds on, and forgets z once no one else holds it
				upd(o, crdt.TxnID(fmt.Sprintf("b%d", i)), 1, tpncounter.Applied)
			}
			t.Logf("o holds z: %v", stored(t, mem).HasTransaction("z"))
			require.Equal(t, run.want, stored(t, mem).Value(), "after o forgot z")

			upd(l, "l2", 1, tpncounter.Applied) // l comes back
			t.Logf("l writes as %s", l.Writer())
			if v := stored(t, mem).Value(); v != run.want {
				t.Errorf("after l writes again: value %d, want %d (z counted twice)", v, run.want)
			}
			run.settle(l, o, m)
			r, err := m.Update(ctx, "z", 5)
			require.NoError(t, err)
			require.True(t, isRecognised(r.Outcome), "a retry of z: %v", r.Outcome)
			require.Equal(t, run.want, stored(t, mem).Value(), "each transaction counted once")
		})
	}
}
