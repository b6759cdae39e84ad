package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestOneRetiredGracePerKey shows why every ledger of a key must use one
// RetiredGrace (SPEC.md 6.10; found by a tracer): r (RetireAfter 1h,
// RetiredGrace 2h) credits r1. Two hours later b reads r's first entry
// live; r then takes a new incarnation and retires that entry, and two
// hours later folds it into P's base. b's next read, 2h04m after its
// last, merges its own state when b's RetiredGrace/2 is longer than that
// (the default 10 days, or 5h): r's first entry comes back live and r1
// counts twice (+1). With b's RetiredGrace 2h or 4h, b drops its state
// and r1 counts once.
func TestOneRetiredGracePerKey(t *testing.T) {
	for _, g := range []time.Duration{2 * time.Hour, 4 * time.Hour, 5 * time.Hour, 0} {
		t.Run(fmt.Sprintf("bGrace=%v", g), func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			clock := newFakeClock(time.Unix(1_800_000_000, 0))
			ob := limitOptions(clock, "b", -1)
			ob.RetiredGrace = g
			b, err := ledger.New(mem, advKey, ob)
			require.NoError(t, err)
			r := graceLedger(t, mem, clock, "r")
			run := &limitRun{t: t}
			run.upd(r, "r1", 1, tpncounter.Applied)
			clock.Add(2*time.Hour + time.Minute)
			run.upd(b, "b1", 1, tpncounter.Applied) // b's state: r's entry live
			run.upd(r, "r2", 1, tpncounter.Applied) // r: new incarnation; retires the old
			clock.Add(2*time.Hour + 4*time.Minute)
			_, err = r.Find(ctx) // folds r's old entry
			require.NoError(t, err)
			p, _ := stored(t, mem).Bases()
			require.Equal(t, int64(1), p.Total, "r's first entry is in P's base")
			_, err = b.Find(ctx)
			require.NoError(t, err)
			if g == 2*time.Hour || g == 4*time.Hour {
				require.Equal(t, run.want, stored(t, mem).Value(), "r1 counts once")
				return
			}
			require.Equal(t, run.want+1, stored(t, mem).Value(), "mixed graces: r1 counts twice")
		})
	}
}
