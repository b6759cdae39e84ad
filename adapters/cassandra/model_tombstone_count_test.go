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

	"github.com/stretchr/testify/require"

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
