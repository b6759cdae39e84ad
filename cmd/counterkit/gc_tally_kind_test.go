package main

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

// TestGCTallyWrongKind checks gc tally's error for a -kind other than the
// stored one: a type mismatch only, naming both kinds, when every row
// reads as the stored kind; the tally's own error, damage included, when
// a row is damaged besides.
func TestGCTallyWrongKind(t *testing.T) {
	dir := fixture(t)
	emb := "embedded:" + dir
	code, out, errOut := runCmd(t, "", "gc", "tally", "-store", emb, "-progress", "0", "-kind", "max", "pageviews")
	require.Equal(t, 1, code, errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, `pageviews: counterkit: encoded type does not match: tally "pageviews" holds aggregate kind "sum", not "max" (-kind); without -kind the job reads the kind from the stored rows (crdt.ErrTypeMismatch)`)
	require.NotContains(t, errOut, "crdt.ErrCorruptEncoding")

	// A damaged shard row after the first: the bytes are damaged, whatever
	// the kind.
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	require.NoError(t, db.Partitions().Apply(context.Background(), []store.Mutation{{Partition: "pageviews", Op: store.OpPut,
		Key: tally.ShardRowKey("zz-damaged"), Value: []byte{0xc1}, Timestamp: 1}}))
	require.NoError(t, db.Close())
	code, _, errOut = runCmd(t, "", "gc", "tally", "-store", emb, "-progress", "0", "-kind", "max", "pageviews")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "(crdt.ErrCorruptEncoding, crdt.ErrTypeMismatch)")
	require.NotContains(t, errOut, "holds aggregate kind")
	code, _, errOut = runCmd(t, "", "gc", "tally", "-store", emb, "-progress", "0", "pageviews")
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, `shard "zz-damaged"`)
	require.Contains(t, errOut, "(crdt.ErrCorruptEncoding)")
}

// TestJoinActorsStaysShort: a gc tally line names at most maxListed shards
// and counts the rest, so that folding a million shards prints a line, not
// megabytes.
func TestJoinActorsStaysShort(t *testing.T) {
	ids := make([]crdt.ActorID, maxListed+2)
	for i := range ids {
		ids[i] = crdt.ActorID(fmt.Sprintf("s%02d", i))
	}
	require.Equal(t, "s00, s01, s02, s03, s04, s05, s06, s07, s08, s09", joinActors(ids[:maxListed]))
	require.Equal(t, "s00, s01, s02, s03, s04, s05, s06, s07, s08, s09, and 2 more", joinActors(ids))
	require.Equal(t, "", joinActors(nil))
}
