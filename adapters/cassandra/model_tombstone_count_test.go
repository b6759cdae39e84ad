package cassandra

// How many tombstones the model says a read scans, against how Cassandra
// 4.0 counts them for tombstone_failure_threshold. Cassandra counts in
// ReadCommand's MetricRecording transformation, applied to the merged
// partition a read returns: one per deleted row (applyToRow) and one per
// range tombstone marker (applyToMarker). A range tombstone reaches it as
// markers, an open bound and a close bound (two ranges that touch share
// one boundary marker), so a read over n disjoint range tombstones counts
// 2n. And the merged partition holds no row or range tombstone that the
// partition deletion supersedes, so none of those is counted. A model
// that counted each range once would serve reads, between 50,001 and
// 100,000 disjoint ranges, that Cassandra aborts.

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestModelCountsRangeMarkers: three disjoint range tombstones (and
// a live row) are six markers to Cassandra's tombstone count.
func TestModelCountsRangeMarkers(t *testing.T) {
	p, m := modelPartitions(t, Options{})
	ctx := context.Background()
	const part = "ranges"
	muts := []store.Mutation{{Partition: part, Op: store.OpPut, Key: []byte("z"), Value: []byte("v"), Timestamp: 1}}
	for i := 0; i < 3; i++ {
		lo := fmt.Sprintf("r%d", i)
		muts = append(muts, store.Mutation{Partition: part, Op: store.OpDeleteRange, Key: []byte(lo), End: []byte(lo + "\x00"), Timestamp: 2})
	}
	require.NoError(t, p.Apply(ctx, muts))
	rows, err := p.Snapshot(ctx, part, 10, store.ReadComplete)
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.Equal(t, 6, m.tombstones(part),
		"a full read meets an open and a close marker per disjoint range tombstone, and Cassandra counts each")
}

// TestModelPartitionDeletionHidesOlderTombstones: row tombstones
// older than a partition deletion are not in what Cassandra's read
// returns, so they are not counted.
func TestModelPartitionDeletionHidesOlderTombstones(t *testing.T) {
	p, m := modelPartitions(t, Options{})
	ctx := context.Background()
	const part = "dropped"
	var muts []store.Mutation
	for i := 0; i < 5; i++ {
		muts = append(muts, store.Mutation{Partition: part, Op: store.OpDelete, Key: []byte(fmt.Sprint("k", i)), Timestamp: 1})
	}
	muts = append(muts, store.Mutation{Partition: part, Op: store.OpDeletePartition, Timestamp: 2})
	require.NoError(t, p.Apply(ctx, muts))
	require.Equal(t, 0, m.tombstones(part),
		"the partition deletion at 2 supersedes the row tombstones at 1: a read returns none of them")
}

// TestModelRewrittenRowIsNoTombstone: a row deleted and then written
// again above the delete has live data, and Cassandra 4.0 counts no
// tombstone for it (ReadCommand's applyToRow counts a row's deletion only
// when the row has no live data and no dead cell). A model counting the
// delete would refuse reads Cassandra serves.
func TestModelRewrittenRowIsNoTombstone(t *testing.T) {
	p, m := modelPartitions(t, Options{})
	ctx := context.Background()
	const part = "rewritten"
	require.NoError(t, p.Apply(ctx, []store.Mutation{
		{Partition: part, Op: store.OpDelete, Key: []byte("k"), Timestamp: 5},
		{Partition: part, Op: store.OpDelete, Key: []byte("d"), Timestamp: 5},
	}))
	require.Equal(t, 2, m.tombstones(part))
	require.NoError(t, p.Apply(ctx, []store.Mutation{{Partition: part, Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 10}}))
	require.Equal(t, 1, m.tombstones(part), "k is live above its delete; only d is a tombstone")
	require.NoError(t, p.Apply(ctx, []store.Mutation{{Partition: part, Op: store.OpPut, Key: []byte("k"), Value: []byte("w"), Timestamp: 3}}))
	require.Equal(t, 1, m.tombstones(part), "a write below the delete changes nothing")

	// Siblings: each actor's Put deletes the other's row, which its next
	// Put writes again: one row is deleted at a time.
	s, sm := modelSiblings(t)
	const key = "two-actors"
	for i := 0; i < 4; i++ {
		actor := crdt.ActorID([]string{"a", "b"}[i%2])
		_, tok, err := s.Fetch(ctx, key)
		require.NoError(t, err)
		require.NoError(t, s.Put(ctx, key, actor, []byte(fmt.Sprint("v", i)), tok))
		want := min(i, 1)
		require.Equal(t, want, sm.tombstones(key), "after put %d by %s", i, actor)
	}
}

// TestModelExpiredRewriteIsOneTombstone: a row deleted, written again
// above the delete with a TTL, and expired is one tombstone to a read
// (its dead cell; applyToRow then does not count the row's deletion).
func TestModelExpiredRewriteIsOneTombstone(t *testing.T) {
	tg := openModel(t)
	ctx := context.Background()
	s := tg.newDB(t, Options{SiblingsTTL: 10 * time.Second, Now: tg.now}).Siblings()
	const key = "expiring"
	require.NoError(t, s.Put(ctx, key, "a", []byte("a1"), nil))
	_, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.NoError(t, s.Put(ctx, key, "b", []byte("b1"), tok)) // deletes a's row
	tg.sleep(time.Second)
	require.NoError(t, s.Put(ctx, key, "a", []byte("a2"), nil)) // a's row again, above the delete
	requireRows(t, s, key, "a2", "b1")
	require.Zero(t, tg.model.scanned)
	tg.sleep(8500 * time.Millisecond) // b's row expires; a's, a second younger, not yet
	requireRows(t, s, key, "a2")
	require.Equal(t, 1, tg.model.scanned, "b's expired cell")
	tg.sleep(time.Second)
	requireRows(t, s, key)
	require.Equal(t, 2, tg.model.scanned, "two expired cells; a's deletion under its expired cell is not counted again")
}
