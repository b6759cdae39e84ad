package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/spf13/pflag"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// The commands read a Transactions row partition as far as Transactions
// does (SPEC.md 9.4: past MaxRows, up to MaxBacklogRows): a review found
// merge transactions -dry-run (its copy at -max-rows) and get -type
// balance of the row partition failing crdt.ErrTooLarge, with their
// default -max-rows of MaxRows, on a partition Merge and Balance read.
func TestCommandsReadABacklogPartitionAsTransactionsDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("100,500 credits")
	}
	ctx := context.Background()
	mem := memory.NewPartitions()
	const acct = "hot-1"
	o := balance.TxnOptions{Partitions: 1, RecordShards: 1}
	tx, err := balance.NewTransactions(mem, o)
	require.NoError(t, err)
	const n = balance.MaxRows + 500
	for i := range n {
		_, err := tx.Apply(ctx, acct, crdt.TxnID(fmt.Sprintf("b-%d", i)), 1)
		require.NoError(t, err)
	}
	b, err := tx.Balance(ctx, acct)
	require.NoError(t, err, "the library reads the backlog (MaxBacklogRows)")
	require.Equal(t, int64(n), b)
	part := tx.RowPartitions(acct)[0]

	// get, with its default -max-rows (testdata/help-get.txt).
	getErr := getPartition(ctx, mem, part, "balance", balance.MaxBacklogRows, store.ReadAny, &GetResult{})
	// merge transactions -dry-run, with its default -max-rows.
	fs := pflag.NewFlagSet("merge transactions", pflag.ContinueOnError)
	dry := true
	check, mk := mergeTransactionsFlags(fs, &dry)
	require.NoError(t, fs.Parse([]string{"--partitions", "1", "--record-shards", "1"}))
	require.NoError(t, check())
	_, dryErr := mk(&backend{partitions: mem})(ctx, acct)
	t.Logf("get: %v", getErr)
	t.Logf("merge transactions -dry-run: %v", dryErr)

	// The real merge (what the dry run previews) succeeds.
	_, err = tx.Merge(ctx, acct)
	require.NoError(t, err, "Transactions.Merge")
	require.NoError(t, dryErr, "merge transactions -dry-run on a partition Merge reads")
	require.NoError(t, getErr, "get -type balance on a partition Balance reads")
}
