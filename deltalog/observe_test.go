package deltalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// TestObserverSeesAddsReadsAndMerges: an add whose acknowledgement is
// lost, a retry, a late add refused by the window, a read and a merge
// reach the Observer with their outcomes and counts.
func TestObserverSeesAddsReadsAndMerges(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var events []observe.Event
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy: faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodApply)})
	c, err := deltalog.New(st, deltalog.Options{Clock: func() time.Time { return now },
		Observer: observe.Func(func(_ context.Context, e observe.Event) { events = append(events, e) })})
	require.NoError(t, err)
	id := timeid.New(now)
	require.ErrorIs(t, c.Add(ctx, "views", id, 5), crdt.ErrAmbiguousWrite)
	require.NoError(t, c.Add(ctx, "views", id, 5)) // the retry rewrites the same cell
	require.ErrorIs(t, c.Add(ctx, "views", timeid.New(now.Add(-time.Hour)), 1), crdt.ErrOutsideWindow)
	r, err := c.Read(ctx, "views")
	require.NoError(t, err)
	require.Equal(t, int64(5), r.Value)
	now = now.Add(time.Hour)
	_, ok, err := c.Merge(ctx, "views")
	require.NoError(t, err)
	require.True(t, ok)

	var got []string
	for _, e := range events {
		require.Equal(t, "deltalog", e.Component)
		got = append(got, e.Op+" "+e.Outcome)
	}
	require.Equal(t, []string{"add ambiguous", "add ok", "add outside_window", "read ok", "merge ok"}, got)
	require.Equal(t, 1, events[0].Ambiguous)
	require.Equal(t, 1, events[3].Rows)
	require.Equal(t, 1, events[4].Folded)

	// A merge over the last merge cell folds the regular cells it adds
	// (observe.Event.Folded), not every update under its cell.
	for i := range 2 {
		require.NoError(t, c.Add(ctx, "views", timeid.New(now.Add(-time.Duration(i)*time.Second)), 1))
	}
	now = now.Add(time.Hour)
	events = nil
	m, ok, err := c.Merge(ctx, "views")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(3), m.Stats.Count)
	require.Len(t, events, 1)
	require.Equal(t, 2, events[0].Folded)
}
