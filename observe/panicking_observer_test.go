package observe_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

// panicOnce is an Observer whose first event panics, as an exporter or
// span processor with a bug would.
type panicOnce struct{ armed bool }

func (p *panicOnce) Observe(context.Context, observe.Event) {
	if p.armed {
		p.armed = false
		panic("observer exploded")
	}
}

// recovered runs fn and returns what it panicked with.
func recovered(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}

// An Observer that panics makes the operation reporting to it panic, once
// the operation is done: its write has landed and is counted once, the
// driver is left usable (no lock held), and a retry of the same update
// counts once.
func TestPanickingObserverPanicsAfterTheOperation(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }

	t.Run("ledger", func(t *testing.T) {
		obs := &panicOnce{armed: true}
		l, err := ledger.New(memory.NewSiblings(), "acct-1", ledger.Options{Actor: "api-1", Observer: obs})
		require.NoError(t, err)
		require.NotNil(t, recovered(func() { _, _ = l.Update(ctx, "t1", 7) }))
		r, err := l.Update(ctx, "t1", 7)
		require.NoError(t, err)
		require.Equal(t, tpncounter.Duplicate, r.Outcome)
		v, err := l.Value(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(7), v)
	})
	t.Run("tally", func(t *testing.T) {
		obs := &panicOnce{armed: true}
		c, err := tally.New[*tally.Sum](memory.NewPartitions(), "views", tally.Options{Clock: clock, Observer: obs})
		require.NoError(t, err)
		m, err := c.NewMutator()
		require.NoError(t, err)
		require.NotNil(t, recovered(func() { _ = m.Update(ctx, func(s *tally.Sum) error { return s.Add(3) }) }))
		require.NoError(t, m.Flush(ctx), "nothing left to send")
		v, err := c.Read(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(3), v.Value())
	})
	t.Run("deltalog", func(t *testing.T) {
		obs := &panicOnce{armed: true}
		c, err := deltalog.New(memory.NewPartitions(), deltalog.Options{Clock: clock, Observer: obs})
		require.NoError(t, err)
		id := timeid.New(now)
		require.NotNil(t, recovered(func() { _ = c.Add(ctx, "dl", id, 4) }))
		require.NoError(t, c.Add(ctx, "dl", id, 4))
		r, err := c.Read(ctx, "dl")
		require.NoError(t, err)
		require.Equal(t, int64(4), r.Value)
	})
	t.Run("balance", func(t *testing.T) {
		obs := &panicOnce{armed: true}
		tx, err := balance.NewTransactions(memory.NewPartitions(), balance.TxnOptions{Options: balance.Options{Clock: clock, Observer: obs}})
		require.NoError(t, err)
		require.NotNil(t, recovered(func() { _, _ = tx.Apply(ctx, "shop-1", "t1", 5) }))
		_, err = tx.Apply(ctx, "shop-1", "t1", 5) // before a merge, a retry writes the same row again
		require.NoError(t, err)
		v, err := tx.Balance(ctx, "shop-1")
		require.NoError(t, err)
		require.Equal(t, int64(5), v)
	})
}

// startPanics is a Starter whose first Start panics, as a tracer provider
// with a bug would when an operation begins.
type startPanics struct {
	armed bool
	ended int
}

func (p *startPanics) Observe(context.Context, observe.Event) { p.ended++ }

func (p *startPanics) Start(ctx context.Context, _ observe.Event) (context.Context, func(observe.Event)) {
	if p.armed {
		p.armed = false
		panic("tracer exploded")
	}
	return ctx, nil
}

// A Starter that panics as the operation begins makes it panic too, once
// it is done, as a panicking Observer does (observe's package doc): the
// write lands and counts once. Before, the panic went on at once and the
// operation never ran (review of stop 101).
func TestPanickingStarterPanicsAfterTheOperation(t *testing.T) {
	ctx := context.Background()
	obs := &startPanics{armed: true}
	l, err := ledger.New(memory.NewSiblings(), "acct-1", ledger.Options{Actor: "api-1", Observer: obs})
	require.NoError(t, err)
	require.Equal(t, "tracer exploded", recovered(func() { _, _ = l.Update(ctx, "t1", 7) }))
	require.Zero(t, obs.ended, "the operation's panic replaces its event")
	v, err := l.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(7), v, "the update ran before the panic went on")
	r, err := l.Update(ctx, "t1", 7)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
}
