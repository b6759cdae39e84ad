package ckotel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/observe/ckotel"
)

// A span keeps keys and ids out of its data, a refusal is not a span
// error, and a balance account's conflicts reach the gauge (found by a
// review: the exception event carried the error's text, key and id
// included; a refused update had status Error; balance reports conflicts
// with no actors, which the gauge skipped).
func TestSpanErrorsAndConflicts(t *testing.T) {
	s := newSDK()
	obs := s.bridge(t, ckotel.Options{})
	const key, id = "customer-jane.doe@example.com", "9424-txn"
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, e := range []observe.Event{
		{Component: "deltalog", Op: "update", Outcome: observe.OutsideWindow,
			Err: fmt.Errorf("deltalog %q: id %s: %w", key, id, crdt.ErrOutsideWindow)},
		{Component: "deltalog", Op: "update", Outcome: observe.Invalid,
			Err: fmt.Errorf("deltalog %q: id %s: %w", key, id, crdt.ErrInvalidAmount)},
		{Component: "ledger", Op: "update", Outcome: observe.Unavailable, Attempts: 1, Refused: 1,
			Err: fmt.Errorf("ledger %q: txn %s: %w", key, id, crdt.ErrUnavailable)},
		{Component: "balance", Op: "read", Outcome: observe.OK, Conflicts: 1},
	} {
		e.Start, e.Duration = at, time.Millisecond
		obs.Observe(context.Background(), e)
	}
	spans := s.spans.Ended()
	require.Len(t, spans, 4)
	for i, sp := range spans {
		failed := i == 2
		require.Equal(t, failed, sp.Status().Code == codes.Error, "span %d: status %v", i, sp.Status())
		require.Equal(t, failed, len(sp.Events()) > 0, "span %d: exception event", i)
		for _, ev := range sp.Events() {
			for _, kv := range ev.Attributes {
				v := kv.Value.Emit()
				require.False(t, strings.Contains(v, key) || strings.Contains(v, id), "span %d: %s = %q", i, kv.Key, v)
			}
		}
		for _, kv := range sp.Attributes() {
			v := kv.Value.Emit()
			require.False(t, strings.Contains(v, key) || strings.Contains(v, id), "span %d: %s = %q", i, kv.Key, v)
		}
	}
	m, ok := find(s.metrics(t), "counterkit.conflicts")
	require.True(t, ok, "the conflicts gauge")
	var got []int64
	for _, p := range m.Data.(metricdata.Gauge[int64]).DataPoints {
		got = append(got, p.Value)
	}
	require.Equal(t, []int64{1}, got)
}

// TestNewRefusesMalformedDBNames: a DBSystem that is not a db.system.name
// (capitals, a space, a leading digit) and a namespace or
// collection with a control character or invalid UTF-8 are refused with
// crdt.ErrInvalidConfig; the well-formed ones are accepted.
func TestNewRefusesMalformedDBNames(t *testing.T) {
	for _, o := range []ckotel.Options{
		{DBSystem: "Cassandra DB"}, {DBSystem: "has space"}, {DBSystem: " "}, {DBSystem: "1kv"},
		{DBNamespace: "ks\x00"}, {DBCollection: "tbl\n"}, {DBCollection: "\xff"},
	} {
		if _, err := ckotel.New(o); !errors.Is(err, crdt.ErrInvalidConfig) {
			t.Errorf("%+v: %v, want crdt.ErrInvalidConfig", o, err)
		}
	}
	for _, o := range []ckotel.Options{{DBSystem: "cassandra"}, {DBSystem: "other_sql"}, {DBSystem: "aws.dynamodb"}, {DBSystem: "inhouse-kv", DBNamespace: "billing", DBCollection: "balances"}} {
		if _, err := ckotel.New(o); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
