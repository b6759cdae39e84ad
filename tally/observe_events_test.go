package tally_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/obstest"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

// obsCounter returns a counter "page" whose store (inner wrapped with
// observe.Partitions) and Observer report to tr, at the clock *now.
func obsCounter(t *testing.T, inner store.Partitions, tr *obstest.Tracker, now *time.Time) *tally.Counter[*tally.Sum] {
	t.Helper()
	cfg := exampleConfig(now)
	cfg.Observer = tr
	c, err := tally.New[*tally.Sum](observe.Partitions(inner, tr), "page", cfg)
	require.NoError(t, err)
	return c
}

func obsAdd(n int64) func(*tally.Sum) error { return func(s *tally.Sum) error { return s.Add(n) } }

// Flush, Update, Retry and GC report one event each, with the outcome and
// counts observe.Event documents, store calls nested, every operation
// ended once.
func TestTallyOutcomes(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tr := &obstest.Tracker{}
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	c := obsCounter(t, fs, tr, &now)
	m, err := c.NewMutator()
	require.NoError(t, err)

	check := func(name string, call func() error, op, outcome string, attempts, ambiguous, refused int) {
		t.Helper()
		tr.Reset()
		err := call()
		evs := tr.Events("tally")
		require.Len(t, evs, 1, name)
		e := evs[0]
		require.Equal(t, op, e.Op, name)
		require.Equal(t, outcome, e.Outcome, "%s: %v", name, err)
		require.Equal(t, err, e.Err, name)
		require.Equal(t, attempts, e.Attempts, name)
		require.Equal(t, ambiguous, e.Ambiguous, name)
		require.Equal(t, refused, e.Refused, name)
		require.Empty(t, tr.Problems(), name)
	}
	check("update", func() error { return m.Update(ctx, obsAdd(1)) }, "flush", observe.OK, 1, 0, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodApply))
	check("lost ack, resent", func() error { return m.Update(ctx, obsAdd(1)) }, "flush", observe.OK, 2, 1, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Lose, faulty.Lose, faulty.Lose), faulty.MethodApply))
	check("every send lost", func() error { return m.Update(ctx, obsAdd(1)) }, "flush", observe.Ambiguous, 3, 3, 0)
	fs.SetPolicy(nil)
	check("retry", func() error { return m.Retry(ctx) }, "retry", observe.OK, 1, 0, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse, faulty.Refuse), faulty.MethodApply))
	check("every send refused", func() error { return m.Update(ctx, obsAdd(1)) }, "flush", observe.Unavailable, 3, 0, 3)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Lose), faulty.MethodApply))
	require.NoError(t, m.Stage(obsAdd(1)))
	check("lost then landed", func() error { return m.Flush(ctx) }, "flush", observe.OK, 2, 1, 0)
	// An error the store did not classify may hide a landed write: each
	// such send counts as ambiguous, as the call's error says.
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Unclassified), faulty.MethodApply))
	check("unclassified, resent", func() error { return m.Update(ctx, obsAdd(1)) }, "flush", observe.OK, 2, 1, 0)
	fs.SetPolicy(nil)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	require.NoError(t, m.Stage(obsAdd(1)))
	tr.Reset()
	err = m.Flush(canceled)
	require.ErrorIs(t, err, context.Canceled)
	evs := tr.Events("tally")
	require.Len(t, evs, 1)
	require.Equal(t, observe.Canceled, evs[0].Outcome)
	require.Empty(t, tr.Problems())

	now = now.Add(tally.DefaultLifetime + tally.DefaultGrace + time.Minute)
	// A GC whose batch is refused or lost folded nothing known
	// (observe.Event.Folded): no folds, no lag.
	for _, f := range []faulty.Fault{faulty.Refuse, faulty.Lose} {
		fs.SetPolicy(faulty.Only(func(faulty.Call) faulty.Fault { return f }, faulty.MethodApply))
		tr.Reset()
		plan, err := c.GC(ctx)
		require.Error(t, err)
		require.Positive(t, plan.Folded, "the plan had shards to fold")
		evs = tr.Events("tally")
		require.Len(t, evs, 1)
		require.Equal(t, [2]any{0, time.Duration(0)}, [2]any{evs[0].Folded, evs[0].Lag}, "%v: folds and lag reported", err)
	}
	fs.SetPolicy(nil)
	tr.Reset()
	plan, err := c.GC(ctx)
	require.NoError(t, err)
	evs = tr.Events("tally")
	require.Len(t, evs, 1)
	require.Equal(t, "gc", evs[0].Op)
	require.Equal(t, 1, evs[0].Attempts)
	require.Equal(t, plan.Folded, evs[0].Folded)
	require.Positive(t, evs[0].Lag)
	require.Empty(t, tr.Problems())
}

// An Update whose Stage refuses (a write unresolved, the mutator
// expired) or whose function fails is reported too, as a flush that sent
// nothing: an expired mutator's Update is a window refusal
// (counterkit.window.refusals).
func TestTallyUpdateRefusedIsReported(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tr := &obstest.Tracker{}
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy: faulty.Only(faulty.Script(faulty.Lose, faulty.Lose, faulty.Lose, faulty.Lose), faulty.MethodApply)})
	c := obsCounter(t, fs, tr, &now)
	m, err := c.NewMutator()
	require.NoError(t, err)
	require.ErrorIs(t, m.Update(ctx, obsAdd(1)), crdt.ErrAmbiguousWrite)

	calls := []struct {
		name    string
		call    func() error
		outcome string
	}{
		// Refused before it wrote: its update is not the write in doubt.
		{"unresolved", func() error { return m.Update(ctx, obsAdd(1)) }, observe.Invalid},
		{"fn fails", func() error {
			m2, err := c.NewMutator()
			require.NoError(t, err)
			return m2.Update(ctx, func(*tally.Sum) error { return crdt.ErrInvalidAmount })
		}, observe.Invalid},
		{"expired", func() error {
			m3, err := c.NewMutator()
			require.NoError(t, err)
			now = now.Add(tally.DefaultLifetime)
			defer func() { now = now.Add(-tally.DefaultLifetime) }()
			return m3.Update(ctx, obsAdd(1))
		}, observe.Expired},
	}
	for _, c := range calls {
		tr.Reset()
		err := c.call()
		require.Error(t, err, c.name)
		evs := tr.Events("tally")
		require.Len(t, evs, 1, "%s: Update returned %v and reported no event", c.name, err)
		require.Equal(t, "flush", evs[0].Op, c.name)
		require.Equal(t, c.outcome, evs[0].Outcome, c.name)
		require.Equal(t, err, evs[0].Err, c.name)
		require.Equal(t, 1, evs[0].Attempts, c.name)
		require.Zero(t, evs[0].Ambiguous+evs[0].Refused, c.name)
		require.Zero(t, evs[0].Bytes, "%s: nothing written", c.name)
		require.Empty(t, tr.Problems(), c.name)
	}
}

// A Flush with nothing staged, or refused before it wrote (the mutator
// expired), made one attempt (observe.Event.Attempts), as a Read does.
func TestTallyNothingToWriteMadeOneAttempt(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tr := &obstest.Tracker{}
	c := obsCounter(t, memory.NewPartitions(), tr, &now)
	m, err := c.NewMutator()
	require.NoError(t, err)
	require.NoError(t, m.Flush(ctx)) // nothing staged
	now = now.Add(tally.DefaultLifetime)
	require.ErrorIs(t, m.Flush(ctx), crdt.ErrExpired) // refused before it wrote
	_, err = c.Read(ctx)
	require.NoError(t, err)
	evs := tr.Events("tally")
	require.Len(t, evs, 3)
	for _, e := range evs {
		require.Equal(t, 1, e.Attempts, "%s %s: nothing written, one attempt made", e.Op, e.Outcome)
	}
}

// A read the store refuses (crdt.ErrUnavailable), Read's or GC's, is one
// attempt, refused (observe.Event.Refused: "a refused read included").
func TestTallyRefusedReadIsCounted(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tr := &obstest.Tracker{}
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy: faulty.Only(func(faulty.Call) faulty.Fault { return faulty.Refuse }, faulty.MethodSnapshot)})
	c := obsCounter(t, fs, tr, &now)
	_, err := c.Read(ctx)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	_, err = c.GC(ctx)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	evs := tr.Events("tally")
	require.Len(t, evs, 2)
	for _, e := range evs {
		require.Equal(t, observe.Unavailable, e.Outcome)
		require.Equal(t, 1, e.Attempts, e.Op)
		require.Equal(t, 1, e.Refused, "%s: the refused read is not counted", e.Op)
	}
}

// A Flush, Read or GC whose store panics still ends its operation (with
// the OpenTelemetry bridge, its span), with an error, as the panic goes
// on: a flush's wraps crdt.ErrAmbiguousWrite, as it may have landed.
func TestTallyPanicEndsOperation(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	tr := &obstest.Tracker{}
	// faulty is outside the observe wrapper: its hook panics before the
	// wrapped (observed) store is called, so only the driver's
	// operations are in question.
	st := faulty.NewPartitions(observe.Partitions(memory.NewPartitions(), tr), faulty.Options{
		Hook: func(context.Context, faulty.Call, bool) error { panic("store exploded") }})
	cfg := exampleConfig(&now)
	cfg.Observer = tr
	c, err := tally.New[*tally.Sum](st, "page", cfg)
	require.NoError(t, err)
	m, err := c.NewMutator()
	require.NoError(t, err)
	require.NoError(t, m.Stage(obsAdd(1)))
	require.Equal(t, "store exploded", obstest.Catch(func() { _ = m.Flush(ctx) }))
	require.Equal(t, "store exploded", obstest.Catch(func() { _, _ = c.Read(ctx) }))
	require.Equal(t, "store exploded", obstest.Catch(func() { _, _ = c.GC(ctx) }))
	require.Empty(t, tr.Problems())
	var got []string
	for _, e := range tr.Events("tally") {
		got = append(got, e.Op+" "+e.Outcome)
	}
	require.Equal(t, []string{"flush ambiguous", "read error", "gc ambiguous"}, got)
}
