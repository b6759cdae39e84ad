package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README says `check` verifies "an embedded file"; a new user's first
// try, `counterkit check -store embedded:DIR` (no store kind), is a usage
// error whose message carries the command's usage text. That text must
// read as lines, not as one line of escaped newlines (\x0a): printable()
// escapes every control character of the error, newlines included.
func TestCheckUsageIsReadable(t *testing.T) {
	for _, args := range [][]string{{"check"}, {"check", "-store", "embedded:" + t.TempDir()}} {
		code, out, errOut := runCmd(t, "", args...)
		require.Equal(t, 2, code, args)
		require.Empty(t, out)
		require.Contains(t, errOut, "name the store to check")
		require.NotContains(t, errOut, `\x0a`, "usage text printed with escaped newlines: %.200s", errOut)
		require.Greater(t, strings.Count(errOut, "\n"), 3, "the usage is printed as lines")
	}
}
