package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// withSiblings opens the embedded store in dir, runs fn on its siblings
// and closes it.
func withSiblings(t *testing.T, dir string, fn func(ctx context.Context, sib store.Siblings)) {
	t.Helper()
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	fn(context.Background(), db.Siblings())
}

// A ledger key holding a sibling that is not a well-formed state stops
// every operation on it, find ledger included. find ledger -drop-corrupt
// reports it and writes the merge of the others over it: the key reads
// and writes again, with the value the well-formed siblings hold. It
// never drops a sibling a newer release wrote, and with nothing to keep
// it writes nothing.
func TestFindLedgerDropCorrupt(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	want := value(t, emb, "ledger", "acct-1") // two well-formed siblings
	var good []byte
	withSiblings(t, dir, func(ctx context.Context, sib store.Siblings) {
		vals, _, err := sib.Fetch(ctx, "acct-1")
		require.NoError(t, err)
		good = vals[0]
		require.NoError(t, sib.Put(ctx, "acct-1", "vandal", good[:40], nil)) // a torn state
		require.NoError(t, sib.Put(ctx, "torn-only", "vandal", good[:40], nil))
		newer := append([]byte(nil), good...)
		i := strings.Index(string(newer), "tpncounter") + len("tpncounter")
		newer[i] = 99 // envelope format version 99: a newer release's
		require.NoError(t, sib.Put(ctx, "newer", "a", good, nil))
		require.NoError(t, sib.Put(ctx, "newer", "b", newer, nil))
	})
	fails := func(want string, args ...string) string {
		t.Helper()
		code, out, errOut := runCmd(t, "", args...)
		require.Equal(t, 1, code, out+errOut)
		require.Contains(t, errOut, want)
		return errOut
	}
	fails("crdt.ErrCorruptEncoding", "get", "-store", emb, "-type", "ledger", "acct-1")
	fails("crdt.ErrCorruptEncoding", "find", "ledger", "-store", emb, "-progress", "0", "acct-1")

	code, out, errOut := runCmd(t, "", "find", "ledger", "-store", emb, "-progress", "0", "-drop-corrupt", "-dry-run", "acct-1")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `^acct-1: would drop 1 corrupt sibling \(sibling 3 of 3, 40 bytes, sha256 [0-9a-f]{16}: .*corrupt encoding.*\); would collapse 2 siblings into one value of \d+ bytes \(value 26,`, out)
	fails("crdt.ErrCorruptEncoding", "get", "-store", emb, "-type", "ledger", "acct-1") // a dry run writes nothing

	code, out, errOut = runCmd(t, "", "find", "ledger", "-store", emb, "-progress", "0", "-drop-corrupt", "acct-1")
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `^acct-1: dropped 1 corrupt sibling \(sibling 3 of 3, 40 bytes, sha256 [0-9a-f]{16}: .*\); collapsed 2 siblings \(value 26,`, out)
	require.Equal(t, strings.Replace(want, "siblings 2", "siblings 1", 1), value(t, emb, "ledger", "acct-1"))

	// Nothing to keep: refused, nothing written.
	errOut = fails("every sibling of \"torn-only\" is corrupt", "find", "ledger", "-store", emb, "-progress", "0", "-drop-corrupt", "torn-only")
	require.Contains(t, errOut, "restore the key from a backup")
	// A newer release's sibling is not dropped.
	fails("crdt.ErrUnsupportedVersion", "find", "ledger", "-store", emb, "-progress", "0", "-drop-corrupt", "newer")
	withSiblings(t, dir, func(ctx context.Context, sib store.Siblings) {
		for key, n := range map[string]int{"torn-only": 1, "newer": 2} {
			vals, _, err := sib.Fetch(ctx, key)
			require.NoError(t, err)
			require.Len(t, vals, n, key)
		}
		c, err := tpncounter.New(tpncounter.Options{})
		require.NoError(t, err)
		require.ErrorIs(t, c.UnmarshalBinary(good[:40]), crdt.ErrCorruptEncoding)
	})
}

// find ledger -drop-corrupt reads a key more than once (its own read,
// then Ledger.Find's), and a writer may add a sibling in between, so one
// corrupt sibling can be at another position in each read: it is reported
// once, by its content. This is the job's sequence on a memory store, with
// one write between the job's read and Find's.
func TestFindLedgerDropCorruptReportsEachOnce(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	l, err := ledger.New(st, "acct", ledger.Options{Actor: "a"})
	require.NoError(t, err)
	_, err = l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	vals, _, err := st.Fetch(ctx, "acct")
	require.NoError(t, err)
	require.Len(t, vals, 1)
	require.NoError(t, st.Put(ctx, "acct", "vandal", vals[0][:40], nil)) // one torn sibling

	drop := &corruptSiblings{Siblings: st, key: "acct"}
	// The job's own read (fetchSiblings, then keep).
	first, _, err := st.Fetch(ctx, "acct")
	require.NoError(t, err)
	kept := drop.keep(first)
	require.Len(t, kept, 1)

	// A writer that did not see the others adds a sibling before Find
	// reads.
	require.NoError(t, st.Put(ctx, "acct", "b", kept[0], nil))

	// Find's read, through the job's store.
	_, _, err = drop.Fetch(ctx, "acct")
	require.NoError(t, err)
	all, _, _ := st.Fetch(ctx, "acct")
	corrupt := 0
	for _, v := range all {
		if len(v) == 40 {
			corrupt++
		}
	}
	t.Logf("siblings: %d, corrupt: %d; reported: %q", len(all), corrupt, drop.last())
	require.Len(t, drop.last(), corrupt, "the job reports as many dropped siblings as there were")
}

// find ledger on the account key of a Sharded ledger finds its layout
// marker, which a plain ledger reads as corrupt: it refuses, with or
// without -drop-corrupt, and writes nothing, so that the account stays
// readable; its sub-keys are plain ledger keys.
func TestFindLedgerKeepsALayoutMarker(t *testing.T) {
	dir := t.TempDir()
	emb := "embedded:" + dir
	withSiblings(t, dir, func(ctx context.Context, sib store.Siblings) {
		s, err := ledger.NewSharded(sib, "hot", 2, ledger.Options{Actor: "a"})
		require.NoError(t, err)
		for _, x := range []crdt.TxnID{"t1", "t2", "t3"} {
			_, err := s.Credit(ctx, x, 5)
			require.NoError(t, err)
		}
	})
	for _, drop := range []bool{false, true} {
		args := []string{"find", "ledger", "-store", emb, "-progress", "0"}
		if drop {
			args = append(args, "-drop-corrupt")
		}
		code, out, errOut := runCmd(t, "", append(args, "hot")...)
		require.Equal(t, 1, code, out+errOut)
		require.Contains(t, errOut, "crdt.ErrInvalidConfig")
		require.Contains(t, errOut, `"hot" holds the layout marker of a Sharded ledger of 2 sub-keys`)
	}
	code, out, errOut := runCmd(t, "", "find", "ledger", "-store", emb, "-progress", "0", "-drop-corrupt", "hot/0")
	require.Equal(t, 0, code, out+errOut)
	withSiblings(t, dir, func(ctx context.Context, sib store.Siblings) {
		s, err := ledger.NewSharded(sib, "hot", 2, ledger.Options{Actor: "b"})
		require.NoError(t, err)
		v, err := s.Value(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 15, v)
	})
}

// get lists siblings in byte order, so that its output is the same on
// every store whatever order the store keeps them in (Riak sorts them by
// value, the embedded store by write).
func TestGetListsSiblingsInByteOrder(t *testing.T) {
	ctx := context.Background()
	var states [][]byte
	for _, actor := range []crdt.ActorID{"a", "b"} {
		st := memory.NewSiblings()
		l, err := ledger.New(st, "acct", ledger.Options{Actor: actor})
		require.NoError(t, err)
		_, err = l.Credit(ctx, crdt.TxnID("t-"+actor), 5)
		require.NoError(t, err)
		vals, _, err := st.Fetch(ctx, "acct")
		require.NoError(t, err)
		states = append(states, vals[0])
	}
	var outs []GetResult
	for _, order := range [][]int{{0, 1}, {1, 0}} {
		st := memory.NewSiblings()
		for _, i := range order {
			require.NoError(t, st.Put(ctx, "acct", crdt.ActorID(fmt.Sprint("w", i)), states[i], nil))
		}
		var res GetResult
		require.NoError(t, getSiblings(ctx, st, "acct", "ledger", decodeOpts{}, nil, &res))
		outs = append(outs, res)
	}
	require.Equal(t, outs[0], outs[1])
	require.Len(t, outs[0].Siblings, 2)
}
