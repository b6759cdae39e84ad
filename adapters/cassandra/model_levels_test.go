package cassandra

// The levels Cassandra 4.0 refuses whatever the replicas: a read at ANY
// and a write that is not conditional at SERIAL or LOCAL_SERIAL, both
// InvalidRequest before a replica is asked
// (org.apache.cassandra.db.ConsistencyLevel: validateForRead "ANY
// ConsistencyLevel is only supported for writes", called from
// SelectStatement.execute; validateForWrite "You must use conditional
// updates for serializable writes", called from
// ModificationStatement.executeWithoutCondition). The adapter's own levels
// never reach them (CheckConsistency), nor does a retry policy
// (CheckRetryPolicy and the statements' guard keep the level); the model
// refuses them so that a path that did would fail in CI as on a cluster.

import (
	"context"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/store"
)

// TestModelRefusesReadAtAny: a read at ANY is an InvalidRequest with
// Cassandra's message; the same read at ONE returns the row.
func TestModelRefusesReadAtAny(t *testing.T) {
	tg := openModel(t)
	db := tg.newDB(t, Options{})
	p := db.Partitions()
	require.NoError(t, p.Apply(context.Background(), []store.Mutation{
		{Partition: "acct", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 10}}))
	rows, _, err := tg.model.read(OpPartitionRead, p.selectCQL(false), []any{"acct"}, 10, nil, gocql.Any)
	var inv *gocql.RequestErrInvalid
	require.ErrorAs(t, err, &inv, "a read at ANY: Cassandra answers InvalidRequest, the model returned %d rows", len(rows))
	require.Equal(t, "ANY ConsistencyLevel is only supported for writes", inv.Message())
	_, _, err = tg.model.read(OpPartitionRead, replicationSelect, []any{"ks"}, 1, nil, gocql.Any)
	require.ErrorAs(t, err, &inv, "system_schema.keyspaces at ANY")

	rows, _, err = tg.model.read(OpPartitionRead, p.selectCQL(false), []any{"acct"}, 10, nil, gocql.One)
	require.NoError(t, err)
	require.Len(t, rows, 1)
}

// TestModelRefusesSerialWriteStatement: a single INSERT or DELETE at
// SERIAL or LOCAL_SERIAL is an InvalidRequest with Cassandra's message,
// and nothing is applied; the same write at ANY (a write level) is
// applied.
func TestModelRefusesSerialWriteStatement(t *testing.T) {
	for _, m := range []store.Mutation{
		{Partition: "acct", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 10},
		{Partition: "acct", Op: store.OpDelete, Key: []byte("k"), Timestamp: 10},
	} {
		for _, c := range []gocql.Consistency{gocql.Serial, gocql.LocalSerial} {
			tg := openModel(t)
			db := tg.newDB(t, Options{})
			stmts, err := db.Partitions().applyStmts([]store.Mutation{m})
			require.NoError(t, err)
			require.Len(t, stmts, 1)
			err = tg.model.send(stmts, c)
			var inv *gocql.RequestErrInvalid
			require.ErrorAs(t, err, &inv, "%s at %v: Cassandra answers InvalidRequest, the model applied it", stmts[0].cql, c)
			require.Equal(t, "You must use conditional updates for serializable writes", inv.Message())
			_, writes := tg.model.counts()
			require.Zero(t, writes, "a refused write is not applied")

			require.NoError(t, tg.model.send(stmts, gocql.Any))
			_, writes = tg.model.counts()
			require.Equal(t, 1, writes)
		}
	}
}
