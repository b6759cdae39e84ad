package ckotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/observe/ckotel"
)

// The state gauges follow the last state a ledger event carries and the
// conflicts the last balance read or merge read, 0 included: a key whose
// conflicts were merged away shows 0, not the last count found. Events
// that carry no state (a ledger's failed first read, a balance
// Transactions.Recorded, another driver's) set neither. Each gauge has one
// series per component, whatever the operation and outcome: split by
// them, a superseded write's series kept its conflict after the state was
// clean (review of stop 101).
func TestStateGaugesFollowTheLastState(t *testing.T) {
	s := newSDK()
	obs := s.bridge(t, ckotel.Options{})
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range []observe.Event{
		{Component: "balance", Op: "read", Outcome: observe.OK, Conflicts: 2},
		{Component: "balance", Op: "read", Outcome: observe.OK},
		{Component: "balance", Op: "merge", Outcome: observe.OK, Conflicts: 1},
		{Component: "balance", Op: "merge", Outcome: observe.OK},
		{Component: "balance", Op: "recorded", Outcome: observe.OK},
		{Component: "ledger", Op: "update", Outcome: observe.Superseded, Actors: 5, Conflicts: 1},
		{Component: "ledger", Op: "read", Outcome: observe.OK, Actors: 3, Conflicts: 1},
		{Component: "ledger", Op: "update", Outcome: observe.Applied, Actors: 2},
		{Component: "ledger", Op: "update", Outcome: observe.Unavailable, Err: crdt.ErrUnavailable},
		{Component: "deltalog", Op: "read", Outcome: observe.OK},
	} {
		e.Start, e.Duration = at, time.Millisecond
		obs.Observe(context.Background(), e)
	}
	rm := s.metrics(t)
	points := func(name string) map[string]int64 {
		m, ok := find(rm, name)
		require.True(t, ok, name)
		got := map[string]int64{}
		for _, p := range m.Data.(metricdata.Gauge[int64]).DataPoints {
			require.Equal(t, 1, p.Attributes.Len(), "%s: %v", name, p.Attributes.ToSlice())
			c, _ := p.Attributes.Value(ckotel.ComponentKey)
			got[c.AsString()] = p.Value
		}
		return got
	}
	require.Equal(t, map[string]int64{"balance": 0, "ledger": 0}, points("counterkit.conflicts"))
	require.Equal(t, map[string]int64{"ledger": 2}, points("counterkit.state.actors"))
}
