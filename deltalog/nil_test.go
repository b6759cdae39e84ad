package deltalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

// TestNilLog checks the rule Log follows: read-only methods on a nil *Log
// answer as for the empty log, Merge(nil) and merging a log with itself are
// no-ops returning nil, and the mutating methods panic on a nil receiver.
func TestNilLog(t *testing.T) {
	var l *deltalog.Log
	require.Zero(t, l.Len())
	require.Zero(t, l.Value())
	r, err := l.Read()
	require.NoError(t, err)
	require.Equal(t, deltalog.Reading{}, r)
	require.Empty(t, l.Cells())
	require.True(t, l.Equal(&deltalog.Log{}))
	require.True(t, (&deltalog.Log{}).Equal(l))
	c := l.Clone()
	require.NotNil(t, c)
	require.Zero(t, c.Len())

	id := timeid.New(base)
	require.Panics(t, func() { _ = l.Add(id, 1) })
	require.Panics(t, func() { _ = l.Insert(deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 1}) })
	require.Panics(t, func() { _ = l.Merge(nil) })
	require.Panics(t, func() { _ = l.Merge(&deltalog.Log{}) })
	require.Panics(t, func() { _, _, _ = l.MergeBefore(base, base) })
	require.Panics(t, func() { _ = l.Compact() })

	var v deltalog.Log
	require.NoError(t, v.Add(id, 5))
	require.NoError(t, v.Add(timeid.New(base.Add(time.Second)), -2))
	_, ok, err := v.MergeBefore(base.Add(time.Second), base)
	require.NoError(t, err)
	require.True(t, ok)
	before := v.Clone()
	require.NoError(t, v.Merge(nil))
	require.True(t, v.Equal(before), "Merge(nil) changed the log")
	require.NoError(t, v.Merge(&v))
	require.True(t, v.Equal(before), "merging a log with itself changed it")
	require.NoError(t, v.Merge(l))
	require.True(t, v.Equal(before), "merging a nil *Log changed the log")
	require.Equal(t, int64(3), v.Value())
}

// TestNilBatch: a nil *Batch is empty (Len 0, Apply writes nothing) and Add
// panics on it.
func TestNilBatch(t *testing.T) {
	c, store, clock := newCounters(t, 0)
	var b *deltalog.Batch
	require.Zero(t, b.Len())
	require.NoError(t, c.Apply(context.Background(), b))
	require.Equal(t, calls{}, store.Calls())
	require.Panics(t, func() { b.Add("k", timeid.New(clock.Now()), 1) })
}
