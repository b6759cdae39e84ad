package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLandedDoubtNotRecordedByItsPass (found by TestLateCopyEnumerated,
// alive-inflight at depth 3): a's write of x is held in flight, in doubt;
// the caller's retry of x is applied and recorded by b. Seventy minutes
// on, a write counting x in b's entry, made from a read without a's copy,
// is not in the store yet: c's pass retiring b, refused and so written at
// c's next write ("retired"), or b's own write forgetting x, held in flight
// ("forgotten"). a learns that its write landed, beside b's copy: its copy
// counts (the smaller id), its record is owed, then settled against b's
// copy, which it watches (SPEC.md 6.11 step 3). a's own pass, b idle by
// then, recorded x as a's, the copy that counts in its state, as soon as
// a knew its write landed (the record owed, never settled) or once it
// watched it: when the write counting x in b's entry landed, a's watch
// found the record naming a and kept its copy, x counted twice for good.
// A pass now records nothing for a writer whose copy yields to this
// ledger's copy from a write in doubt while that copy is in its history
// with its record owed or watched (step 5), so the watch takes it out.
func TestLandedDoubtNotRecordedByItsPass(t *testing.T) {
	for _, tc := range []struct {
		name    string
		retired bool // c retires b (a refused write); else b forgets x (held)
	}{
		{name: "retired", retired: true},
		{name: "forgotten"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			la, a := limitLedger(t, mem, clock, "a", time.Hour)
			lb, b := limitLedger(t, mem, clock, "b", -1)
			lc, c := limitLedger(t, mem, clock, "c", time.Hour)
			require.Less(t, a.Writer(), b.Writer())
			run := &limitRun{t: t}
			upd := run.upd

			la.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
			_, err := a.Update(ctx, "x", 7)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x in doubt on a")
			upd(b, "x", 7, tpncounter.Applied) // the retry, recorded naming b
			run.want -= 7                      // x counts once, added below
			upd(b, "y1", 1, tpncounter.Applied)
			if !tc.retired {
				lb.plan.set([]faulty.Fault{faulty.Hold, faulty.Hold}, nil, nil)
				_, err = b.Update(ctx, "y2", 2)
				require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "y2 in doubt on b")
			}
			clock.Add(70 * time.Minute)
			if tc.retired {
				// c's first pass retires b, idle since x and y1, with x in
				// its total: its write is refused, its state ahead.
				lc.plan.set([]faulty.Fault{faulty.Refuse, faulty.Refuse}, nil, nil)
				_, err = c.Update(ctx, "c1", 1)
				require.ErrorIs(t, err, crdt.ErrUnavailable)
				require.NoError(t, la.DeliverAll()) // a's copy lands beside b's
			} else {
				_, err = a.Find(ctx) // sends a's write again: it lands
				require.NoError(t, err)
				la.DropHeld()
			}
			st := stored(t, mem)
			o, ok := st.Owner("x")
			require.True(t, ok && o.Actor == a.Writer(), "a's copy counts: %+v", o)
			require.True(t, holdsTxn(st, b.Writer(), "x"), "b's entry in the store holds x")

			for range 2 { // a reads, owes x's record, settles it, watches its copy
				_, err = a.Find(ctx)
				require.NoError(t, err)
			}
			if tc.retired {
				_, err = c.Find(ctx) // c writes b's retirement
				require.NoError(t, err)
			} else {
				require.NoError(t, lb.Deliver(lb.Held()-1)) // b's write forgetting x
				lb.DropHeld()
				run.want += 2
				require.False(t, holdsTxn(stored(t, mem), b.Writer(), "x"), "b's entry no longer holds x")
			}
			run.want += 7
			run.settle(a, b, c)
			require.Equal(t, run.want, stored(t, mem).Value(), "x counted once")
			res, err := b.Update(ctx, "x", 7)
			require.NoError(t, err)
			require.True(t, isRecognised(res.Outcome), "a retry of x is recognised: %v", res.Outcome)
		})
	}
}
