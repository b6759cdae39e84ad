package observe_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/obstest"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// Logger logs failures (Event.Failed) at Warn and everything else,
// refusals and a caller's cancellation included, at Debug; the record
// carries component, op, outcome, duration, the non-zero counts and the
// error's text, and nothing else of the call.
func TestLoggerLevels(t *testing.T) {
	for _, c := range []struct {
		err   error
		level slog.Level
	}{
		{nil, slog.LevelDebug},
		{fmt.Errorf("k: %w", crdt.ErrInvalidAmount), slog.LevelDebug},
		{fmt.Errorf("k: %w", crdt.ErrOverflow), slog.LevelDebug},
		{fmt.Errorf("k: %w", crdt.ErrOutsideWindow), slog.LevelDebug},
		{fmt.Errorf("k: %w", crdt.ErrExpired), slog.LevelDebug},
		{context.Canceled, slog.LevelDebug},
		{context.DeadlineExceeded, slog.LevelWarn},
		{fmt.Errorf("k: %w", crdt.ErrUnavailable), slog.LevelWarn},
		{fmt.Errorf("k: %w", crdt.ErrAmbiguousWrite), slog.LevelWarn},
		{fmt.Errorf("k: %w", crdt.ErrCorruptEncoding), slog.LevelWarn},
		{fmt.Errorf("plain"), slog.LevelWarn},
	} {
		var buf bytes.Buffer
		l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		_, op := observe.Start(context.Background(), observe.Logger(l), "ledger", "update")
		op.End(observe.Event{Err: c.err, Attempts: 2, Siblings: 1})
		out := buf.String()
		require.Equal(t, 1, strings.Count(out, "\n"), out)
		require.Contains(t, out, "level="+c.level.String(), "%v: %s", c.err, out)
		require.Contains(t, out, "outcome="+observe.OutcomeOf(c.err))
		require.Contains(t, out, "attempts=2")
		require.Contains(t, out, "siblings=1")
		require.NotContains(t, out, "ambiguous=0")
		if c.err != nil {
			require.Contains(t, out, "error=")
		}
		// A Warn-only logger sees exactly the failures.
		buf.Reset()
		w := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
		_, op = observe.Start(context.Background(), observe.Logger(w), "ledger", "update")
		op.End(observe.Event{Err: c.err})
		require.Equal(t, c.level == slog.LevelWarn, buf.Len() > 0, "%v", c.err)
	}
}

// Multi of a Starter, a Logger and nil: each sees each event once,
// the Starter's end called once even when End is called twice, and an
// Operation's Event fields Component, Op, Start come from Start.
func TestMultiEndsOnce(t *testing.T) {
	sc := &scopes{}
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	m := observe.Multi(nil, sc, observe.Logger(l), nil)
	ctx, op := observe.Start(context.Background(), m, "tally", "flush")
	_, inner := observe.Start(ctx, m, "store.partitions", "apply")
	inner.End(observe.Event{Component: "spoofed"})
	op.End(observe.Event{Err: fmt.Errorf("x: %w", crdt.ErrUnavailable)})
	op.End(observe.Event{})
	require.Len(t, sc.ops, 2)
	require.Equal(t, 1, sc.ops[1].parent)
	for _, o := range sc.ops {
		require.True(t, o.ended)
	}
	require.Equal(t, 2, strings.Count(buf.String(), "\n"))
	require.Contains(t, buf.String(), "component=store.partitions")
	require.NotContains(t, buf.String(), "spoofed")
}

// A store call whose inner store panics still ends its operation (with
// the OpenTelemetry bridge, its span), with an error, and the panic goes
// on.
func TestSiblingsWrapperPanicEndsOperation(t *testing.T) {
	tr := &obstest.Tracker{}
	inner := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Hook: func(_ context.Context, c faulty.Call, after bool) error {
			if !after {
				panic("store exploded")
			}
			return nil
		}})
	st := observe.Siblings(inner, tr)
	ctx, op := observe.Start(context.Background(), tr, "ledger", "update")
	require.Equal(t, "store exploded", obstest.Catch(func() { _, _, _ = st.Fetch(ctx, "k") }))
	require.Equal(t, "store exploded", obstest.Catch(func() { _ = st.Put(ctx, "k", "a", []byte("v"), nil) }))
	op.End(observe.Event{Err: errors.New("panicked")})
	require.Empty(t, tr.Problems())
	evs := tr.Events("store.siblings")
	require.Len(t, evs, 2)
	require.Equal(t, observe.Error, evs[0].Outcome, "a read that panicked failed")
	require.Equal(t, observe.Ambiguous, evs[1].Outcome, "a write that panicked may have landed")
}

// Partitions' calls too end when the inner store panics.
func TestPartitionsWrapperPanicEndsOperation(t *testing.T) {
	tr := &obstest.Tracker{}
	inner := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Hook: func(_ context.Context, c faulty.Call, after bool) error {
			if !after {
				panic("store exploded")
			}
			return nil
		}})
	st := observe.Partitions(inner, tr)
	ctx, op := observe.Start(context.Background(), tr, "tally", "flush")
	require.NotNil(t, obstest.Catch(func() { _, _ = st.Snapshot(ctx, "p", 10, store.ReadAny) }))
	require.NotNil(t, obstest.Catch(func() { _ = st.Scan(ctx, "p", nil, store.ReadAny, func(store.Row) bool { return true }) }))
	require.NotNil(t, obstest.Catch(func() {
		_ = st.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}})
	}))
	op.End(observe.Event{Err: errors.New("panicked")})
	require.Empty(t, tr.Problems())
	var outcomes []string
	for _, e := range tr.Events("store.partitions") {
		outcomes = append(outcomes, e.Outcome)
	}
	require.Equal(t, []string{observe.Error, observe.Error, observe.Ambiguous}, outcomes)
}
