package main

import (
	"encoding/hex"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
)

// Adversarial review probes of the command.

// sentinelTail is how every failing command's last line ends: the
// sentinels its error wraps, in parentheses.
var sentinelTail = regexp.MustCompile(`\((crdt|embedded)\.Err[A-Za-z]+(, (crdt|embedded)\.Err[A-Za-z]+)*\)\n$`)

// TestCommandsOnAnEmptyStore: every command on a store that holds nothing
// (a fresh directory made by embedded.Open) answers as documented:
// list, stats, check, backup and compact succeed with 0 keys; get is
// crdt.ErrNotFound (exit 1) for every type.
func TestCommandsOnAnEmptyStore(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	require.NoError(t, db.Close())
	spec := "embedded:" + dir
	for _, args := range [][]string{
		{"list", "-store", spec},
		{"stats", "-store", spec},
		{"check", "embedded", "-store", spec},
		{"backup", "-store", spec, "-to", filepath.Join(t.TempDir(), "b")},
		{"compact", "embedded", "-store", spec, "-to", filepath.Join(t.TempDir(), "c")},
	} {
		code, out, errOut := runCmd(t, "", args...)
		require.Equal(t, 0, code, "%v: %s%s", args, out, errOut)
	}
	for _, typ := range slices.Concat(siblingTypes, partitionTypes, []string{"transactions"}) {
		code, out, errOut := runCmd(t, "", "get", "-store", spec, "-type", typ, "nothing")
		require.Equal(t, 1, code, "%s: %s%s", typ, out, errOut)
		require.Empty(t, out, typ)
		require.Contains(t, errOut, "crdt.ErrNotFound", typ)
	}
}

// TestGetAsAnotherType: a key read as another type than its own is
// an error with a sentinel (exit 1), never a value printed with exit 0.
func TestGetAsAnotherType(t *testing.T) {
	dir := fixture(t)
	spec := "embedded:" + dir
	own := map[string]string{"acct-1": "ledger", "views": "gcounter", "temp": "pncounter",
		"pageviews": "tally", "dl-1": "deltalog", "seller-1": "balance"}
	// Each encoding names its type: every other type must refuse it.
	for key, typ := range own {
		for _, other := range slices.Concat(siblingTypes, partitionTypes) {
			if other == typ {
				continue
			}
			code, out, errOut := runCmd(t, "", "get", "-store", spec, "-type", other, key)
			if code == 0 {
				t.Errorf("get -type %s %s (a %s): exit 0:\n%s", other, key, typ, out)
				continue
			}
			require.Equal(t, 1, code, "get -type %s %s: %s", other, key, errOut)
			require.Regexp(t, sentinelTail, errOut, "get -type %s %s", other, key)
		}
	}
}

// TestInspectMutatedEncodings: inspect on every sample encoding with
// each byte changed (three ways) and cut at every length exits 0 or 1,
// naming a sentinel on 1, and never panics (run is called in this
// process: a panic fails the test binary).
func TestInspectMutatedEncodings(t *testing.T) {
	n := 0
	for name, good := range samples(t) {
		try := func(b []byte) {
			n++
			code, _, errOut := runCmd(t, "", "inspect", "-hex", hex.EncodeToString(b))
			switch code {
			case 0:
			case 1:
				if !sentinelTail.MatchString(errOut) {
					t.Fatalf("%s %x: exit 1 without a sentinel: %s", name, b, errOut)
				}
			default:
				t.Fatalf("%s %x: exit %d: %s", name, b, code, errOut)
			}
		}
		for i := range good {
			for _, x := range []byte{0x00, 0xff, good[i] ^ 0x01} {
				b := slices.Clone(good)
				b[i] = x
				try(b)
			}
			try(good[:i])
		}
	}
	t.Logf("%d inputs", n)
}

// TestCheckPassesUndecodableValuesGetReports: the store's "bad" sibling holds bytes
// no counter decodes; check embedded (documented as Verify then a read of
// every key through the adapter, not a decode) passes. Recorded so that
// an operator knows what check does not find: get finds it.
func TestCheckPassesUndecodableValuesGetReports(t *testing.T) {
	dir := fixture(t)
	code, out, errOut := runCmd(t, "", "check", "embedded", "-store", "embedded:"+dir)
	require.Equal(t, 0, code, out+errOut)
	code, _, errOut = runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "ledger", "bad")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "crdt.ErrCorruptEncoding")
}
