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
// Transactions.Recorded, another driver's) set neither.
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
		{Component: "ledger", Op: "read", Outcome: observe.OK, Actors: 3, Conflicts: 1},
		{Component: "ledger", Op: "read", Outcome: observe.OK},
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
			c, _ := p.Attributes.Value(ckotel.ComponentKey)
			o, _ := p.Attributes.Value(ckotel.OperationKey)
			got[c.AsString()+" "+o.AsString()] = p.Value
		}
		return got
	}
	require.Equal(t, map[string]int64{"balance read": 0, "balance merge": 0, "ledger read": 0}, points("counterkit.conflicts"))
	require.Equal(t, map[string]int64{"ledger read": 0}, points("counterkit.state.actors"))
}
