package cassandratest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
	"github.com/counterkit/counterkit/store"
)

// The largest batch the adapter sends, store.MaxBatch range deletes over
// as many rows, is answered (and its range tombstones keep shadowing what
// they cover): the double checked every stored row against every
// deletion at each deletion, n³ steps, and did not answer within minutes
// while it held its lock (review H of stop 101). The bound below is a
// hang guard, not a speed measure: the test takes a quarter of a second.
func TestLargestRangeDeleteBatchIsAnswered(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	s := session(t, srv, "")
	keyspaceWithSchema(t, s, "ks", 1)
	ctx := context.Background()
	db, err := cassandra.New(s, "ks", cassandra.Options{})
	require.NoError(t, err)
	n := store.MaxBatch
	var puts, dels []store.Mutation
	for i := range n {
		k := []byte(fmt.Sprintf("%08d", i))
		puts = append(puts, store.Mutation{Partition: "p", Op: store.OpPut, Key: k, Value: []byte{1}, Timestamp: 5})
		// Older than the rows: each stays, and every tombstone is kept.
		dels = append(dels, store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: k, End: append(k, 0), Timestamp: 4})
	}
	for lo := 0; lo < n; lo += 500 {
		require.NoError(t, db.Partitions().Apply(ctx, puts[lo:lo+500]))
	}
	done := make(chan error, 1)
	go func() { done <- db.Partitions().Apply(ctx, dels) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(2 * time.Minute):
		t.Fatal("a batch of 10,000 range deletes was not answered in 2 minutes")
	}
	// A row written below a tombstone is not stored; one above is.
	require.NoError(t, db.Partitions().Apply(ctx, []store.Mutation{
		{Partition: "p", Op: store.OpPut, Key: []byte("00000007"), Value: []byte{2}, Timestamp: 3},
		{Partition: "p", Op: store.OpPut, Key: []byte("00000008"), Value: []byte{3}, Timestamp: 6},
	}))
	rows, err := db.Partitions().Snapshot(ctx, "p", n+1, store.ReadComplete)
	require.NoError(t, err)
	require.Len(t, rows, n)
	require.Equal(t, []byte{1}, rows[7].Value)
	require.Equal(t, []byte{3}, rows[8].Value)
}
