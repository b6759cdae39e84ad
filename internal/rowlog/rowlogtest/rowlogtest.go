// Package rowlogtest runs the behaviours balancetest and deltalogtest share
// against any store.Partitions, through a Kit that names one package's
// operations.
package rowlogtest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// Clock is a settable clock for the single goroutine of a subtest.
type Clock struct{ T time.Time }

// Now returns T.
func (c *Clock) Now() time.Time { return c.T }

// Kit is one package's operations on its handle L and its batch B.
type Kit[L, B any] struct {
	Name  string // the package, which prefixes keys
	Nouns string // what keys name, in subtest names ("Accounts")
	New   func(s store.Partitions, now func() time.Time) (L, error)
	Add   func(l L, ctx context.Context, key string, id timeid.ID, amount int64) error
	Apply func(l L, ctx context.Context, b *B) error
	Batch func(b *B, key string, id timeid.ID, amount int64) // adds to b
	// Read reads key's value; Merge merges key, failing if a merge that
	// MergeAfter lets happen merged nothing.
	Read       func(l L, ctx context.Context, key string) (int64, error)
	Merge      func(l L, ctx context.Context, key string) error
	MergeAfter time.Duration
	Delete     func(l L, ctx context.Context, key string) error
	// Rows returns how many rows key's partition holds, checking each.
	Rows func(t *testing.T, s store.Partitions, key string) int
}

// Setup returns a handle on a fresh store, its clock and a key unique to t.
func (k Kit[L, B]) Setup(t *testing.T, newStore func(t *testing.T) store.Partitions) (L, store.Partitions, *Clock, string) {
	t.Helper()
	s := newStore(t)
	c := &Clock{T: time.Now().UTC().Truncate(time.Second)}
	l, err := k.New(s, c.Now)
	require.NoError(t, err)
	return l, s, c, fmt.Sprintf("%s-%s-%d", k.Name, t.Name(), time.Now().UnixNano())
}

// Value returns key's value, requiring no error.
func (k Kit[L, B]) Value(t *testing.T, l L, key string) int64 {
	t.Helper()
	v, err := k.Read(l, context.Background(), key)
	require.NoError(t, err)
	return v
}

// Run runs the shared behaviours as subtests, each with a store from newStore.
func (k Kit[L, B]) Run(t *testing.T, newStore func(t *testing.T) store.Partitions) {
	t.Helper()
	ctx := context.Background()
	t.Run("RetryIsCountedOnce", func(t *testing.T) {
		l, s, c, key := k.Setup(t, newStore)
		id := timeid.New(c.T)
		for range 3 {
			require.NoError(t, k.Add(l, ctx, key, id, 4))
		}
		require.Equal(t, 1, k.Rows(t, s, key))
		require.Equal(t, int64(4), k.Value(t, l, key))
	})
	t.Run("BatchSpans"+k.Nouns+"Atomically", func(t *testing.T) {
		l, s, c, key := k.Setup(t, newStore)
		id := timeid.New(c.T)
		var ok, bad B
		k.Batch(&ok, key, id, -30)
		k.Batch(&ok, key+"-b", id, 30)
		require.NoError(t, k.Apply(l, ctx, &ok))
		require.Equal(t, int64(-30), k.Value(t, l, key))
		require.Equal(t, int64(30), k.Value(t, l, key+"-b"))
		k.Batch(&bad, key+"-c", timeid.New(c.T), 1)
		k.Batch(&bad, key+"-d", timeid.New(c.T), 0)
		require.ErrorIs(t, k.Apply(l, ctx, &bad), crdt.ErrInvalidAmount)
		require.Zero(t, k.Rows(t, s, key+"-c"), "an invalid batch writes nothing")
	})
	t.Run(k.Nouns+"AreIsolated", func(t *testing.T) {
		l, _, c, key := k.Setup(t, newStore)
		require.NoError(t, k.Add(l, ctx, key, timeid.New(c.T), 1))
		require.NoError(t, k.Add(l, ctx, key+"x", timeid.New(c.T), 2))
		require.NoError(t, k.Delete(l, ctx, key+"x"))
		require.Equal(t, int64(1), k.Value(t, l, key))
		require.Zero(t, k.Value(t, l, key+"x"))
	})
	t.Run("DeleteRemovesEverythingAndTheKeyIsReusable", func(t *testing.T) {
		l, s, c, key := k.Setup(t, newStore)
		require.NoError(t, k.Add(l, ctx, key, timeid.New(c.T), 3))
		c.T = c.T.Add(k.MergeAfter)
		require.NoError(t, k.Merge(l, ctx, key))
		require.NoError(t, k.Delete(l, ctx, key))
		require.Zero(t, k.Rows(t, s, key))
		require.NoError(t, k.Delete(l, ctx, key), "deleting an empty partition is fine")
		require.NoError(t, k.Add(l, ctx, key, timeid.New(c.T), 2))
		require.Equal(t, int64(2), k.Value(t, l, key), "a write after the delete counts")
	})
	t.Run("CancelledContextWritesNothing", func(t *testing.T) {
		l, s, c, key := k.Setup(t, newStore)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		err := k.Add(l, cctx, key, timeid.New(c.T), 1)
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		require.Zero(t, k.Rows(t, s, key))
	})
	t.Run("CorruptRowsAreReported", func(t *testing.T) {
		l, s, c, key := k.Setup(t, newStore)
		require.NoError(t, k.Add(l, ctx, key, timeid.New(c.T), 5))
		require.NoError(t, k.Add(l, ctx, key, timeid.New(c.T), 6))
		two, err := s.Snapshot(ctx, key, 2, store.ReadComplete)
		require.NoError(t, err)
		require.Len(t, two, 2)
		rk, other := two[0].Key, two[1].Value
		c.T = c.T.Add(k.MergeAfter) // so that a merge reads the rows
		for i, r := range []struct {
			store.Row
			merged bool // read by a merge, which may start past the newest rows
		}{
			{store.Row{Key: rk, Value: other}, true},               // a key naming another row than its value
			{store.Row{Key: rk, Value: []byte("not a row")}, true}, // a value that does not decode
			{store.Row{Key: []byte("\xff"), Value: other}, true},   // a key that is not a row key, after every row
			{store.Row{Key: []byte("x"), Value: other}, false},     // and one before
		} {
			p := fmt.Sprintf("%s-%d", key, i)
			require.NoError(t, s.Apply(ctx, []store.Mutation{{Partition: p, Op: store.OpPut,
				Key: r.Key, Value: r.Value, Timestamp: c.T.UnixMicro()}}))
			_, err := k.Read(l, ctx, p)
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "read of row %d", i)
			if r.merged {
				require.ErrorIs(t, k.Merge(l, ctx, p), crdt.ErrCorruptEncoding, "merge of row %d", i)
			}
		}
	})
}
