package ledger

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestFlushWritesAStaleJudgedRecord: a record the ledger owes that names
// another writer's copy is judged against the ledger's own state before it
// is written (SPEC.md 6.11 step 3). When that state is older than a record
// of the transaction (a writer named there is below its record's version),
// the owed record is written as it stands: the ledger reads the account
// again only after its owed records are written, so failing it would fail
// every later call of the ledger for good. Here the next Credit writes it
// and applies.
//
// Seen to fail against a stale judgement failing owed records too (index.go
// record's `if !recs[i].confirm {` made `if true || ...`): the Credit fails
// unavailable, as would every later one.
func TestFlushWritesAStaleJudgedRecord(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	l, err := New(st, "k", Options{Actor: "a", RetireAfter: -1})
	require.NoError(t, err)
	_, err = l.Credit(ctx, "open", 1)
	require.NoError(t, err)
	// The ledger's state: its own entry and o's, holding x.
	local := l.cyc.Local.Clone()
	_, err = local.Apply("o~oooooooo", "x", 5)
	require.NoError(t, err)
	l.cyc.Local = local
	// x's live record names c at version 3; the state holds no entry of c.
	now := time.Now()
	b, err := Record{Txn: "x", Amount: 5, Writer: "c~cccccccc", At: now, Version: 3}.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, st.Put(ctx, RecordKey("k", "x"), "c~cccccccc", b, nil))
	l.unindexed = map[crdt.TxnID]Record{"x": {Txn: "x", Amount: 5, Writer: "o~oooooooo", At: now, Version: 1}}

	res, err := l.Credit(ctx, "y", 2)
	require.NoError(t, err, "the owed record is written and the call runs")
	require.Equal(t, tpncounter.Applied, res.Outcome)
	require.Empty(t, l.unindexed)
	x, err := l.lookup(ctx, "x", l.now())
	require.NoError(t, err)
	var writers []crdt.ActorID
	for _, r := range x.records {
		writers = append(writers, r.Writer)
	}
	require.ElementsMatch(t, []crdt.ActorID{"c~cccccccc", "o~oooooooo"}, writers)
}
