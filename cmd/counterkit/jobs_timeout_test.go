package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeyTimeoutNamesItsSentinel: a key that runs past -key-timeout fails
// as every failure of a job does, naming its sentinel (crdt.ErrUnavailable:
// try again) and the limit, in the table and in JSON.
func TestKeyTimeoutNamesItsSentinel(t *testing.T) {
	dir := fixture(t)
	for _, dry := range []string{"-dry-run", "-dry-run=false"} {
		code, out, errOut := runCmd(t, "", "find", "ledger", "-store", "embedded:"+dir, dry, "-key-timeout", "1ns", "acct-1")
		require.Equal(t, 1, code, errOut)
		require.Contains(t, errOut, "not done within -key-timeout 1ns")
		require.Contains(t, errOut, "(crdt.ErrUnavailable)", out)
		code, out, _ = runCmd(t, "", "find", "ledger", "-store", "embedded:"+dir, dry, "-key-timeout", "1ns", "-o", "json", "acct-1")
		require.Equal(t, 1, code)
		require.Contains(t, out, `"sentinel": "crdt.ErrUnavailable"`)
	}
}
