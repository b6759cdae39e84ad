package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/counterkit/counterkit/adapters/embedded"
)

// Commands that only read (get, check, backup's source, every job with
// -dry-run) open the embedded store read-only: a store of an older format
// (here format 1, which README.md advises keeping as the way back from
// damage its upgrade cannot see) is not upgraded, not a byte of it changes
// (found by a review: each of them upgraded it in place); a job that
// writes does upgrade it.
func TestReadingCommandsChangeNothing(t *testing.T) {
	dir := fixture(t)
	path := filepath.Join(dir, embedded.FileName)
	b, err := bolt.Open(path, 0o600, nil)
	require.NoError(t, err)
	require.NoError(t, b.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket([]byte("meta"))
		f := bytes.Clone(m.Get([]byte("format")))
		f[len(f)-2], f[len(f)-1] = 0, 1
		if err := m.Put([]byte("format"), f); err != nil {
			return err
		}
		return m.Delete([]byte("digest"))
	}))
	require.NoError(t, b.Close())
	before, err := os.ReadFile(path)
	require.NoError(t, err)
	emb := "embedded:" + dir
	for _, args := range [][]string{
		{"get", "-store", emb, "-type", "ledger", "acct-1"},
		{"get", "-store", emb, "-type", "balance", "seller-1"},
		{"check", "embedded", "-store", emb},
		{"backup", "-store", emb, "-to", filepath.Join(t.TempDir(), "copy")},
		{"find", "ledger", "-store", emb, "-dry-run", "acct-1"},
		{"gc", "tally", "-store", emb, "-dry-run", "pageviews"},
		{"compact", "deltalog", "-store", emb, "-dry-run", "dl-1"},
		{"merge", "balance", "-store", emb, "-dry-run", "seller-1"},
	} {
		code, _, errOut := runCmd(t, "", args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		after, err := os.ReadFile(path)
		require.NoError(t, err)
		require.True(t, bytes.Equal(before, after), "%v changed the store", args)
	}
	code, _, errOut := runCmd(t, "", "gc", "tally", "-store", emb, "pageviews")
	require.Equal(t, 0, code, errOut)
	st, err := embedded.ReadStats(t.Context(), dir)
	require.NoError(t, err)
	require.Equal(t, embedded.FormatVersion, st.FormatVersion, "a job that writes upgrades the store")
}

// compact embedded and backup -store take a -to directory that holds only
// an interrupted copy (embedded.CopyTempName), as the library does; a
// restore (-from) still wants it empty (a review found the command
// refusing what Compact accepts).
func TestCopyIntoAnInterruptedCopy(t *testing.T) {
	dir := fixture(t)
	interrupted := func() string {
		to := filepath.Join(t.TempDir(), "to")
		require.NoError(t, os.MkdirAll(to, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(to, embedded.CopyTempName), []byte("half a copy"), 0o600))
		return to
	}
	for _, args := range [][]string{
		{"compact", "embedded", "-store", "embedded:" + dir, "-to"},
		{"backup", "-store", "embedded:" + dir, "-to"},
	} {
		to := interrupted()
		code, _, errOut := runCmd(t, "", append(args, to)...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		_, err := os.Stat(filepath.Join(to, embedded.CopyTempName))
		require.True(t, os.IsNotExist(err), "%v left the partial copy", args)
	}
	code, _, errOut := runCmd(t, "", "backup", "-from", "http://127.0.0.1:1/backup", "-to", interrupted())
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "is not empty")
}

// Error lines escape control characters and bytes that are not UTF-8: a
// key read from standard input, or a backup server's answer, cannot drive
// the terminal (a review found both echoed raw).
func TestErrorLinesArePrintable(t *testing.T) {
	require.Equal(t, `x\x1b[2Jy \xff tab	é`, printable("x\x1b[2Jy \xff tab\té"))
	dir := fixture(t)
	_, _, errOut := runCmd(t, "x\x1b[2Jy\n", "find", "ledger", "-store", "embedded:"+dir, "-dry-run")
	require.Contains(t, errOut, `x\x1b[2Jy`)
	require.NotContains(t, errOut, "\x1b")
}

// get with the -type of another partition type says the rows may be
// another type's, not only damaged (a review: a healthy tally read as a
// deltalog was called damaged).
func TestGetPartitionOfAnotherType(t *testing.T) {
	dir := fixture(t)
	code, _, errOut := runCmd(t, "", "get", "-store", "embedded:"+dir, "-type", "deltalog", "pageviews")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "damaged, or another type's")
	require.Contains(t, errOut, "crdt.ErrCorruptEncoding")
}
