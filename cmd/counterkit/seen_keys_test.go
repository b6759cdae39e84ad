package main

import (
	"context"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/ledger"
)

// TestLedgerSightingsKey: a ledger whose writer no record dates (its
// record deleted, as a TTL would) stores its sighting under
// ledger.SeenKey. list shows that key; get -type ledger refuses it as a
// ledger.seen, not a ledger's state (crdt.ErrTypeMismatch); inspect
// decodes its value and names the writer and when it was first seen.
func TestLedgerSightingsKey(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	now := epoch
	opts := ledger.Options{Actor: "svc", Clock: func() time.Time { return now }}
	first, err := ledger.New(db.Siblings(), "acct", opts)
	require.NoError(t, err)
	_, err = first.Credit(ctx, "pay-1", 10)
	require.NoError(t, err)
	rec := ledger.RecordKey("acct", "pay-1")
	_, token, err := db.Siblings().Fetch(ctx, rec)
	require.NoError(t, err)
	require.NoError(t, db.Siblings().Delete(ctx, rec, token))
	now = now.Add(time.Minute)
	next, err := ledger.New(db.Siblings(), "acct", opts)
	require.NoError(t, err)
	_, err = next.Credit(ctx, "pay-2", 5)
	require.NoError(t, err)
	values, _, err := db.Siblings().Fetch(ctx, ledger.SeenKey("acct"))
	require.NoError(t, err)
	require.Len(t, values, 1)
	require.NoError(t, db.Close())

	spec := "embedded:" + dir
	code, out, errOut := runCmd(t, "", "list", "-store", spec)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, ledger.SeenKey("acct"))

	code, _, errOut = runCmd(t, "", "get", "-store", spec, "-type", "ledger", ledger.SeenKey("acct"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "is a ledger.seen, not a tpncounter")
	require.True(t, strings.HasSuffix(errOut, "(crdt.ErrTypeMismatch)\n"), errOut)

	code, out, errOut = runCmd(t, "", "inspect", "-hex", hex.EncodeToString(values[0]))
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, string(first.Writer())+"  1        2020-03-01T12:01:00Z")
}
