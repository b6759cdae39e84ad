package tally_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

// A tally row folded through a time after the reader's clock was written by
// no GC (GC folds only shards that expired Grace ago), and read it would
// hide every later shard, acknowledged updates included. Read,
// ReadComplete and GC refuse it (crdt.ErrCorruptEncoding, naming the key)
// and GC writes nothing; once the clock passes it, it reads as any tally.
func TestTallyFoldedThroughTheFutureIsCorrupt(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	m := f.mutator(t)
	require.NoError(t, m.Update(ctx, func(s *tally.Sum) error { return s.Add(12) }))
	f.clock.Advance(28 * time.Hour) // m expired more than Grace ago: GC folds it
	_, err := f.c.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(12), f.value(t))

	// The tally row, damaged: folded through one hour after the clock.
	ahead := f.clock.Now().Add(time.Hour)
	sum := &tally.Sum{}
	require.NoError(t, sum.Add(12))
	b, err := tally.Tally[*tally.Sum]{FoldedThrough: ahead.UnixMicro(), State: sum}.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, f.store.Apply(ctx, []store.Mutation{{Op: store.OpPut, Partition: "views", Key: []byte("t"), Value: b, Timestamp: ahead.UnixMicro()}}))

	m2 := f.mutator(t) // a mutator never reads: its update is written
	require.NoError(t, m2.Update(ctx, func(s *tally.Sum) error { return s.Add(100) }))
	before, err := f.store.Snapshot(ctx, "views", 100, store.ReadComplete)
	require.NoError(t, err)
	for name, call := range map[string]func() error{
		"Read":         func() error { _, err := f.c.Read(ctx); return err },
		"ReadComplete": func() error { _, err := f.c.ReadComplete(ctx); return err },
		"PlanGC":       func() error { _, err := f.c.PlanGC(ctx); return err },
		"GC":           func() error { _, err := f.c.GC(ctx); return err },
	} {
		err := call()
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, name)
		require.ErrorContains(t, err, `"views" tally folded through `+ahead.Format(time.RFC3339Nano), name)
	}
	after, err := f.store.Snapshot(ctx, "views", 100, store.ReadComplete)
	require.NoError(t, err)
	require.Equal(t, before, after, "GC wrote nothing")

	// At the tally's folded_through, the row is one a GC may write: m2's
	// shard expires later and counts.
	f.clock.Advance(time.Hour)
	require.Equal(t, int64(112), f.value(t))
}
