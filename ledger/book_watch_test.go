package ledger

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestBookKeepsOwedRecords: a Book keeps open an idle ledger that owes a
// transaction record (SPEC.md 6.11 step 3: a pending write's transaction,
// learnt to have landed, recorded before the next cycle). Here ledger a's
// put of x is in doubt and lands after ledger b applied x; a's read learns
// that it landed and owes x's record, whose confirmation and settling then
// watch a's copy, which b forgets in a cycle that did not see it. A Book
// that dropped the ledger with its record unwritten (as it dropped any idle
// one without a pending write) re-opened the key with nothing owed and
// nothing watched, and x counted twice.
func TestBookKeepsOwedRecords(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("dropOwing=%v", broken), func(t *testing.T) {
			ctx := context.Background()
			copts := tpncounter.Options{HistoryLength: 1, FoldedLength: 1}
			opts := Options{RetryCount: 1, Backoff: Backoff{Initial: -1}, Counter: copts, MaxGroup: 1, RetireAfter: -1}
			inner := memory.NewSiblings()
			fa := faulty.NewSiblings(inner, faulty.Options{})
			fb := faulty.NewSiblings(inner, faulty.Options{})
			opts.Actor = "a"
			b, err := NewBook(fa, BookOptions{MaxOpen: 1, Options: opts})
			require.NoError(t, err)
			if broken {
				b.keep = (*Ledger).Pending
			}
			opts.Actor = "b"
			lb, err := New(fb, "k", opts)
			require.NoError(t, err)
			want := int64(0)
			credit := func(out tpncounter.Outcome, err error, amount int64) {
				t.Helper()
				require.NoError(t, err)
				require.Equal(t, tpncounter.Applied, out)
				want += amount
			}
			onA := func(x crdt.TxnID, amount int64) {
				t.Helper()
				res, err := b.Credit(ctx, "k", x, amount)
				credit(res.Outcome, err, amount)
			}
			onB := func(x crdt.TxnID, amount int64) {
				t.Helper()
				res, err := lb.Credit(ctx, x, amount)
				credit(res.Outcome, err, amount)
			}
			inDoubt := func() faulty.Policy { // fetch, put held, fetch, put lost
				return counterCalls(faulty.Script(faulty.Pass, faulty.Hold, faulty.Pass, faulty.Lose))
			}
			onA("open-a", 1000)
			onB("open-b", 2000)

			// a's put of x is held in flight; b applies x, then y1, and its
			// put of y2, which forgets x, is held too.
			fa.SetPolicy(inDoubt())
			_, err = b.Credit(ctx, "k", "x", 100)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			fa.SetPolicy(nil)
			onB("x", 100)
			onB("y1", 10)
			fb.SetPolicy(inDoubt())
			_, err = lb.Credit(ctx, "y2", 20)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			want += 20 // b's pending write lands below
			fb.SetPolicy(nil)

			// a's copy lands next to b's, and a's read learns it: a owes
			// x's record. Another key is used.
			require.NoError(t, fa.DeliverAll())
			_, err = b.Find(ctx, "k")
			require.NoError(t, err)
			_, err = b.Credit(ctx, "other", "o", 1)
			require.NoError(t, err)
			require.NoError(t, b.check())
			if broken {
				require.Equal(t, BookStats{Open: 1, Opened: 2, Evicted: 1}, b.Stats(), "k dropped when other opened")
			} else {
				require.Equal(t, BookStats{Open: 1, Pending: 1, Opened: 2, Evicted: 1}, b.Stats(), "k kept, other dropped once idle")
			}

			// b's put forgetting x lands; both write again, twice.
			require.NoError(t, fb.DeliverAll())
			for i := range 2 {
				onA(crdt.TxnID(fmt.Sprint("za", i)), 1)
				onB(crdt.TxnID(fmt.Sprint("zb", i)), 1)
			}
			c, err := joinedAt(inner, "k", copts)
			require.NoError(t, err)
			if broken {
				require.Equal(t, want+100, c.Value(), "the re-opened ledger owes nothing: x counts twice")
				return
			}
			require.Equal(t, want, c.Value())
		})
	}
}

// TestBookKeepsWatching: an idle ledger watching a copy (SPEC.md 6.11 step
// 3, "Watching") is kept open as one with a pending write is: a Ledger
// opened in its place would not watch it.
func TestBookKeepsWatching(t *testing.T) {
	b, err := NewBook(memory.NewSiblings(), BookOptions{MaxOpen: 1, Options: Options{Actor: "a"}})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = b.Credit(ctx, "k", "x", 1)
	require.NoError(t, err)
	e, err := b.acquire("k")
	require.NoError(t, err)
	e.l.met = map[crdt.TxnID]metCopy{"x": {rec: Record{Txn: "x", Amount: 1}, holder: "b"}}
	b.release(e)
	_, err = b.Credit(ctx, "other", "o", 1)
	require.NoError(t, err)
	require.NoError(t, b.check())
	require.Equal(t, BookStats{Open: 1, Pending: 1, Opened: 2, Evicted: 1}, b.Stats(), "k kept watching, other dropped once idle")
	require.True(t, b.keep(e.l))
}
