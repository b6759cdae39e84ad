package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// With -o json a command that fails prints on standard output either
// nothing (it failed before it had a report: the error is on standard
// error alone) or its whole report as one JSON document (the jobs, with
// each key's error and sentinel), never a part of one or a table.
func TestJSONOutputOnErrors(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	missing := "embedded:" + filepath.Join(t.TempDir(), "none")
	for _, tc := range []struct {
		args   []string
		code   int
		report bool
	}{
		{[]string{"inspect", "-hex", "zz"}, 2, false},
		{[]string{"inspect", "-hex", "93aa"}, 1, false},
		{[]string{"get", "-store", emb, "-type", "ledger", "nobody"}, 1, false},
		{[]string{"get", "-store", missing, "-type", "ledger", "acct-1"}, 1, false},
		{[]string{"list", "-store", missing}, 1, false},
		{[]string{"stats", "-store", missing}, 1, false},
		{[]string{"check", "embedded", "-store", missing}, 1, false},
		{[]string{"backup", "-store", emb, "-to", dir}, 2, false},
		{[]string{"compact", "embedded", "-store", missing, "-to", filepath.Join(t.TempDir(), "x")}, 1, false},
		{[]string{"gc", "records", "-store", missing}, 1, false},
		{[]string{"find", "ledger", "-store", missing, "acct-1"}, 1, false},
		{[]string{"find", "ledger", "-store", emb, "nobody"}, 1, true},
		{[]string{"gc", "tally", "-store", emb, "nobody", "pageviews"}, 1, true},
		{[]string{"merge", "transactions", "-store", emb, "-dry-run", "nobody"}, 1, true},
		{[]string{"compact", "deltalog", "-store", emb, "-dry-run", "nobody"}, 1, true},
		{[]string{"version", "x"}, 2, false},
		{[]string{"get", "-bogus"}, 2, false},
	} {
		code, out, errOut := runCmd(t, "", append(tc.args, "-o", "json")...)
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errOut)
		require.Regexp(t, `\(crdt\.Err\w+\)\n`, errOut, "%v: the error names its sentinel", tc.args)
		if !tc.report {
			require.Empty(t, out, "%v", tc.args)
			continue
		}
		var rep jobReport
		require.NoError(t, json.Unmarshal([]byte(out), &rep), "%v: %s", tc.args, out)
		require.NoError(t, snakeCase([]byte(out)), "%v", tc.args)
		require.Equal(t, 1, rep.Failed, "%v", tc.args)
		require.Equal(t, "crdt.ErrNotFound", rep.Results[0].Sentinel, "%v", tc.args)
	}
}
