package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A backup directory given as an argument, as cp or rsync take it, is a
// usage error that names the flag to use, and writes nothing there.
func TestBackupDirectoryAsArgumentNamesTo(t *testing.T) {
	src := fixture(t)
	for _, args := range [][]string{
		{"backup", "-store", "embedded:" + src},
		{"backup", "-from", "http://localhost:1/debug/counterkit/backup"},
	} {
		to := filepath.Join(t.TempDir(), "copy")
		code, out, errOut := runCmd(t, "", append(args, to)...)
		require.Equal(t, 2, code, args)
		require.Empty(t, out)
		require.Contains(t, errOut, "takes no arguments")
		require.Contains(t, errOut, "-to "+to, "the message says how to name the backup directory")
		_, err := os.Stat(to)
		require.True(t, os.IsNotExist(err), "nothing written to %s", to)
	}
}
