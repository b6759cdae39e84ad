package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// TestFindLedgerDryRunRetiresAsTheRunDoes: on a key whose writer has been
// idle past RetireAfter (a service that restarted over an hour ago), the
// run retires the writer, its transactions recorded first. The dry run,
// which reads the records and keeps what it would write to them in
// memory, prints the state the run writes, and changes nothing stored
// (before, it read no record, retired no one, and printed a live writer).
func TestFindLedgerDryRunRetiresAsTheRunDoes(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	past := time.Now().Add(-72 * time.Hour)
	l, err := ledger.New(db.Siblings(), "acct-1", ledger.Options{Actor: "svc", Clock: func() time.Time { return past }})
	require.NoError(t, err)
	for i := range 2 {
		_, err = l.Credit(ctx, crdt.TxnID(fmt.Sprintf("t-%d", i)), 5)
		require.NoError(t, err)
	}
	require.NoError(t, db.Close())
	// stored returns a digest of every key and value in the store.
	stored := func() [32]byte {
		db, err := embedded.Open(dir, embedded.Options{ReadOnly: true})
		require.NoError(t, err)
		defer db.Close()
		keys, err := embedded.Keys(ctx, dir)
		require.NoError(t, err)
		h := sha256.New()
		for _, k := range keys {
			vals, _, err := db.Siblings().Fetch(ctx, k.Key)
			require.NoError(t, err)
			fmt.Fprintf(h, "%q %d %x\n", k.Key, len(vals), vals)
		}
		return [32]byte(h.Sum(nil))
	}
	before := stored()
	spec := "embedded:" + dir
	code, dry, errOut := runCmd(t, "", "find", "ledger", "-store", spec, "-dry-run", "acct-1")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, before, stored(), "the dry run changed the store")
	code, wrote, errOut := runCmd(t, "", "find", "ledger", "-store", spec, "acct-1")
	require.Equal(t, 0, code, errOut)
	require.NotEqual(t, before, stored(), "the run wrote nothing")
	tail := func(s string) string { return s[strings.Index(s, "(value"):] }
	require.Contains(t, wrote, "0 actors", "the run did not retire the idle writer")
	require.Equal(t, tail(strings.TrimSpace(wrote)), tail(strings.TrimSpace(dry)), "the dry run's line describes another state than the run's")
}
