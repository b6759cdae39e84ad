package cassandra

import (
	"context"
	"errors"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestIntegrationOversizedMutation: Cassandra 4.0 does not check
// max_mutation_size (16 MiB by default) on the coordinator; the replica's
// commit log refuses the mutation (CommitLog.add) and the coordinator
// answers a write failure, which the adapter reports as an ambiguous
// write. Nothing is applied. (The coordinator's "Rejected an oversized
// mutation" InvalidRequest, mapped to crdt.ErrTooLarge, is later
// versions'.) Apply never sends such a batch (store.MaxBatchBytes), so the
// batch, one partition and two rows of 8.5 MiB, goes through the
// adapter's write path directly.
func TestIntegrationOversizedMutation(t *testing.T) { eachTarget(t, integrationOversizedMutation) }

func integrationOversizedMutation(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	p := db.Partitions()
	ctx := context.Background()
	part := uniqueKey(t, "huge")
	value := make([]byte, 8<<20+512<<10)
	var stmts []stmt
	for _, k := range []string{"a", "b"} {
		stmts = append(stmts, p.mutationStmt(store.Mutation{Partition: part, Op: store.OpPut, Key: []byte(k), Value: value, Timestamp: 100}))
	}
	err := db.write(ctx, OpPartitionApply, stmts)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "%v", err)
	var wf *gocql.RequestErrWriteFailure
	require.ErrorAs(t, err, &wf)
	var inv *gocql.RequestErrInvalid
	require.False(t, errors.As(err, &inv), "4.0 does not refuse it as an invalid request: %v", err)
	rows, err := p.Snapshot(ctx, part, 2, store.ReadComplete)
	require.NoError(t, err)
	require.Empty(t, rows, "the refused mutation applies nothing")
}
