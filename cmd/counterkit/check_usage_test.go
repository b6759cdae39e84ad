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
