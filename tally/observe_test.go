package tally_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

// TestObserverSeesFlushesAndGC: a flush whose acknowledgement is lost and
// is retried, then a GC after expiry, reach the Observer with their
// attempts, the shards folded and the GC's lag.
func TestObserverSeesFlushesAndGC(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var events []observe.Event
	cfg := exampleConfig(&now)
	cfg.Observer = observe.Func(func(_ context.Context, e observe.Event) { events = append(events, e) })
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy: faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodApply)})
	c, err := tally.New[*tally.Sum](st, "page", cfg)
	require.NoError(t, err)
	m, err := c.NewMutator()
	require.NoError(t, err)
	require.NoError(t, m.Update(ctx, func(s *tally.Sum) error { return s.Add(3) }))
	require.Len(t, events, 1)
	require.Equal(t, observe.Event{Component: "tally", Op: "flush", Outcome: observe.OK, Attempts: 2, Ambiguous: 1},
		withoutTimes(events[0], true))

	now = now.Add(tally.DefaultLifetime + tally.DefaultGrace + time.Minute)
	plan, err := c.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, plan.Folded)
	gc := events[len(events)-1]
	require.Equal(t, "gc", gc.Op)
	require.Equal(t, 1, gc.Folded)
	require.Equal(t, tally.DefaultGrace+time.Minute, gc.Lag)
	v, err := c.Read(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), v.Value())
	require.Equal(t, "read", events[len(events)-1].Op)
}

// withoutTimes zeroes the fields that vary from run to run (and Bytes when
// asked), so an event can be compared whole.
func withoutTimes(e observe.Event, noBytes bool) observe.Event {
	e.Start, e.Duration = time.Time{}, 0
	if noBytes {
		e.Bytes = 0
	}
	return e
}
