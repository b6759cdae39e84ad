package balance_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// layoutTxns returns a Transactions over st with the clock c and the given
// layout (zero fields: the defaults).
func layoutTxns(t *testing.T, st store.Partitions, c *testClock, partitions, shards int, window time.Duration) *balance.Transactions {
	t.Helper()
	o := txnOpts(c)
	o.Partitions, o.RecordShards, o.RetryWindow = partitions, shards, window
	tx, err := balance.NewTransactions(st, o)
	require.NoError(t, err)
	return tx
}

// A Transactions whose layout (Partitions, RecordShards, RetryWindow) is
// not the account's is refused by every call, with nothing written; the
// account's own Transactions goes on, and a retry through it is still
// recognised. Without the marker, a process configured with 8 partitions
// would miss the rows of the others and answer a retry applied again
// (SPEC.md 9.4 "Layout").
func TestTransactionsLayoutRefusesAnother(t *testing.T) {
	ctx := context.Background()
	for _, other := range []struct {
		name       string
		partitions int
		shards     int
		window     time.Duration
	}{
		{"fewer partitions", 8, 0, 0},
		{"more partitions", 32, 0, 0},
		{"other record shards", 0, 4, 0},
		{"other retry window", 0, 0, time.Hour},
	} {
		t.Run(other.name, func(t *testing.T) {
			c := newTestClock()
			st := &counting{mem: memory.NewPartitions()}
			tx := newTxns(t, st, c)
			mustApply(t, tx, "pay-1", 100, balance.Applied)
			mustMerge(t, tx)
			c.Add(2 * time.Second)

			o := layoutTxns(t, st, c, other.partitions, other.shards, other.window)
			applies := st.applies.Load()
			_, err := o.Apply(ctx, acct, "pay-1", 100)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "Apply")
			require.ErrorContains(t, err, "Partitions 16, RecordShards 16, RetryWindow 24h0m0s")
			_, err = o.Apply(ctx, acct, "pay-2", 5)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "Apply of a new transaction")
			_, err = o.Balance(ctx, acct)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "Balance")
			_, err = o.Merge(ctx, acct)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "Merge")
			_, err = o.Recorded(ctx, acct, "pay-1")
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "Recorded")
			_, err = o.Conflicts(ctx, acct)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "Conflicts")
			require.ErrorIs(t, o.Delete(ctx, acct), crdt.ErrInvalidConfig, "Delete")
			require.Equal(t, applies, st.applies.Load(), "a refused Transactions wrote")

			mustApply(t, tx, "pay-1", 100, balance.Duplicate)
			require.EqualValues(t, 100, balanceOf(t, tx))
		})
	}
}

// The account's first Apply writes its layout; another account, or the
// same one after Delete, may take another.
func TestTransactionsLayoutPerAccount(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := memory.NewPartitions()
	tx, tx8 := newTxns(t, st, c), layoutTxns(t, st, c, 8, 0, 0)
	mustApply(t, tx, "pay-1", 100, balance.Applied)
	_, err := tx8.Apply(ctx, "other", "pay-1", 7)
	require.NoError(t, err, "another account takes its own layout")

	// Balance, Merge and Recorded of an account no Apply marked pass and
	// write no marker.
	_, err = tx8.Balance(ctx, "fresh")
	require.NoError(t, err)
	_, err = tx8.Merge(ctx, "fresh")
	require.NoError(t, err)
	require.Empty(t, storedRows(st, "fresh#txn.layout"))

	mustMerge(t, tx)
	require.NoError(t, tx.Delete(ctx, acct))
	require.Empty(t, storedRows(st, acct+"#txn.layout"), "Delete leaves the marker")
	c.Add(time.Second)
	_, err = tx8.Apply(ctx, acct, "pay-9", 9)
	require.NoError(t, err, "a deleted account takes a new layout")
	v, err := tx8.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, 9, v)
}

// Two first Applies with different layouts that both read an empty
// marker both write: the layout with more partitions goes on, the other is
// refused from its next check, and every row the smaller one wrote is in a
// partition the larger reads, since row partitions nest (4 against 16, and
// 1 against 2: a review found that with Partitions 1 the row partition was
// the account key itself, which no larger layout read, and an
// acknowledged credit was lost).
func TestTransactionsLayoutRaceLargerWins(t *testing.T) {
	for _, sizes := range [][2]int{{4, 16}, {1, 2}} {
		t.Run(fmt.Sprint(sizes[0], "-", sizes[1]), func(t *testing.T) {
			ctx := context.Background()
			c := newTestClock()
			st := memory.NewPartitions()
			small, large := layoutTxns(t, st, c, sizes[0], 0, 0), layoutTxns(t, st, c, sizes[1], 0, 0)
			hold := make(chan struct{})
			held := &holdFirstApply{Partitions: st, partition: acct + "#txn.layout", release: hold, reached: make(chan struct{})}
			smallHeld := layoutTxns(t, held, c, sizes[0], 0, 0)
			done := make(chan error, 1)
			go func() { _, err := smallHeld.Apply(ctx, acct, "s-1", 1); done <- err }()
			<-held.reached // small read an empty marker and is about to write its own
			mustApplyTo(t, large, "l-1", 10, balance.Applied)
			close(hold)
			require.NoError(t, <-done)
			_, err := small.Apply(ctx, acct, "s-2", 2) // a fresh check sees both
			require.ErrorIs(t, err, crdt.ErrInvalidConfig)
			mustApplyTo(t, large, "l-2", 20, balance.Applied)
			v, err := large.Balance(ctx, acct)
			require.NoError(t, err)
			require.EqualValues(t, 31, v, "the larger layout reads the smaller's row")
			_, err = large.Merge(ctx, acct)
			require.NoError(t, err)
			layout, ok, err := balance.AccountLayout(ctx, st, acct)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, large.Options().Partitions, layout.Partitions, "AccountLayout names the larger")
		})
	}
}

func mustApplyTo(t *testing.T, tx *balance.Transactions, txn crdt.TxnID, amount int64, want balance.Outcome) {
	t.Helper()
	got, err := tx.Apply(context.Background(), acct, txn, amount)
	require.NoError(t, err, "apply %s", txn)
	require.Equal(t, want, got, "apply %s", txn)
}

// holdFirstApply holds the first write to partition until release.
type holdFirstApply struct {
	store.Partitions
	partition string
	reached   chan struct{}
	release   chan struct{}
	once      bool
}

func (h *holdFirstApply) Apply(ctx context.Context, muts []store.Mutation) error {
	if !h.once && len(muts) > 0 && muts[0].Partition == h.partition {
		h.once = true
		close(h.reached)
		<-h.release
	}
	return h.Partitions.Apply(ctx, muts)
}

// Apply reads the marker at most once a second per account (a hot account
// costs one more read a second, not one a credit), and again as soon as
// the clock goes back; a marker that changed under a trusted check is
// seen within the second.
func TestTransactionsLayoutTrust(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := &counting{mem: memory.NewPartitions()}
	tx := newTxns(t, st, c)
	mustApply(t, tx, "pay-0", 1, balance.Applied) // writes the marker
	snaps := st.snapshots.Load()
	for i := range 100 {
		c.Add(9 * time.Millisecond)
		mustApply(t, tx, crdt.TxnID("pay-"+string(rune('a'+i%26))+string(rune('a'+i/26))), 1, balance.Applied)
	}
	require.Equal(t, snaps, st.snapshots.Load(), "a check trusted for a second read the marker again")
	c.Add(200 * time.Millisecond) // 1.1 s after the check
	mustApply(t, tx, "pay-1", 1, balance.Applied)
	require.Equal(t, snaps+1, st.snapshots.Load(), "a second after the check, Apply reads the marker")
	c.Add(-time.Millisecond)
	mustApply(t, tx, "pay-2", 1, balance.Applied)
	require.Equal(t, snaps+2, st.snapshots.Load(), "a clock that went back trusts nothing")

	// Another layout written under the trust: refused within the second.
	other := layoutTxns(t, st.mem, c, 32, 0, 0)
	require.NoError(t, st.mem.Apply(ctx, layoutRow(t, other)))
	c.Add(time.Second)
	_, err := tx.Apply(ctx, acct, "pay-3", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
}

// layoutRow is the marker row of tx's layout, as tx's first Apply on a
// fresh store writes it.
func layoutRow(t *testing.T, tx *balance.Transactions) []store.Mutation {
	t.Helper()
	fresh := memory.NewPartitions()
	o, err := balance.NewTransactions(fresh, tx.Options())
	require.NoError(t, err)
	_, err = o.Apply(context.Background(), acct, "probe", 1)
	require.NoError(t, err)
	rows, err := fresh.Snapshot(context.Background(), acct+"#txn.layout", 10, store.ReadComplete)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	return []store.Mutation{{Partition: acct + "#txn.layout", Op: store.OpPut, Key: rows[0].Key, Value: rows[0].Value, Timestamp: time.Now().UnixMicro()}}
}

// A marker holding a row no Transactions writes is corrupt: every call but
// Delete fails crdt.ErrCorruptEncoding and writes nothing.
func TestTransactionsLayoutCorruptMarker(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := &counting{mem: memory.NewPartitions()}
	tx := newTxns(t, st, c)
	bad, err := balance.New(st.mem, balance.Options{Clock: c.Now})
	require.NoError(t, err)
	require.NoError(t, bad.Add(ctx, acct+"#txn.layout", timeid.FromParts(c.Now(), 1, 1), 5))
	_, _, err = balance.AccountLayout(ctx, st, acct)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	_, _, err = balance.AccountLayout(ctx, st, "")
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	applies := st.applies.Load()
	_, err = tx.Apply(ctx, acct, "pay-1", 1)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	_, err = tx.Balance(ctx, acct)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	require.Equal(t, applies, st.applies.Load())

	// Delete, the only way to change a layout, goes past a damaged marker
	// (a review found it refused too, leaving the account neither usable
	// nor deletable), and the account is usable again.
	require.NoError(t, tx.Delete(ctx, acct))
	mustApply(t, tx, "pay-1", 1, balance.Applied)
}

// A clock before 1970 writes nothing, not even the layout marker, so it
// cannot claim a fresh account's layout (a review found Apply wrote the
// marker before it refused the clock).
func TestTransactionsClockBefore1970WritesNoMarker(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewPartitions()
	odd := &testClock{t: time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC)}
	st := &counting{mem: mem}
	otx := layoutTxns(t, st, odd, 64, 0, 0)
	_, err := otx.Apply(ctx, acct, "odd", 7)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	require.Zero(t, st.applies.Load(), "a refused Apply with a clock before 1970 wrote")
	good := newTxns(t, mem, newTestClock())
	mustApply(t, good, "pay-1", 1, balance.Applied)
}

// An Apply refused before its row (a TxnTime id without a time, or one
// outside its window) writes nothing, not even a fresh account's layout
// marker: the marker is written just before the account's first row.
func TestTransactionsRefusedApplyWritesNoMarker(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		at   func(now time.Time) (time.Time, bool)
		want error
	}{
		{"no time", func(time.Time) (time.Time, bool) { return time.Time{}, false }, crdt.ErrInvalidTxnID},
		{"outside window", func(now time.Time) (time.Time, bool) { return now.Add(-48 * time.Hour), true }, crdt.ErrOutsideWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestClock()
			st := &counting{mem: memory.NewPartitions()}
			o := txnOpts(c)
			o.TxnTime = func(crdt.TxnID) (time.Time, bool) { return tc.at(c.Now()) }
			tx, err := balance.NewTransactions(st, o)
			require.NoError(t, err)
			_, err = tx.Apply(ctx, acct, "late", 5)
			require.ErrorIs(t, err, tc.want)
			require.Zero(t, st.applies.Load(), "a refused Apply wrote")
		})
	}
}

// The layout marker goes in the same batch as the account's first row, so
// an Apply whose row is never sent writes no marker either: here the
// record read is slow (past Deadline), Apply reads again, and by then its
// TxnTime is outside the window (a review found the marker, written before
// the row, left behind by such a refused call).
func TestTransactionsLateRefusedApplyWritesNoMarker(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	mem := memory.NewPartitions()
	st := faulty.NewPartitions(mem, faulty.Options{})
	o := txnOpts(c)
	var at time.Time
	o.TxnTime = func(crdt.TxnID) (time.Time, bool) { return at, true }
	tx, err := balance.NewTransactions(st, o)
	require.NoError(t, err)
	at = c.Now().Add(-tx.Options().RetryWindow + 2*time.Second) // inside the window at the first read only
	st.SetHook(func(_ context.Context, call faulty.Call, after bool) error {
		if after && call.Method == faulty.MethodScan {
			c.Add(6 * time.Second) // a slow record read: the row would be late
		}
		return nil
	})
	_, err = tx.Apply(ctx, acct, "late", 5)
	require.ErrorIs(t, err, crdt.ErrOutsideWindow)
	require.Empty(t, storedRows(mem, acct+"#txn.layout"), "a refused Apply wrote the layout marker")
	require.Empty(t, storedRows(mem, tx.RowPartitions(acct)[int(balance.TxnRowID("late")[14])%tx.Options().Partitions]))
}

// AccountLayout's options open a Transactions that reads the account,
// a RetryWindow shorter than the default SettleGrace included (a review
// found NewTransactions refused them), and it refuses the account keys
// Transactions refuses.
func TestAccountLayoutOpensShortRetryWindow(t *testing.T) {
	ctx := context.Background()
	c := newTestClock()
	st := memory.NewPartitions()
	o := txnOpts(c)
	o.SettleGrace, o.MaxMerge, o.RetryWindow = 35*time.Second, 5*time.Second, 40*time.Second
	tx, err := balance.NewTransactions(st, o)
	require.NoError(t, err)
	_, err = tx.Apply(ctx, acct, "pay-1", 7)
	require.NoError(t, err)
	layout, ok, err := balance.AccountLayout(ctx, st, acct)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 40*time.Second, layout.RetryWindow)
	rd, err := balance.NewTransactions(st, layout)
	require.NoError(t, err)
	b, err := rd.Balance(ctx, acct)
	require.NoError(t, err)
	require.EqualValues(t, 7, b)
	for _, bad := range []string{"", "a#b", strings.Repeat("k", balance.MaxTxnAccountLen+1)} {
		_, _, err := balance.AccountLayout(ctx, st, bad)
		require.ErrorIs(t, err, crdt.ErrInvalidKey, "%q", bad)
	}
}

// A Delete deletes the account's layout marker, and the key is reused no
// sooner than SafetyMargin after it returned: the first Apply after that
// writes its layout again, whether its Transactions or another deleted
// the account and however short SafetyMargin is, so a Transactions of
// another layout is still refused and every acknowledged credit counts
// (SPEC.md 9.4 "Layout"). With the check trusted for a second across the
// Delete, the Apply wrote no marker, a Transactions of 8 partitions then
// made the account its own, and the credit of 5 in partition 12 stopped
// counting in its balance.
func TestTransactionsLayoutAfterDelete(t *testing.T) {
	ctx := context.Background()
	short := func(c *testClock, partitions int) balance.TxnOptions {
		return balance.TxnOptions{
			Options: balance.Options{Window: 500 * time.Millisecond, FutureSkew: 50 * time.Millisecond, SafetyMargin: 200 * time.Millisecond,
				MaxMerge: 100 * time.Millisecond, SettleGrace: 400 * time.Millisecond, GCGrace: time.Second, Clock: c.Now},
			RetryWindow: time.Minute, Deadline: 100 * time.Millisecond, Partitions: partitions,
		}
	}
	inPartition := func(part, partitions int) crdt.TxnID {
		for k := 0; ; k++ {
			if id := crdt.TxnID(fmt.Sprint("b", k)); int(balance.TxnRowID(id)[14])%partitions == part {
				return id
			}
		}
	}
	for _, deleter := range []string{"itself", "another"} {
		t.Run(deleter, func(t *testing.T) {
			c := newTestClock()
			mem := memory.NewPartitions()
			open := func(partitions int) *balance.Transactions {
				tx, err := balance.NewTransactions(mem, short(c, partitions))
				require.NoError(t, err)
				return tx
			}
			tx16, tx8 := open(16), open(8)
			del := tx16
			if deleter == "another" {
				del = open(16)
			}
			mustApplyTo(t, tx16, "first", 1, balance.Applied)
			sm := tx16.Options().SafetyMargin
			c.Add(sm + time.Millisecond) // quiet for SafetyMargin
			require.NoError(t, del.Delete(ctx, acct))
			c.Add(sm + time.Millisecond) // the reuse rule
			mustApplyTo(t, tx16, inPartition(12, 16), 5, balance.Applied)
			rows, err := mem.Snapshot(ctx, acct+"#txn.layout", 10, store.ReadAny)
			require.NoError(t, err)
			require.Len(t, rows, 1, "the first Apply after Delete writes the marker")
			c.Add(10 * time.Millisecond)
			_, err = tx8.Apply(ctx, acct, "c", 1)
			require.ErrorIs(t, err, crdt.ErrInvalidConfig, "another layout is refused")
			v, err := tx16.Balance(ctx, acct)
			require.NoError(t, err)
			require.EqualValues(t, 5, v)
		})
	}
}
