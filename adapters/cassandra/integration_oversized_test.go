package cassandra

import (
	"context"
	"errors"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestIntegrationOversizedMutation: a batch of one partition and two rows
// of 8.5 MiB, above max_mutation_size (16 MiB by default). Cassandra 4.0
// does not check max_mutation_size on the coordinator: the replica's
// commit log refuses the mutation (CommitLog.add) and the coordinator
// answers a write failure, which the adapter reports as an ambiguous
// write; the model answers so. The server may refuse the request before
// that, for its frame (above native_transport_max_frame_size_in_mb, 16
// MiB: protocol v4, and v5 where a patch release limits its messages),
// which the adapter reports as crdt.ErrTooLarge. (The coordinator's
// "Rejected an oversized mutation", also crdt.ErrTooLarge, is later
// versions'.) Either way nothing is applied. Apply never sends such a
// batch (store.MaxBatchBytes), so it goes through the adapter's write
// path directly.
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
	var wf *gocql.RequestErrWriteFailure
	var inv *gocql.RequestErrInvalid
	switch {
	case errors.As(err, &wf):
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "%v", err)
		t.Logf("refused by the commit log: %v", err)
	case errors.As(err, &inv) && strings.Contains(inv.Message(), "Request is too big"):
		require.ErrorIs(t, err, crdt.ErrTooLarge, "%v", err)
		t.Logf("refused for its frame: %v", err)
	default:
		t.Fatalf("want a write failure, or a refusal of the request for its size: %v", err)
	}
	rows, err := p.Snapshot(ctx, part, 2, store.ReadComplete)
	require.NoError(t, err)
	require.Empty(t, rows, "the refused mutation applies nothing")
}
