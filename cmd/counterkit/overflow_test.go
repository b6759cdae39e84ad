package main

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestGetLedgerPastInt64: two ledger states written without seeing each
// other credit 2^63 − 1 and 2 (SPEC.md 6.2). get prints the exact merged
// value, and inspect each sibling's, rather than failing or clamping; so
// does find ledger, which collapses them (it printed the value clamped).
func TestGetLedgerPastInt64(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	for i, amt := range []int64{math.MaxInt64, 2} {
		c, err := tpncounter.New(tpncounter.Options{})
		require.NoError(t, err)
		_, err = c.Apply(crdt.ActorID([]string{"a", "b"}[i]), crdt.TxnID([]string{"t1", "t2"}[i]), amt)
		require.NoError(t, err)
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		require.NoError(t, db.Siblings().Put(context.Background(), "big", "x", b, nil))
	}
	require.NoError(t, db.Close())
	code, out, errOut := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "ledger", "-o", "json", "big")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"value": 9223372036854775809`)
	require.Contains(t, out, `"value": 9223372036854775807`, "the first sibling's own value")
	for _, dry := range []string{"-dry-run", "-dry-run=false"} {
		code, out, errOut = runCmd(t, "", "find", "ledger", "-store", "embedded:"+dir, dry, "big")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "value 9223372036854775809,", dry)
	}
}
