package cassandra

// Review tests: how many tombstones the model says a read scans, against
// how Cassandra 4.0 counts them for tombstone_failure_threshold.
//
// Cassandra counts in ReadCommand's MetricRecording transformation,
// applied to the merged partition a read returns:
//
//	public Row applyToRow(Row row) { ... a deleted row (row tombstone): countTombstone ... }
//	public RangeTombstoneMarker applyToMarker(RangeTombstoneMarker marker)
//	{
//	    countTombstone(marker.clustering());
//	    return marker;
//	}
//	private void countTombstone(ClusteringPrefix<?> clustering)
//	{
//	    ++tombstones;
//	    if (tombstones > failureThreshold && respectTombstoneThresholds) ... throw TombstoneOverwhelmingException
//
// A range tombstone reaches it as markers, an open bound and a close bound
// (two ranges that touch share one boundary marker), so a read over n
// disjoint range tombstones counts 2n. The model's tombstonesIn counts
// each range once. And the merged partition holds no row or range
// tombstone that the partition-level deletion supersedes (the memtable's
// RowAndDeletionMergeIterator and the sstable merge drop shadowed data;
// the partition deletion itself is not counted), while the model counts
// them.
//
// The first matters: between 50,001 and 100,000 disjoint range
// tombstones in a partition, Cassandra aborts the read
// (crdt.ErrUnavailable) and the model serves it. The second makes the
// model stricter than the server (it aborts reads Cassandra serves).
// No integration test sits near either edge today (the range tests use
// nested ranges, which merge into one), so neither shows in a real run;
// but the model is where the README's tombstone figures
// (TestModelTransactionsTombstones' "a read scanning at most 1
// tombstone") come from.

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/store"
)

// TestReviewModelCountsRangeMarkers: three disjoint range tombstones (and
// a live row) are six markers to Cassandra's tombstone count.
func TestReviewModelCountsRangeMarkers(t *testing.T) {
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

// TestReviewModelPartitionDeletionHidesOlderTombstones: row tombstones
// older than a partition deletion are not in what Cassandra's read
// returns, so they are not counted.
func TestReviewModelPartitionDeletionHidesOlderTombstones(t *testing.T) {
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
