package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// putKeys is a store that notes the keys put (one goroutine at a time).
type putKeys struct {
	store.Siblings
	keys map[string]bool
}

func (p *putKeys) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if p.keys == nil {
		p.keys = map[string]bool{}
	}
	p.keys[key] = true
	return p.Siblings.Put(ctx, key, actor, value, token)
}

// TestRecordsStore: with Options.Records the ledger, a Book and a Sharded
// ledger keep every transaction record there and nothing else, a retry
// the counter forgot is answered from it, and losing every record (the
// records store's TTL) leaves the balances whole.
func TestRecordsStore(t *testing.T) {
	ctx := context.Background()
	accounts, records := &putKeys{Siblings: memory.NewSiblings()}, &putKeys{Siblings: memory.NewSiblings()}
	opts := ledger.Options{Actor: "svc", Records: records}
	l, err := ledger.New(accounts, "plain", opts)
	require.NoError(t, err)
	b, err := ledger.NewBook(accounts, ledger.BookOptions{Options: opts})
	require.NoError(t, err)
	s, err := ledger.NewSharded(accounts, "hot", 2, opts)
	require.NoError(t, err)
	credits := []func(crdt.TxnID) (ledger.Result, error){
		func(txn crdt.TxnID) (ledger.Result, error) { return l.Credit(ctx, txn, 1) },
		func(txn crdt.TxnID) (ledger.Result, error) {
			res, err := b.Credit(ctx, "booked", txn, 1)
			return res.Result, err
		},
		func(txn crdt.TxnID) (ledger.Result, error) { return s.Credit(ctx, txn, 1) },
	}
	for i, credit := range credits {
		for n := range 80 { // past H + F = 20 (per sub-key too): the counter forgets t0
			res, err := credit(crdt.TxnID(fmt.Sprint("t", n)))
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, res.Outcome, "writer %d, t%d", i, n)
		}
		res, err := credit("t0")
		require.NoError(t, err)
		require.Equal(t, tpncounter.Duplicate, res.Outcome, "writer %d: a retry answered from its record", i)
	}
	for k := range accounts.keys {
		require.False(t, ledger.IsRecordKey(k), "accounts' store holds %q", k)
	}
	require.Len(t, records.keys, 3*80)
	for k := range records.keys {
		require.True(t, ledger.IsRecordKey(k), "records' store holds %q", k)
	}

	// Every record expired: the balances are whole.
	opts.Records = memory.NewSiblings()
	l, err = ledger.New(accounts, "plain", opts)
	require.NoError(t, err)
	v, err := l.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(80), v)
	b, err = ledger.NewBook(accounts, ledger.BookOptions{Options: opts})
	require.NoError(t, err)
	v, err = b.Value(ctx, "booked")
	require.NoError(t, err)
	require.Equal(t, int64(80), v)
	s, err = ledger.NewSharded(accounts, "hot", 2, opts)
	require.NoError(t, err)
	v, err = s.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(80), v)
}
