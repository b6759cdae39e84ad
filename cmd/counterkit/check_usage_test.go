package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// `counterkit check` with no store kind, or a -store that names no
// checkable kind alone, is a usage error whose message carries the
// command's usage text. That text must read as lines, not as one line of
// escaped newlines (\x0a): printable() escapes every control character of
// the error, newlines included.
func TestCheckUsageIsReadable(t *testing.T) {
	for _, args := range [][]string{{"check"}, {"check", "-store", "riak:127.0.0.1:1/t/b"}} {
		code, out, errOut := runCmd(t, "", args...)
		require.Equal(t, 2, code, args)
		require.Empty(t, out)
		require.Contains(t, errOut, "name the store to check")
		require.NotContains(t, errOut, `\x0a`, "usage text printed with escaped newlines: %.200s", errOut)
		require.Greater(t, strings.Count(errOut, "\n"), 3, "the usage is printed as lines")
	}
}

// TestCheckStoreEmbeddedAlone checks that `counterkit check -store
// embedded:DIR`, a new user's first try (the README says `check` verifies
// an embedded file), runs check embedded, in every spelling of the flag.
func TestCheckStoreEmbeddedAlone(t *testing.T) {
	dir := fixture(t)
	_, want, _ := runCmd(t, "", "check", "embedded", "-store", "embedded:"+dir)
	for _, args := range [][]string{
		{"-store", "embedded:" + dir},
		{"--store", "embedded:" + dir},
		{"-store=embedded:" + dir},
		{"-timeout", "1m", "--store=embedded:" + dir},
	} {
		code, out, errOut := runCmd(t, "", append([]string{"check"}, args...)...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		require.Equal(t, want, out, args)
	}
	// What check embedded refuses, it refuses so named too.
	code, _, errOut := runCmd(t, "", "check", "-store", "embedded:"+dir, "extra")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "check embedded takes -store embedded:DIR and no arguments")
}

// TestCheckStoreFlagSpellings: without a kind, check runs check embedded
// only when the -store pflag would take (the last, before any "--") names
// an embedded store; a cassandra or riak -store, a -store with no value,
// one after "--", and one that is the value of another flag are usage
// errors (exit 2), and nothing is checked.
func TestCheckStoreFlagSpellings(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"-store", "cassandra:h1/ks"}, 2},
		{[]string{"-store", "riak:a/b/c"}, 2},
		{[]string{"-store"}, 2},
		{[]string{"-timeout", "1m", "-store"}, 2},
		{[]string{"--", "-store", emb}, 2},
		{[]string{"-store=", emb}, 2},
		{[]string{"-store=embedded:"}, 2},
		{[]string{"-store", "EMBEDDED:" + dir}, 2},
		{[]string{"--store=" + emb, "-store", "riak:a/b/c"}, 2},
		{[]string{"-store", "riak:a/b/c", "--store=" + emb}, 0},
		{[]string{"-o", "-store", emb}, 2},
		{[]string{"-store", "-store", emb}, 2},
		{[]string{"-store", emb, "-h"}, 0},
	} {
		code, out, errOut := runCmd(t, "", append([]string{"check"}, c.args...)...)
		require.Equal(t, c.code, code, "%q: %s", c.args, errOut)
		if c.code == 2 {
			require.Empty(t, out, c.args)
			require.Contains(t, errOut, "(crdt.ErrInvalidConfig)", c.args)
		}
	}
}
