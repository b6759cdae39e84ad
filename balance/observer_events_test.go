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
	check("canceled", add(canceled, "a", timeid.New(now), 1), "add", observe.Canceled, 1, 0)
	check("empty batch", func() error { return ac.Apply(ctx, nil) }, "add", observe.OK, 0, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodApply))
	check("lost ack", add(ctx, "a", timeid.New(now), 1), "add", observe.Ambiguous, 0, 1)
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
// OpenTelemetry bridge, a leaked span): Accounts' reads and merges end
// theirs with an error, and the panic goes on.
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
	require.NoError(t, ac.Add(ctx, "a", timeid.New(now), 1))
	now = now.Add(time.Hour) // a merge writes
	for _, c := range []struct {
		name, explode string
		call          func()
	}{
		{"Accounts.Balance", "*", func() { _, _ = ac.Balance(ctx, "a") }},
		{"Accounts.Conflicts", "*", func() { _, _ = ac.Conflicts(ctx, "a") }},
		{"Accounts.Merge", "*", func() { _, _ = ac.Merge(ctx, "a") }},
		{"Accounts.Merge's write", faulty.MethodApply, func() { _, _ = ac.Merge(ctx, "a") }},
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
