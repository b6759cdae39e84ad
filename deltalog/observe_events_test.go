package deltalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/internal/obstest"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

var obsT0 = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func obsCounters(t *testing.T, st store.Partitions, tr *obstest.Tracker, now *time.Time) *deltalog.Counters {
	t.Helper()
	c, err := deltalog.New(st, deltalog.Options{Clock: func() time.Time { return *now }, Observer: tr})
	require.NoError(t, err)
	return c
}

// Add/Apply, Read, Merge and Compact report one event each with the
// outcome of the call, refusals, store errors and a done context
// included, every store call nested and every operation ended once.
func TestDeltalogOutcomes(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	c := obsCounters(t, observe.Partitions(fs, tr), tr, &now)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	check := func(name string, call func() error, op, outcome string, attempts, refused, ambiguous int) {
		t.Helper()
		tr.Reset()
		err := call()
		evs := tr.Events("deltalog")
		require.Len(t, evs, 1, name)
		require.Equal(t, op, evs[0].Op, name)
		require.Equal(t, outcome, evs[0].Outcome, "%s: %v", name, err)
		require.Equal(t, err, evs[0].Err, name)
		if attempts >= 0 {
			require.Equal(t, attempts, evs[0].Attempts, name)
		}
		if refused >= 0 {
			require.Equal(t, refused, evs[0].Refused, name)
		}
		require.Equal(t, ambiguous, evs[0].Ambiguous, name)
		require.Empty(t, tr.Problems(), name)
	}
	add := func(c2 context.Context, counter string, id deltalog.ID, d int64) func() error {
		return func() error { return c.Add(c2, counter, id, d) }
	}
	check("add", add(ctx, "v", timeid.New(now), 2), "add", observe.OK, 1, 0, 0)
	check("zero", add(ctx, "v", timeid.New(now), 0), "add", observe.Invalid, 1, 0, 0)
	check("bad key", add(ctx, "", timeid.New(now), 1), "add", observe.Invalid, 1, 0, 0)
	check("ahead", add(ctx, "v", timeid.New(now.Add(time.Hour)), 1), "add", observe.OutsideWindow, 1, 0, 0)
	// A done context ends the call before the store: no store refusal,
	// as in the ledger and tally.
	check("canceled", add(canceled, "v", timeid.New(now), 1), "add", observe.Canceled, 1, 0, 0)
	var b deltalog.Batch
	id := timeid.New(now)
	b.Add("v", id, 1)
	b.Add("v", id, 2)
	check("conflicting batch", func() error { return c.Apply(ctx, &b) }, "add", observe.Invalid, 1, 0, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodApply))
	check("refused", add(ctx, "v", timeid.New(now), 1), "add", observe.Unavailable, 1, 1, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Unclassified), faulty.MethodApply))
	// An error the store did not classify may hide a landed write
	// (store.Partitions): ambiguous, as the ledger and tally report it.
	check("unclassified", add(ctx, "v", timeid.New(now), 1), "add", observe.Ambiguous, 1, 0, 1)
	fs.SetPolicy(nil)
	check("read", func() error { _, err := c.Read(ctx, "v"); return err }, "read", observe.OK, 1, 0, 0)
	// A canceled read's error wraps crdt.ErrUnavailable, as a canceled
	// add's does, and context.Canceled: not a store refusal either.
	check("read canceled", func() error { _, err := c.Read(canceled, "v"); return err }, "read", observe.Canceled, 1, 0, 0)
	now = now.Add(time.Hour)
	check("merge", func() error { _, _, err := c.Merge(ctx, "v"); return err }, "merge", observe.OK, 1, 0, 0)
	now = now.Add(time.Hour)
	check("compact", func() error { _, err := c.Compact(ctx, "v"); return err }, "compact", observe.OK, 1, 0, 0)
}

// An add whose store panics is not reported "ok": it ends with an error
// wrapping crdt.ErrAmbiguousWrite (it may have landed) as the panic goes
// on.
func TestDeltalogPanicIsNotOK(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Hook: func(context.Context, faulty.Call, bool) error { panic("store exploded") }})
	c := obsCounters(t, st, tr, &now)
	require.Equal(t, "store exploded", obstest.Catch(func() { _ = c.Add(ctx, "v", timeid.New(now), 1) }))
	var b deltalog.Batch
	b.Add("v", timeid.New(now), 1)
	b.Add("w", timeid.New(now), 2)
	require.Equal(t, "store exploded", obstest.Catch(func() { _ = c.Apply(ctx, &b) }))
	require.Empty(t, tr.Problems())
	evs := tr.Events("deltalog")
	require.Len(t, evs, 2)
	for _, e := range evs {
		require.Equal(t, observe.Ambiguous, e.Outcome, "%s panicked, reported %q", e.Op, e.Outcome)
	}
}

// A Read the store refuses is one attempt, refused (observe.Event.Refused:
// "a refused read included"), as a Merge's refused scan is.
func TestDeltalogRefusedReadIsCounted(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy: faulty.Only(func(faulty.Call) faulty.Fault { return faulty.Refuse }, faulty.MethodScan)})
	c := obsCounters(t, fs, tr, &now)
	_, err := c.Read(ctx, "v")
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	_, _, err = c.Merge(ctx, "v")
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	evs := tr.Events("deltalog")
	require.Len(t, evs, 2)
	for _, e := range evs {
		require.Equal(t, observe.Unavailable, e.Outcome, e.Op)
		require.Equal(t, 1, e.Attempts, e.Op)
		require.Equal(t, 1, e.Refused, "%s: the refused scan is not counted", e.Op)
	}
}

// A Read, Merge or Compact whose store panics is not reported "ok": it
// ends with an error (a merge's or compaction's, which write, wrapping
// crdt.ErrAmbiguousWrite) as the panic goes on.
func TestDeltalogReadPanicIsNotOK(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Hook: func(context.Context, faulty.Call, bool) error { panic("store exploded") }})
	c := obsCounters(t, st, tr, &now)
	require.Equal(t, "store exploded", obstest.Catch(func() { _, _ = c.Read(ctx, "v") }))
	require.Equal(t, "store exploded", obstest.Catch(func() { _, _, _ = c.Merge(ctx, "v") }))
	require.Equal(t, "store exploded", obstest.Catch(func() { _, _ = c.Compact(ctx, "v") }))
	require.Empty(t, tr.Problems())
	var got []string
	for _, e := range tr.Events("deltalog") {
		got = append(got, e.Op+" "+e.Outcome)
	}
	require.Equal(t, []string{"read error", "merge ambiguous", "compact ambiguous"}, got)
}
