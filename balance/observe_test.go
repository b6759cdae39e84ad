package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// TestObserverSeesAddsReadsAndMerges: an add refused before it landed, its
// retry, a read and a merge reach the Observer with their outcomes and
// what the merge wrote.
func TestObserverSeesAddsReadsAndMerges(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var events []observe.Event
	st := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy: faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodApply)})
	ac, err := balance.New(st, balance.Options{Clock: func() time.Time { return now },
		Observer: observe.Func(func(_ context.Context, e observe.Event) { events = append(events, e) })})
	require.NoError(t, err)
	id := timeid.New(now)
	require.ErrorIs(t, ac.Add(ctx, "seller-1", id, 30), crdt.ErrUnavailable)
	require.NoError(t, ac.Add(ctx, "seller-1", id, 30))
	require.NoError(t, ac.Add(ctx, "seller-1", timeid.New(now), 12))
	v, err := ac.Balance(ctx, "seller-1")
	require.NoError(t, err)
	require.Equal(t, int64(42), v)
	now = now.Add(time.Hour)
	rep, err := ac.Merge(ctx, "seller-1")
	require.NoError(t, err)
	require.NotNil(t, rep.Sum)

	var got []string
	for _, e := range events {
		require.Equal(t, "balance", e.Component)
		got = append(got, e.Op+" "+e.Outcome)
	}
	require.Equal(t, []string{"add unavailable", "add ok", "add ok", "read ok", "merge ok"}, got)
	require.Equal(t, 1, events[0].Refused)
	require.Equal(t, len(rep.Tombstones)+1+len(rep.Settled)+len(rep.Deleted)+len(rep.Collected), events[4].Rows)
}
