package cassandratest_test

import (
	"context"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
)

// TestBatchSizesAsCassandra40: the double sizes a batch as Cassandra 4.0
// does (BatchStatement.verifyBatchSize over IMutation.dataSize), so it
// refuses what 4.0 refuses:
//
//   - 1,500 rows of a 2-byte key and a 1-byte value over two partitions:
//     4.0 counts each row 36 bytes besides its key and value, at least
//     58,500 bytes in all, over the 51,200 of
//     batch_size_fail_threshold_in_kb ("Batch too large"); Cassandra 3.x's
//     count (16 a row: 28,500 bytes), which the double once used, takes it;
//   - a mutation is one partition key of one keyspace, every table's part
//     together: two tables' 30 KiB rows under one key are one mutation,
//     which no batch limit applies to, and two tables' 9 MiB rows under
//     one key one mutation over the commit log's 16 MiB (a write failure).
func TestBatchSizesAsCassandra40(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	s := session(t, srv, "")
	keyspaceWithSchema(t, s, "ks", 1)
	ctx := context.Background()
	const insert = `INSERT INTO "ks"."counterkit_partitions" (partition, key, value) VALUES (?, ?, ?) USING TIMESTAMP ?`

	b := s.Batch(gocql.LoggedBatch)
	for i := range 1500 {
		b.Query(insert, []string{"p0", "p1"}[i%2], []byte{byte(i >> 8), byte(i)}, []byte{1}, int64(100))
	}
	require.Equal(t, "Batch too large", invalidMessage(t, b.ExecContext(ctx)))
	iter := s.Query(`SELECT key FROM "ks"."counterkit_partitions" WHERE partition = ?`, "p0").Iter()
	require.Zero(t, iter.NumRows(), "the refused batch applied nothing")
	require.NoError(t, iter.Close())

	other, err := cassandra.New(s, "ks", cassandra.Options{TablePrefix: "other_"})
	require.NoError(t, err)
	require.NoError(t, other.CreateSchema(ctx))
	const insertOther = `INSERT INTO "ks"."other_partitions" (partition, key, value) VALUES (?, ?, ?) USING TIMESTAMP ?`

	b = s.Batch(gocql.LoggedBatch)
	v := make([]byte, 30<<10)
	b.Query(insert, "p", []byte("k"), v, int64(1))
	b.Query(insertOther, "p", []byte("k"), v, int64(1))
	require.NoError(t, b.ExecContext(ctx), "one keyspace and partition key: one mutation, exempt from the batch limit")

	b = s.Batch(gocql.UnloggedBatch)
	v = make([]byte, 9<<20)
	b.Query(insert, "q", []byte("k"), v, int64(1))
	b.Query(insertOther, "q", []byte("k"), v, int64(1))
	var wf *gocql.RequestErrWriteFailure
	require.ErrorAs(t, b.ExecContext(ctx), &wf, "one mutation of over 18 MiB: the commit log refuses it")
}
