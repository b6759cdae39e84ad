package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestBookReopenAfterHalfGraceStaleRead (found by a review): a Book drops
// advKey's Ledger (MaxOpen 1) and re-opens it more than RetiredGrace/2
// after that Ledger's last read, but less than RetireAfter +
// RetiredGrace/2 after its entry last changed. The first read's renewStale
// keeps the Book's resume (the version remembered), and the read is stale
// (one state back): the Ledger takes a new incarnation. When renewStale
// replaced resume with the new Ledger's stored version (0), the read kept
// the incarnation unchecked, the entry forked and lost a credit.
func TestBookReopenAfterHalfGraceStaleRead(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	ln := newLane(mem)
	o := ledger.Options{Actor: "svc", RetireAfter: time.Hour, RetiredGrace: 2 * time.Hour, RetryCount: 1,
		Backoff: ledger.Backoff{Initial: -1}, MaxGroup: 1, Counter: tpncounter.Options{HistoryLength: 2, FoldedLength: 2}}
	clock.opts(&o)
	book, err := ledger.NewBook(ln, ledger.BookOptions{Options: o, MaxOpen: 1})
	require.NoError(t, err)
	var want int64
	credit := func(key string, x string, amount int64) ledger.BookResult {
		t.Helper()
		res, err := book.Update(ctx, key, crdt.TxnID(x), amount)
		require.NoError(t, err, x)
		require.Equal(t, tpncounter.Applied, res.Outcome, x)
		if key == advKey {
			want += amount
		}
		return res
	}
	credit(advKey, "a", 10)
	w := credit(advKey, "b", 20).Writer
	credit("other", "o1", 1)    // evicts advKey's Ledger: remembered at b's version
	clock.Add(70 * time.Minute) // > RetiredGrace/2, < RetireAfter + RetiredGrace/2
	ln.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil)
	res := credit(advKey, "c", 30)
	t.Logf("writer %s then %s; stored value %d, want %d", w, res.Writer, stored(t, mem).Value(), want)
	require.Equal(t, want, stored(t, mem).Value(), "a, b and c each counted once")
}

// TestBookReopenAfterHalfGraceStaleReadDefaults: the same with the
// default RetireAfter (1h) and RetiredGrace (10 days): the key is re-opened
// 5 days and a minute after its Ledger's last read and write.
func TestBookReopenAfterHalfGraceStaleReadDefaults(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clock := newFakeClock(time.Unix(1_800_000_000, 0))
	ln := newLane(mem)
	o := ledger.Options{Actor: "svc"}
	clock.opts(&o)
	book, err := ledger.NewBook(ln, ledger.BookOptions{Options: o, MaxOpen: 1})
	require.NoError(t, err)
	var want int64
	for _, x := range []crdt.TxnID{"a", "b"} {
		_, err := book.Credit(ctx, advKey, x, 10)
		require.NoError(t, err)
		want += 10
	}
	_, err = book.Credit(ctx, "other", "o1", 1) // evicts advKey's Ledger
	require.NoError(t, err)
	clock.Add(ledger.DefaultRetiredGrace/2 + time.Minute)
	ln.plan.set(nil, []faulty.Fault{faulty.StaleBy(1)}, nil)
	_, err = book.Credit(ctx, advKey, "c", 10)
	require.NoError(t, err)
	want += 10
	require.Equal(t, want, stored(t, mem).Value(), "a, b and c each counted once")
}
