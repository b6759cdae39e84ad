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

	"github.com/counterkit/counterkit/crdt"
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

// TestModelAvailabilityFollowsReplicationFactor: the model's node answers
// as one Cassandra 4.0 node holding a keyspace whose replication factor
// is in its system_schema.keyspaces: a request waits for blockFor
// replicas (ONE 1, TWO 2, THREE 3, QUORUM and LOCAL_QUORUM RF/2+1 with
// SimpleStrategy, ALL RF) of which one is alive, so on a keyspace at RF 3
// QUORUM, LOCAL_QUORUM and ALL are Unavailable (ReplicaPlans'
// assureSufficientLiveReplicas) while ONE is served.
func TestModelAvailabilityFollowsReplicationFactor(t *testing.T) {
	ctx := context.Background()
	unavailable := func(t *testing.T, err error, required int) {
		t.Helper()
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		var un *gocql.RequestErrUnavailable
		require.ErrorAs(t, err, &un)
		require.Equal(t, required, un.Required)
		require.Equal(t, 1, un.Alive)
	}
	tg := openModel(t)
	setRF := func(rf string) {
		tg.model.mu.Lock()
		tg.model.keyspaces[tg.keyspace]["replication_factor"] = rf
		tg.model.mu.Unlock()
	}
	mut := []store.Mutation{{Partition: "acct", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 10}}

	setRF("3")
	def := tg.newDB(t, Options{})
	unavailable(t, def.Siblings().Put(ctx, "k", "a", []byte("v"), nil), 2)
	unavailable(t, def.Partitions().Apply(ctx, mut), 2)
	_, _, err := def.Siblings().Fetch(ctx, "k")
	unavailable(t, err, 2)
	_, err = def.Partitions().Snapshot(ctx, "acct", 1, store.ReadComplete)
	unavailable(t, err, 3)
	local := tg.newDB(t, Options{Consistency: map[Op]gocql.Consistency{
		OpSiblingsFetch: gocql.LocalQuorum, OpSiblingsPut: gocql.LocalQuorum, OpPartitionRead: gocql.LocalQuorum, OpPartitionApply: gocql.LocalQuorum}})
	unavailable(t, local.Partitions().Apply(ctx, mut), 2)
	one := tg.newDB(t, Options{Consistency: map[Op]gocql.Consistency{OpSiblingsPut: gocql.One, OpSiblingsFetch: gocql.All}})
	require.NoError(t, one.Siblings().Put(ctx, "k", "a", []byte("v"), nil))
	_, _, err = one.Siblings().Fetch(ctx, "k")
	unavailable(t, err, 3)
	require.Equal(t, 3, replicationFactor(tg.replication(t)), "system_schema is local to the node: read at QUORUM")

	setRF("1")
	_, err = def.Partitions().Snapshot(ctx, "acct", 1, store.ReadComplete)
	require.NoError(t, err)
	got, _, err := def.Siblings().Fetch(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("v")}, got)
	three := tg.newDB(t, Options{Consistency: map[Op]gocql.Consistency{OpSiblingsPut: gocql.Three, OpSiblingsFetch: gocql.All}})
	unavailable(t, three.Siblings().Put(ctx, "k", "a", []byte("w"), nil), 3)
}
