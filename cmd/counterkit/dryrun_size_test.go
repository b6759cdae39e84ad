package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestDryRunRefusesWhatTheStoreRefuses: a ledger key whose two siblings,
// each within the ledger's cap, merge above store.MaxValue (two ledgers
// that wrote at once on a nearly full key). find ledger fails, since every
// store refuses the merged value; a dry run must say the same, not that
// it would collapse the siblings, and neither changes the file.
func TestDryRunRefusesWhatTheStoreRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a key to 8 MiB: the plain pass runs it (seconds; a minute under -race)")
	}
	ctx := context.Background()
	dir := t.TempDir()
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	st := db.Siblings()
	const key = "acct/m"
	// A long transaction id per transaction, so that few make megabytes.
	txn := func(p string, i int) crdt.TxnID {
		s := fmt.Sprintf("%s-%06d-", p, i)
		return crdt.TxnID(s + strings.Repeat("x", crdt.MaxIDLen-len(s)))
	}
	c, err := tpncounter.New(tpncounter.Options{HistoryLength: 1000})
	require.NoError(t, err)
	size := func() int {
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		return len(b)
	}
	k := 0
	fill := func(n int) {
		for range n {
			a := crdt.ActorID(fmt.Sprintf("filler-%05d~aaaaaaaa", k))
			for j := range 100 {
				_, err := c.Apply(a, txn(string(a[:12]), j), 1)
				require.NoError(t, err)
			}
			k++
		}
	}
	fill(1)
	one := size()
	fill((store.MaxValue - 300_000 - one) / one) // about 26 KB each
	require.Greater(t, size(), store.MaxValue-330_000)
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, st.Put(ctx, key, "operator", b, nil))
	_, tok, err := st.Fetch(ctx, key)
	require.NoError(t, err)
	union := c.Clone()
	for i, w := range []crdt.ActorID{"svc-1~aaaaaaaa", "svc-2~bbbbbbbb"} {
		s := c.Clone()
		for j := range 640 { // about 170 KB each: the two together pass MaxValue
			_, err := s.Apply(w, txn(fmt.Sprintf("w%d", i), j), 1)
			require.NoError(t, err)
		}
		b, err := s.MarshalBinary()
		require.NoError(t, err)
		require.LessOrEqual(t, len(b), store.MaxValue)
		require.NoError(t, st.Put(ctx, key, w, b, tok))
		require.NoError(t, union.Merge(s))
	}
	b, err = union.MarshalBinary()
	require.NoError(t, err)
	require.Greater(t, len(b), store.MaxValue, "the siblings' union")
	before, _, err := st.Fetch(ctx, key)
	require.NoError(t, err)
	require.Len(t, before, 2)
	require.NoError(t, db.Close())
	for _, args := range [][]string{
		{"find", "ledger", "-store", "embedded:" + dir, key},
		{"find", "ledger", "-dry-run", "-store", "embedded:" + dir, key},
	} {
		code, out, errOut := runCmd(t, "", args...)
		require.Equal(t, 1, code, "%v: %s%s", args, out, errOut)
		require.Contains(t, errOut, "crdt.ErrTooLarge", "%v", args)
		require.NotContains(t, out, "would collapse", "%v", args)
	}
	db, err = embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer db.Close()
	after, _, err := db.Siblings().Fetch(ctx, key)
	require.NoError(t, err)
	require.ElementsMatch(t, before, after, "the key changed")
}
