package balance_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/obstest"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

var obsT0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// Accounts' Add, Balance and Merge report one event each with the outcome
// of the call (refusals, store errors and a done context included), their
// store calls nested, every operation ended once.
func TestAccountsEventPerCallWithOutcome(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	ac, err := balance.New(observe.Partitions(fs, tr), balance.Options{Clock: func() time.Time { return now }, Observer: tr})
	require.NoError(t, err)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	check := func(name string, call func() error, op, outcome string, refused, ambiguous int) {
		t.Helper()
		tr.Reset()
		err := call()
		evs := tr.Events("balance")
		require.Len(t, evs, 1, name)
		require.Equal(t, op, evs[0].Op, name)
		require.Equal(t, outcome, evs[0].Outcome, "%s: %v", name, err)
		require.Equal(t, err, evs[0].Err, name)
		require.Equal(t, refused, evs[0].Refused, name)
		require.Equal(t, ambiguous, evs[0].Ambiguous, name)
		require.Empty(t, tr.Problems(), name)
	}
	add := func(c context.Context, acct string, id timeid.ID, n int64) func() error {
		return func() error { return ac.Add(c, acct, id, n) }
	}
	check("add", add(ctx, "a", timeid.New(now), 3), "add", observe.OK, 0, 0)
	check("zero", add(ctx, "a", timeid.New(now), 0), "add", observe.Invalid, 0, 0)
	check("bad key", add(ctx, "", timeid.New(now), 1), "add", observe.Invalid, 0, 0)
	check("old", add(ctx, "a", timeid.New(now.Add(-time.Hour)), 1), "add", observe.OutsideWindow, 0, 0)
	check("canceled", add(canceled, "a", timeid.New(now), 1), "add", observe.Canceled, 0, 0) // before the store: not a refusal
	check("empty batch", func() error { return ac.Apply(ctx, nil) }, "add", observe.OK, 0, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodApply))
	check("lost ack", add(ctx, "a", timeid.New(now), 1), "add", observe.Ambiguous, 0, 1)
	// An error the store did not classify may hide a landed write
	// (store.Partitions): the call's error wraps crdt.ErrAmbiguousWrite.
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Unclassified), faulty.MethodApply))
	check("unclassified", func() error {
		err := ac.Add(ctx, "a", timeid.New(now), 1)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		require.ErrorIs(t, err, faulty.ErrUnclassified)
		return err
	}, "add", observe.Ambiguous, 0, 1)
	fs.SetPolicy(nil)
	check("balance", func() error { _, err := ac.Balance(ctx, "a"); return err }, "read", observe.OK, 0, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodSnapshot))
	check("refused read", func() error { _, err := ac.Balance(ctx, "a"); return err }, "read", observe.Unavailable, 1, 0)
	fs.SetPolicy(nil)
	now = now.Add(time.Hour)
	check("merge", func() error { _, err := ac.Merge(ctx, "a"); return err }, "merge", observe.OK, 0, 0)
}

// Accounts.Balance that fails with crdt.ErrOverflow reports it (Evaluate
// checks the int64 inside the read's operation).
func TestAccountsBalanceOverflowEventInvalid(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	ac, err := balance.New(memory.NewPartitions(), balance.Options{Clock: func() time.Time { return obsT0 }, Observer: tr})
	require.NoError(t, err)
	require.NoError(t, ac.Add(ctx, "a", timeid.New(obsT0), math.MaxInt64))
	require.NoError(t, ac.Add(ctx, "a", timeid.New(obsT0), math.MaxInt64))
	tr.Reset()
	_, err = ac.Balance(ctx, "a")
	require.ErrorIs(t, err, crdt.ErrOverflow)
	evs := tr.Events("balance")
	require.Len(t, evs, 1)
	require.Equal(t, observe.Invalid, evs[0].Outcome, "Balance failed with %v", err)
}

// A merge that wrote, and a read, made one attempt (observe.Event.Attempts:
// "1, and one more for each time it sent its write again").
func TestAccountsEventsMadeOneAttempt(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	ac, err := balance.New(memory.NewPartitions(), balance.Options{Clock: func() time.Time { return now }, Observer: tr})
	require.NoError(t, err)
	require.NoError(t, ac.Add(ctx, "a", timeid.New(now), 5))
	now = now.Add(time.Hour)
	tr.Reset()
	_, err = ac.Balance(ctx, "a")
	require.NoError(t, err)
	rep, err := ac.Merge(ctx, "a")
	require.NoError(t, err)
	require.NotNil(t, rep.Sum) // it wrote
	evs := tr.Events("balance")
	require.Len(t, evs, 2)
	for _, e := range evs {
		require.Equal(t, 1, e.Attempts, e.Op)
	}
}

// A store that panics inside a call leaves no operation open (with the
// OpenTelemetry bridge, a leaked span): Accounts' reads and merges, and
// every call of Transactions, end theirs with an error, and the panic goes
// on.
func TestPanickingStoreEndsOperations(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	explode := "" // the method that panics: "*" every one
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Hook: func(_ context.Context, c faulty.Call, _ bool) error {
			if explode == "*" || explode == c.Method {
				panic("store exploded")
			}
			return nil
		}})
	opts := balance.Options{Clock: func() time.Time { return now }, Observer: tr}
	ac, err := balance.New(st, opts)
	require.NoError(t, err)
	tx, err := balance.NewTransactions(st, balance.TxnOptions{Options: opts, Partitions: 2, RecordShards: 1})
	require.NoError(t, err)
	require.NoError(t, ac.Add(ctx, "a", timeid.New(now), 1))
	_, err = tx.Apply(ctx, "b", "t1", 1)
	require.NoError(t, err)
	now = now.Add(time.Hour) // a merge writes
	for _, c := range []struct {
		name, explode string
		call          func()
	}{
		{"Accounts.Balance", "*", func() { _, _ = ac.Balance(ctx, "a") }},
		{"Accounts.Conflicts", "*", func() { _, _ = ac.Conflicts(ctx, "a") }},
		{"Accounts.Merge", "*", func() { _, _ = ac.Merge(ctx, "a") }},
		{"Accounts.Merge's write", faulty.MethodApply, func() { _, _ = ac.Merge(ctx, "a") }},
		{"Transactions.Apply", "*", func() { _, _ = tx.Apply(ctx, "b", "t2", 1) }},
		{"Transactions.Apply's write", faulty.MethodApply, func() { _, _ = tx.Apply(ctx, "b", "t2", 1) }},
		{"Transactions.Balance", "*", func() { _, _ = tx.Balance(ctx, "b") }},
		{"Transactions.Conflicts", "*", func() { _, _ = tx.Conflicts(ctx, "b") }},
		{"Transactions.Recorded", "*", func() { _, _ = tx.Recorded(ctx, "b", "t1") }},
		{"Transactions.Merge", "*", func() { _, _ = tx.Merge(ctx, "b") }},
		{"Transactions.Merge's write", faulty.MethodApply, func() { _, _ = tx.Merge(ctx, "b") }},
		{"Transactions.Delete", "*", func() { _ = tx.Delete(ctx, "b") }},
	} {
		tr.Reset()
		explode = c.explode
		require.Equal(t, "store exploded", obstest.Catch(c.call), c.name)
		require.Empty(t, tr.Problems(), c.name)
		evs := tr.Events("balance")
		require.Len(t, evs, 1, c.name)
		require.Equal(t, observe.Error, evs[0].Outcome, c.name)
		require.Error(t, evs[0].Err, c.name)
	}
}

// obsTxns returns Transactions whose store and Observer report to tr.
func obsTxns(t *testing.T, tr *obstest.Tracker, clock func() time.Time) *balance.Transactions {
	t.Helper()
	tx, err := balance.NewTransactions(observe.Partitions(memory.NewPartitions(), tr),
		balance.TxnOptions{Options: balance.Options{Clock: clock, Observer: tr}, Partitions: 4, RecordShards: 2})
	require.NoError(t, err)
	return tx
}

// Transactions.Balance that fails with crdt.ErrOverflow reports it: two
// transactions of math.MaxInt64 are stored (Apply does not read the
// balance), and the sum of the partitions does not fit.
func TestTransactionsBalanceOverflowEventInvalid(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	tx := obsTxns(t, tr, func() time.Time { return obsT0 })
	_, err := tx.Apply(ctx, "a", "t1", math.MaxInt64)
	require.NoError(t, err)
	_, err = tx.Apply(ctx, "a", "t2", math.MaxInt64)
	require.NoError(t, err)
	tr.Reset()
	_, err = tx.Balance(ctx, "a")
	require.ErrorIs(t, err, crdt.ErrOverflow)
	evs := tr.Events("balance")
	require.Len(t, evs, 1)
	require.Equal(t, observe.Invalid, evs[0].Outcome, "Balance failed with %v", err)
	require.Equal(t, err, evs[0].Err)
}

// Every Transactions.Apply reports one "add" event, whatever it returns:
// a refusal, Duplicate (observe.Duplicate) or Applied (observe.Applied).
func TestTransactionsApplyOneEventPerCall(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	tx := obsTxns(t, tr, func() time.Time { return now })
	_, err := tx.Apply(ctx, "a", "t1", 5)
	require.NoError(t, err)
	now = now.Add(time.Hour)
	_, err = tx.Merge(ctx, "a") // records t1
	require.NoError(t, err)
	for _, c := range []struct {
		name, account string
		txn           crdt.TxnID
		amount        int64
		outcome       string
	}{
		{"applied", "a", "t3", 5, observe.Applied},
		{"duplicate", "a", "t1", 5, observe.Duplicate},
		{"conflicting", "a", "t1", 6, observe.Invalid},
		{"zero", "a", "t2", 0, observe.Invalid},
		{"bad txn", "a", "", 1, observe.Invalid},
		{"bad account", "a#b", "t2", 1, observe.Invalid},
	} {
		tr.Reset()
		out, err := tx.Apply(ctx, c.account, c.txn, c.amount)
		evs := tr.Events("balance")
		require.Len(t, evs, 1, "%s: Apply returned %v, %v", c.name, out, err)
		require.Equal(t, "add", evs[0].Op, c.name)
		require.Equal(t, c.outcome, evs[0].Outcome, c.name)
		require.Equal(t, err, evs[0].Err, c.name)
		require.Equal(t, 1, evs[0].Attempts, c.name)
		require.Empty(t, tr.Problems(), c.name)
	}
}

// Every Transactions call runs its store calls (the layout marker's read,
// the record lookup, the partitions' reads and writes) inside its one
// operation, so that with the OpenTelemetry bridge they are its children.
func TestTransactionsStoreCallsNested(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	tx := obsTxns(t, tr, func() time.Time { return now })
	for _, c := range []struct {
		op   string
		call func() error
	}{
		{"add", func() error { _, err := tx.Apply(ctx, "a", "t1", 5); return err }},
		{"read", func() error { _, err := tx.Balance(ctx, "a"); return err }},
		{"read", func() error { _, err := tx.Conflicts(ctx, "a"); return err }},
		{"recorded", func() error { _, err := tx.Recorded(ctx, "a", "t1"); return err }},
		{"merge", func() error { now = now.Add(time.Hour); _, err := tx.Merge(ctx, "a"); return err }},
		{"delete", func() error { return tx.Delete(ctx, "a") }},
	} {
		tr.Reset()
		require.NoError(t, c.call(), c.op)
		require.Empty(t, tr.Problems(), c.op)
		evs := tr.Events("balance")
		require.Len(t, evs, 1, c.op)
		require.Equal(t, c.op, evs[0].Op)
		require.NotZero(t, tr.Started("store.partitions"), c.op)
	}
}

// One Transactions.Balance call reports one "read" event, not one per row
// partition (TxnOptions.Partitions).
func TestTransactionsBalanceOneEvent(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	tx := obsTxns(t, tr, func() time.Time { return obsT0 })
	_, err := tx.Apply(ctx, "a", "t1", 5)
	require.NoError(t, err)
	tr.Reset()
	_, err = tx.Balance(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, 1, tr.Started("balance"), "one Balance call")
	evs := tr.Events("balance")
	require.Len(t, evs, 1)
	require.Equal(t, observe.Event{Op: "read", Outcome: observe.OK, Attempts: 1},
		observe.Event{Op: evs[0].Op, Outcome: evs[0].Outcome, Attempts: evs[0].Attempts})
}

// A Transactions.Apply whose record was read more than Deadline before
// each of its writes reports one "add" event, of the crdt.ErrUnavailable
// it returns, its three cycles counted in Attempts.
func TestTransactionsLateApplyOneEvent(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	now := obsT0
	tx := obsTxns(t, tr, func() time.Time { return now })
	_, err := tx.Apply(ctx, "a", "t0", 1) // marks the layout
	require.NoError(t, err)
	tr.Reset()
	late := func() time.Time { now = now.Add(balance.DefaultDeadline + time.Second); return now }
	tx = obsTxns(t, tr, late)
	_, err = tx.Apply(ctx, "a", "t1", 5)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	evs := tr.Events("balance")
	var got []string
	for _, e := range evs {
		got = append(got, e.Op+" "+e.Outcome)
	}
	require.Equal(t, []string{"add " + observe.Unavailable}, got)
	require.Equal(t, 3, evs[0].Attempts)
	require.Empty(t, tr.Problems())
}
