package balance_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// These tests, and the random schedules, place rows of Transactions with
// writers and merges whose clocks differ, racing and nested merges (SPEC.md
// 9.4, Places and Removal).

// rsClock is a clock for one of these tests, started after every write
// stamp the process has handed out (worldStart), from 2100 on.
func rsClock() *testClock {
	return &testClock{t: worldStart(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))}
}

// rsWriter is Transactions over st whose clock is c shifted by off.
func rsWriter(t *testing.T, st store.Partitions, c *testClock, off time.Duration, parts int) *balance.Transactions {
	t.Helper()
	tx, err := balance.NewTransactions(st, balance.TxnOptions{Partitions: parts,
		Options: balance.Options{Clock: func() time.Time { return c.Now().Add(off) }}})
	require.NoError(t, err)
	return tx
}

// rsRows returns the stored rows of account's row partitions.
func rsRows(t *testing.T, st store.Partitions, tx *balance.Transactions) []store.Row {
	t.Helper()
	var out []store.Row
	for _, p := range tx.RowPartitions(acct) {
		rows, err := st.Snapshot(context.Background(), p, balance.MaxRows, store.ReadComplete)
		require.NoError(t, err)
		out = append(out, rows...)
	}
	return out
}

// rsSums returns how many sum rows tx's row partitions of acct hold.
func rsSums(t *testing.T, st store.Partitions, tx *balance.Transactions) int {
	t.Helper()
	n := 0
	for _, r := range rsRows(t, st, tx) {
		_, k, err := balance.DecodeTxnRowKey(r.Key)
		require.NoError(t, err)
		if k.Kind == balance.KindSum {
			n++
		}
	}
	return n
}

func rsDump(t *testing.T, rows []store.Row) {
	for _, r := range rows {
		at, k, err := balance.DecodeTxnRowKey(r.Key)
		var row balance.Row
		_ = row.UnmarshalBinary(r.Value)
		t.Logf("  place %v %v err=%v row=%v settled=%v", time.UnixMicro(at).UTC().Format("15:04:05.000000"), k.Kind, err, row, row.Settled)
	}
}

// A credit written by a writer whose clock is ahead (within FutureSkew)
// and merged at once is placed after the merge's version; the sum row is
// placed after it (at the newest place of a row it covers), so once the
// account is idle its merges remove the row and its tombstone: the
// partition ends with the settled sum row alone.
func TestTransactionsRowsPlacedAfterTheLiveSumGo(t *testing.T) {
	ctx := context.Background()
	c := rsClock()
	mem := memory.NewPartitions()
	st := faulty.NewPartitions(mem, faulty.Options{})
	w0 := rsWriter(t, st, c, 0, 1)
	ahead := rsWriter(t, st, c, w0.Options().FutureSkew, 1)
	mustApply(t, ahead, "x", 7, balance.Applied)
	c.Add(time.Second)
	mustMerge(t, w0) // version ~ c+1s, before x's place c+5s
	for range 10 {
		c.Add(w0.Options().GCGrace + time.Minute)
		mustMerge(t, w0)
	}
	bal, err := w0.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, 7, bal)
	rows := rsRows(t, mem, w0)
	rsDump(t, rows)
	require.Equal(t, 1, len(rows), "an idle account merged 10 times keeps more than its settled sum row")
}

// Two merges within SettleGrace (A covers the live settled sum S0 and b;
// B covers A's sum and c), then a credit x from a writer whose clock is
// FutureSkew behind the merger's: x is placed before A's sum row and
// stays live. The merge past SettleGrace plans S0 and A's sum (covered by
// B) deleted and settles B; its oldest run stops at x. Removing S0 and
// A's tombstone naming it needs A's sum row removed (it stays unsettled
// otherwise, invalid with a tombstone short, and b would count again), so
// A's sum row, its tombstones and b go too, at their places.
func TestTransactionsPartialRemovalKeepsCoveredRows(t *testing.T) {
	ctx := context.Background()
	c := rsClock()
	mem := memory.NewPartitions()
	behind := rsWriter(t, mem, c, 0, 1)
	fs := behind.Options().FutureSkew
	merger := rsWriter(t, mem, c, fs, 1)
	o := merger.Options()

	// An account with one settled sum row S0 (a = 1).
	mustApply(t, merger, "a", 1, balance.Applied)
	c.Add(time.Second)
	mustMerge(t, merger)
	c.Add(o.SettleGrace + time.Second)
	mustMerge(t, merger)
	mustMerge(t, merger)
	require.Len(t, rsRows(t, mem, merger), 1)

	c.Add(time.Minute)
	mustApply(t, merger, "b", 10, balance.Applied) // placed r+5s
	c.Add(time.Second)
	mustMerge(t, merger) // A: S0 + b, sum placed r+6s
	c.Add(time.Second)
	mustApply(t, merger, "c", 100, balance.Applied) // placed r+7s
	c.Add(time.Second)
	mustMerge(t, merger) // B: A + c, sum placed r+8s
	c.Add(time.Second)
	mustApply(t, behind, "x", 1000, balance.Applied) // placed r+4s, before A's sum
	bal, err := merger.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, 1111, bal)

	c.Add(o.SettleGrace + 10*time.Second)
	mustMerge(t, merger) // settles B, removes A with what it needs
	balanceStays(t, merger, c, 1111, "b counted twice")
}

// balanceStays requires tx's balance to be want, and again after three
// merges GCGrace apart.
func balanceStays(t *testing.T, tx *balance.Transactions, c *testClock, want int64, msg string) {
	t.Helper()
	for i := range 4 {
		if i > 0 {
			c.Add(tx.Options().GCGrace)
			mustMerge(t, tx)
		}
		bal, err := tx.Balance(context.Background(), acct)
		require.NoError(t, err)
		require.EqualValues(t, want, bal, "%s (after %d more merges)", msg, i)
	}
}

// Two merges race on {S0, n1} (B runs whole between A's read and its
// writes: B's sum precedes A's, so A's is invalid and so are its
// tombstones). A third merge E covers B's sum and n2 within SettleGrace.
// The merge F past SettleGrace settles E and plans B's sum deleted (E
// covers it); its oldest run is empty (the last stored row is A's
// tombstone naming S0, invalid and not GCGrace old). F removes A's
// invalid tombstone naming n1, and n1 with it; removing n1 needs B's sum
// row removed (unsettled, it would lose a row its tombstone names, and S0
// would count again), so B's sum row and its tombstones go too.
func TestTransactionsInvalidTombstoneRemovalKeepsASum(t *testing.T) {
	ctx := context.Background()
	c := rsClock()
	mem := memory.NewPartitions()
	st := faulty.NewPartitions(mem, faulty.Options{})
	tx := rsWriter(t, st, c, 0, 1)
	o := tx.Options()

	mustApply(t, tx, "a", 1, balance.Applied)
	c.Add(time.Second)
	mustMerge(t, tx) // S0
	c.Add(o.SettleGrace + time.Second)
	mustMerge(t, tx)
	require.Len(t, rsRows(t, mem, tx), 1)

	c.Add(5 * time.Second)
	mustApply(t, tx, "n1", 10, balance.Applied)
	c.Add(time.Second)
	nested := false
	st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after && call.Method == faulty.MethodSnapshot && slices.Contains(tx.RowPartitions(acct), call.Key) && !nested {
			nested = true
			c.Add(time.Second)
			mustMerge(t, tx) // B: S0 + n1, valid
			c.Add(time.Second)
		}
		return nil
	})
	mustMerge(t, tx) // A: S0 + n1 again, invalid (B precedes it)
	st.SetHook(nil)
	require.True(t, nested)
	require.Equal(t, 3, rsSums(t, mem, tx), "the race leaves S0, B's sum row and A's, invalid")
	c.Add(time.Second)
	mustApply(t, tx, "n2", 100, balance.Applied)
	c.Add(time.Second)
	mustMerge(t, tx) // E: B's sum + n2
	bal, err := tx.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, 111, bal)

	c.Add(o.SettleGrace + time.Second)
	mustMerge(t, tx) // F
	balanceStays(t, tx, c, 111, "S0 counted twice")
}

// A backlog of more than MaxCover credits in one row partition (10,000
// credits written while no merge ran), then light traffic (20 credits per
// merge, merges every 5 s) for 150 s and, once idle, six merges GCGrace
// apart: the partition ends with its settled sum row. The first two sum
// rows each cover 5,000 ids chosen by clustering (row-id hash) order, so
// their rows interleave by place; a row partition's step 7 lists every
// row its settled merges cancel (not the first 5,000), so the oldest run
// passes them all. (It used to stop at the first row left unlisted, for
// good.)
func TestTransactionsBacklogCompacts(t *testing.T) {
	testsize.SkipSequential(t)
	c := rsClock()
	mem := memory.NewPartitions()
	tx := rsWriter(t, mem, c, 0, 1)
	o := tx.Options()
	const backlog = 10_000
	for i := range backlog {
		mustApply(t, tx, crdt.TxnID(fmt.Sprint("b-", i)), 1, balance.Applied)
		if i%100 == 99 {
			c.Add(time.Millisecond)
		}
	}
	want := int64(backlog)
	for k := range 30 { // then traffic, 20 credits per merge, merges every 5 s
		c.Add(5 * time.Second)
		for j := range 20 {
			mustApply(t, tx, crdt.TxnID(fmt.Sprint("n-", k, "-", j)), 1, balance.Applied)
			want++
		}
		mustMerge(t, tx)
	}
	for range 6 { // then idle merges GCGrace apart
		c.Add(o.GCGrace + time.Minute)
		mustMerge(t, tx)
	}
	require.Equal(t, want, balanceOf(t, tx))
	rows := len(rsRows(t, mem, tx))
	require.LessOrEqual(t, rows, 1, "an idle account merged 36 times still holds %d rows", rows)
}

// Two merges race once (B runs whole between A's read and A's writes, so
// A's sum row is invalid: SPEC 9.2 "Consequence"). Then steady traffic of
// 1,000 credits per 5 s (200 a second) with a merge every 5 s. A's invalid
// sum row is kept until GCGrace old (step 8, too_young); in the way of the
// oldest run it is moved (written again at a new place), so the partition
// levels off as without the race (about 26,000 rows). (It used to stop the
// run for GCGrace, and the partition passed MaxRows in four minutes.)
// B runs when A has read the row partition, not the layout marker
// before it: B first, A would read B's rows and there is no race.
func TestTransactionsRacingMergeDoesNotBlockRemoval(t *testing.T) {
	if testing.Short() {
		t.Skip("sequential, 60,000 credits: the first pass runs it")
	}
	c := rsClock()
	mem := memory.NewPartitions()
	st := faulty.NewPartitions(mem, faulty.Options{})
	tx := rsWriter(t, st, c, 0, 1)

	mustApply(t, tx, "first", 1, balance.Applied)
	c.Add(time.Second)
	nested := false
	st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after && call.Method == faulty.MethodSnapshot && slices.Contains(tx.RowPartitions(acct), call.Key) && !nested {
			nested = true
			c.Add(time.Second)
			mustMerge(t, tx) // B: valid
			c.Add(time.Second)
		}
		return nil
	})
	mustMerge(t, tx) // A: invalid, B precedes it
	st.SetHook(nil)
	require.True(t, nested)
	require.Equal(t, 2, rsSums(t, mem, tx), "the race leaves B's sum row and A's, invalid")

	stored := func() int { return len(rsRows(t, mem, tx)) }
	want, n, level := int64(1), 0, 0
	for k := range 60 { // 5 minutes, half of GCGrace
		for range 1000 {
			mustApply(t, tx, crdt.TxnID(fmt.Sprint("n-", n)), 1, balance.Applied)
			n++
			want++
		}
		c.Add(5 * time.Second)
		_, err := tx.Merge(context.Background(), acct)
		require.NoError(t, err, "merge %d, %v after the race: %d rows stored", k, time.Duration(k+1)*5*time.Second, stored())
		if k%6 == 5 {
			t.Logf("%v after the race: %d rows stored", time.Duration(k+1)*5*time.Second, stored())
		}
		if k == 23 {
			level = stored()
		}
	}
	require.Equal(t, want, balanceOf(t, tx))
	rows := stored()
	require.LessOrEqual(t, rows, level+1000, "the rows level off: %d at 2 minutes, %d at 5", level, rows)
	require.Less(t, rows, 30_000)
}

// A transaction applied with two amounts before any merge (7, then 8 by a
// writer whose clock is FutureSkew ahead: both Applied, 7 counts). The
// merge places the tombstone naming x at the newest place of any N row of
// x (the refused 8's) and its sum row after every row its tombstones
// name, so once idle the account keeps its settled sum row alone and
// reports no conflict. (The sum row used to be placed by live rows only,
// before the refused copy and the tombstone, which then stayed for good.)
func TestTransactionsRefusedCopyAheadRemoved(t *testing.T) {
	c := rsClock()
	mem := memory.NewPartitions()
	tx := rsWriter(t, mem, c, 0, 1)
	o := tx.Options()
	ahead := rsWriter(t, mem, c, o.FutureSkew, 1)
	mustApply(t, tx, "x", 7, balance.Applied)
	mustApply(t, ahead, "x", 8, balance.Applied) // placed c+5s
	c.Add(time.Second)
	mustMerge(t, tx) // version c+1s
	for range 6 {
		c.Add(o.GCGrace + time.Minute)
		mustMerge(t, tx)
	}
	require.EqualValues(t, 7, balanceOf(t, tx))
	conflicts, err := tx.Conflicts(context.Background(), acct)
	require.NoError(t, err)
	rows := rsRows(t, mem, tx)
	rsDump(t, rows)
	require.Empty(t, conflicts, "the refused copy is left")
	require.Len(t, rows, 1, "an idle account merged 7 times keeps %d rows", len(rows))
}

// A clock before 1970 cannot place a row: Apply and Merge refuse it
// (crdt.ErrInvalidConfig) and write nothing, so the account stays
// readable. Found by a review: Apply wrote a row placed at a negative
// time, which made the row partition corrupt for every later read.
func TestTransactionsClockBefore1970(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewPartitions()
	good := newTestClock()
	tx := newTxns(t, mem, good)
	mustApply(t, tx, "before", 5, balance.Applied)

	odd := &testClock{t: time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC)}
	st := &counting{mem: mem}
	otx := newTxns(t, st, odd)
	_, err := otx.Apply(ctx, acct, "odd", 7)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = otx.Merge(ctx, acct)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	require.Zero(t, st.applies.Load(), "a clock before 1970 wrote")

	require.EqualValues(t, 5, balanceOf(t, tx))
	mustMerge(t, tx)
}

// An expiry mark no merge of the account's layout writes (a window after
// the clock's: a layout race's loser of a smaller RetryWindow, or damage)
// is read as no mark, and the next expiry replaces it. Found by reviews: a
// mark of MaxInt64 overflowed, one far ahead made every later expiry
// delete nothing, silently, and reporting it as corrupt made every merge
// of a layout race's winner fail.
func TestTransactionsExpiryMarkAheadIsReplaced(t *testing.T) {
	for _, ahead := range []int64{math.MaxInt64, math.MaxInt64 - 100, 1000} {
		t.Run(fmt.Sprint(ahead), func(t *testing.T) {
			ctx := context.Background()
			c := newTestClock()
			st := memory.NewPartitions()
			tx := newTxns(t, st, c)
			rw := tx.Options().RetryWindow.Microseconds()
			mark := ahead
			if ahead == 1000 {
				mark = c.Now().UnixMicro()/rw + ahead
			}
			markRow := balance.NormalRow(timeid.FromParts(time.Date(1582, time.October, 15, 0, 0, 0, 0, time.UTC), 0, 0), mark)
			b, err := markRow.MarshalBinary()
			require.NoError(t, err)
			require.NoError(t, st.Apply(ctx, []store.Mutation{{Partition: acct + "#txn.expired", Op: store.OpPut,
				Key: balance.EncodeKey(markRow.Key()), Value: b, Timestamp: 1}}))
			mustApply(t, tx, "x", 5, balance.Applied)
			c.Add(time.Second)
			mustMerge(t, tx)
			w := c.Now().UnixMicro() / rw
			rec := fmt.Sprintf("%s#txn.%d.%d", acct, w, int(balance.TxnRowID("x")[15])%tx.Options().RecordShards)
			require.Len(t, storedRows(st, rec), 1, "the record of x")

			c.Add(6 * time.Duration(rw) * time.Microsecond) // the next merge expires w
			mustMerge(t, tx)
			require.EqualValues(t, 5, balanceOf(t, tx))
			require.Empty(t, storedRows(st, rec), "the expiry deleted x's record")
			marks := storedRows(st, acct+"#txn.expired")
			require.Len(t, marks, 1)
			require.Less(t, marks[0].Amount, c.Now().UnixMicro()/rw, "the mark replaced")
		})
	}
}
