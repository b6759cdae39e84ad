package ledger_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestFailedReadsDoNotKeepAStateOpen (found by two reviews): every ledger
// has RetiredGrace 2h (r: RetireAfter 1h). a's call of x is lost (its
// write pending, holding b's entry as a read it). a's reads then fail
// every 30 minutes, at the fetch (refused) or after it (a sibling that
// does not decode, seen by a's replica only). Only a read that fetches and
// decodes counts for RetiredGrace/2, so a drops its write in doubt; r
// retires b's idle entry and folds it; a's next read starts from the store
// and b counts once. When each failed read counted, a kept its state and
// sent it again, and b's folded entry counted a second time (+1001).
func TestFailedReadsDoNotKeepAStateOpen(t *testing.T) {
	for _, undecodable := range []bool{false, true} {
		t.Run(fmt.Sprintf("undecodable=%v", undecodable), func(t *testing.T) {
			ctx := context.Background()
			mem, clock, la, _, b, r, run := graceTrio(t)
			g := &garbling{lane: la}
			o := limitOptions(clock, "a", -1)
			o.RetiredGrace = 2 * time.Hour
			a, err := ledger.New(g, advKey, o)
			require.NoError(t, err)
			run.upd(b, "open", 1000, tpncounter.Applied)
			run.upd(a, "a0", 1, tpncounter.Applied)
			la.plan.set([]faulty.Fault{faulty.Lose, faulty.Lose}, nil, nil)
			_, err = a.Update(ctx, "x", 5)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			la.plan.set(nil, nil, nil)
			for i := range 3 {
				run.upd(b, crdt.TxnID(fmt.Sprintf("y%d", i)), 1, tpncounter.Applied)
			}
			b0 := b.Writer()
			cutOff := func() {
				clock.Add(30 * time.Minute)
				if g.on = undecodable; !undecodable {
					la.plan.set(nil, repeat(faulty.Refuse, 1), nil)
				}
				_, err := a.Value(ctx)
				require.Error(t, err)
				if !undecodable {
					require.ErrorIs(t, err, crdt.ErrUnavailable)
				}
				g.on = false
				la.plan.set(nil, nil, nil)
			}
			cutOff()
			cutOff()
			clock.Add(time.Minute)
			run.upd(r, "r1", 1, tpncounter.Applied) // retires b's and a's idle entries
			for range 4 {
				cutOff()
			}
			clock.Add(5 * time.Minute)
			run.upd(r, "r2", 1, tpncounter.Applied) // folds them
			require.Zero(t, stored(t, mem).Version(b0), "b's entry folded")
			require.False(t, a.Pending(), "no read merged for RetiredGrace/2: a dropped its write in doubt")

			clock.Add(30 * time.Minute)
			_, err = a.Update(ctx, "w", 9)
			t.Logf("a's call: %v", err)
			if err == nil {
				run.want += 9
			}
			st := stored(t, mem)
			t.Logf("value %d, want %d, b0 live %v", st.Value(), run.want, holdsAny(st, "b", "y2"))
			// x's caller was told ambiguous: x may count once or not at all; its
			// write was lost and dropped here, so not at all.
			require.Equal(t, run.want, st.Value(), "b's folded entry counted once")
		})
	}
}

// garbling answers a's fetches of the account with an extra sibling that
// does not decode while on: the fetch succeeds, the read fails.
type garbling struct {
	*lane
	on bool
}

func (g *garbling) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	sibs, tok, err := g.lane.Fetch(ctx, key)
	if err == nil && g.on && !ledger.IsRecordKey(key) {
		sibs = append(append([][]byte(nil), sibs...), []byte("not a counter"))
	}
	return sibs, tok, err
}
