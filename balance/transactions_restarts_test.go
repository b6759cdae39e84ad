package balance_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

// TestTransactionsRestartsLeaveNothing checks issue 28's "nothing piles
// up" on the hot-account type: 10,000 restarts (100,000 with
// COUNTERKIT_CASES above 1) of one account's writer
// (a new Transactions for every credit, as a process that restarts or a
// handler that makes one per request), merged every 5 s of a clock that
// moves 10 ms a credit. A Transactions keeps nothing per writer in the
// store, so every credit costs the same store calls and bytes, early or
// last (a new Transactions reads the layout marker once: three calls), the
// rows stored stay bounded, and retries of the first and last credits are
// duplicates. One goroutine: the race pass (-short) skips it.
func TestTransactionsRestartsLeaveNothing(t *testing.T) {
	testsize.SkipSequential(t)
	const window = 1_000
	restarts := 10_000
	if proptest.Scale(1) > 1 {
		restarts = 100_000
	}
	ctx := context.Background()
	c := newTestClock()
	st := &counting{mem: memory.NewPartitions()}
	type cost struct{ calls, read, written int64 }
	var first, last cost
	most := 0
	for i := range restarts {
		c.Add(10 * time.Millisecond)
		calls, read, written := st.calls(), st.bytesRead.Load(), st.bytesWritten.Load()
		mustApply(t, newTxns(t, st, c), crdt.TxnID(fmt.Sprintf("pay-%06d", i)), 1, balance.Applied)
		d := cost{st.calls() - calls, st.bytesRead.Load() - read, st.bytesWritten.Load() - written}
		switch {
		case window <= i && i < 2*window: // once merges have written records
			first.calls, first.read, first.written = first.calls+d.calls, first.read+d.read, first.written+d.written
		case i >= restarts-window:
			last.calls, last.read, last.written = last.calls+d.calls, last.read+d.read, last.written+d.written
		}
		if i%500 == 499 {
			mustMerge(t, newTxns(t, st, c))
			n := 0
			for p := range 16 { // the default Partitions
				rows, err := st.mem.Snapshot(ctx, fmt.Sprintf("%s#%d", acct, p), math.MaxInt, store.ReadComplete)
				require.NoError(t, err)
				n += len(rows)
			}
			most = max(most, n)
		}
	}
	t.Logf("%d restarts: per credit, credits %d to %d: %.2f calls, %.1f B read, %.1f B written; the last %d: %.2f, %.1f, %.1f; at most %d rows in the row partitions",
		restarts, window, 2*window-1, float64(first.calls)/window, float64(first.read)/window, float64(first.written)/window,
		window, float64(last.calls)/window, float64(last.read)/window, float64(last.written)/window, most)
	require.Equal(t, first.calls, last.calls, "store calls per credit")
	require.Equal(t, 3*int64(window), first.calls, "the marker, the record and the row")
	// Bytes read differ only by the records a lookup's first page meets.
	require.InDelta(t, float64(first.read)/window, float64(last.read)/window, 8, "bytes read per credit")
	require.Equal(t, first.written, last.written, "bytes written per credit")
	// Two rows a credit of the last SettleGrace and two merge intervals
	// (SPEC.md 9.4, "Rows"): at 100 a second, about 2·100·(60 + 10).
	require.Less(t, most, 2*100*80, "rows stored")

	mustMerge(t, newTxns(t, st, c))
	for _, id := range []string{"pay-000000", fmt.Sprintf("pay-%06d", restarts-1)} {
		mustApply(t, newTxns(t, st, c), crdt.TxnID(id), 1, balance.Duplicate)
	}
	got, err := newTxns(t, st, c).Balance(ctx, acct)
	require.NoError(t, err)
	require.Equal(t, int64(restarts), got)
}
