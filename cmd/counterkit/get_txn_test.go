package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// get -txn reports what a ledger key holds of one transaction and its
// records, for a plain ledger and for a Sharded account's sub-key (whose
// records are the account's), and refuses an invalid id or another type.
func TestGetTxn(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	l, err := ledger.New(db.Siblings(), "acct-1", ledger.Options{Actor: "web-1"})
	require.NoError(t, err)
	_, err = l.Credit(ctx, "pay-1", 40)
	require.NoError(t, err)
	_, err = l.Debit(ctx, "refund-1", 15)
	require.NoError(t, err)
	s, err := ledger.NewSharded(db.Siblings(), "hot", 4, ledger.Options{Actor: "web-2"})
	require.NoError(t, err)
	_, err = s.Credit(ctx, "pay-9", 7)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	emb := "embedded:" + dir

	get := func(key, txn string) GetResult {
		t.Helper()
		code, out, errOut := runCmd(t, "", "get", "-store", emb, "-type", "ledger", "-txn", txn, "-o", "json", key)
		require.Equal(t, 0, code, errOut)
		var res GetResult
		require.NoError(t, json.Unmarshal([]byte(out), &res))
		require.NotNil(t, res.Transaction)
		return res
	}
	// record returns the fields of the only record of account in r.
	record := func(r *TxnReport, account string) map[string]any {
		t.Helper()
		for _, rs := range r.Records {
			if rs.Account == account {
				require.Equal(t, ledger.RecordKey(account, crdt.TxnID(r.ID)), rs.Key)
				require.Len(t, rs.Records, 1)
				return rs.Records[0].Fields
			}
		}
		t.Fatalf("no records of %s in %+v", account, r.Records)
		return nil
	}

	res := get("acct-1", "refund-1")
	tr := res.Transaction
	require.Equal(t, "in history", tr.Status)
	require.Equal(t, &TxnCopy{Writer: tr.Owner.Writer, Amount: -15}, tr.Owner)
	require.True(t, strings.HasPrefix(tr.Owner.Writer, "web-1"), tr.Owner.Writer)
	require.Len(t, tr.Records, 1, "acct-1 is not a sub-key")
	f := record(tr, "acct-1")
	require.Equal(t, "refund-1", f["txn"])
	require.EqualValues(t, -15, f["amount"])
	require.Equal(t, tr.Owner.Writer, f["writer"])

	tr = get("acct-1", "never-sent").Transaction
	require.Equal(t, "unknown", tr.Status)
	require.Nil(t, tr.Owner)
	require.Len(t, tr.Records, 1)
	require.Empty(t, tr.Records[0].Records)

	sub := "hot/" + strconv.Itoa(ledger.ShardOf("pay-9", 4))
	tr = get(sub, "pay-9").Transaction
	require.Equal(t, "in history", tr.Status)
	require.EqualValues(t, 7, tr.Owner.Amount)
	require.Len(t, tr.Records, 2, "the sub-key's records and the account's")
	f = record(tr, "hot")
	require.Equal(t, sub, f["key"])
	for _, rs := range tr.Records {
		if rs.Account == sub {
			require.Empty(t, rs.Records, "a Sharded account's records are under the account")
		}
	}

	// The table names the transaction, its owner and its records.
	code, out, errOut := runCmd(t, "", "get", "-store", emb, "-type", "ledger", "-txn", "pay-1", "acct-1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "\ntransaction pay-1\n")
	require.Regexp(t, `owner +web-1\S*, amount 40, folded false`, out)
	require.Regexp(t, `records of acct-1 +1 \(counterkit\.txn/`, out)
	require.Contains(t, out, "record 1 of 1 of acct-1")

	for _, args := range [][]string{
		{"-type", "ledger", "-txn", "", "acct-1"},
		{"-type", "ledger", "-txn", "bad\x00id", "acct-1"},
		{"-type", "gcounter", "-txn", "pay-1", "acct-1"},
	} {
		code, _, errOut := runCmd(t, "", append([]string{"get", "-store", emb}, args...)...)
		require.Equal(t, 2, code, "%q: %s", args, errOut)
	}
	_, _, errOut = runCmd(t, "", "get", "-store", emb, "-type", "ledger", "-txn", "", "acct-1")
	require.Contains(t, errOut, "(crdt.ErrInvalidTxnID)")
}
