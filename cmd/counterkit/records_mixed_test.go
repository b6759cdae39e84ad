package main

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
)

// TestGCRecordsBesideOtherData: a store that holds, beside recordsStore's
// records, a Sharded account (its layout marker, a sub-key and an old
// record), a partition whose name starts with the records' prefix and
// another type's state under a record key. gc records deletes the 7 old
// records of acct and nothing else, keeping the Sharded's, which dates
// its sub-key's live writer: the other keys and the partition stay, the
// two keys that hold no record are kept and reported, each as an error
// of its own (one line, one JSON entry), wrapping crdt.ErrCorruptEncoding.
func TestGCRecordsBesideOtherData(t *testing.T) {
	ctx := context.Background()
	dir := recordsStore(t)
	db, err := embedded.Open(dir, embedded.Options{})
	require.NoError(t, err)
	g := gcounter.New()
	require.NoError(t, g.Increment("a", 1))
	gb, err := g.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, db.Siblings().Put(ctx, ledger.RecordKeyPrefix+"gcounter", "x", gb, nil))
	require.NoError(t, db.Partitions().Apply(ctx, []store.Mutation{{Partition: ledger.RecordKeyPrefix + "rows", Op: store.OpPut, Key: []byte("r"), Value: []byte("v"), Timestamp: time.Now().UnixMicro()}}))
	s, err := ledger.NewSharded(db.Siblings(), "hot", 3, ledger.Options{Actor: "s", Clock: func() time.Time { return time.Now().Add(-48 * time.Hour) }})
	require.NoError(t, err)
	_, err = s.Credit(ctx, "h1", 1)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	before, err := embedded.Keys(ctx, dir)
	require.NoError(t, err)

	code, out, errOut := runCmd(t, "", "gc", "records", "-store", "embedded:"+dir, "-o", "json")
	require.Equal(t, 1, code, errOut)
	var res gcRecordsResult
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	require.Equal(t, [5]int{7, 2, 1, 0, 2}, [5]int{res.Deleted, res.Kept, res.Dating, res.Empty, res.Damaged})
	require.Len(t, res.Errors, 2, "one error per damaged key: %q", res.Errors)
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	require.Len(t, lines, 2, errOut)
	for _, l := range lines {
		require.NotContains(t, l, `\x0a`)
		require.Contains(t, l, "crdt.ErrCorruptEncoding")
	}

	after, err := embedded.Keys(ctx, dir)
	require.NoError(t, err)
	kept := slices.DeleteFunc(slices.Clone(before), func(k embedded.KeyInfo) bool {
		return k.Shape == embedded.ShapeSiblings && ledger.IsRecordKey(k.Key) && !slices.Contains(after, k)
	})
	require.Equal(t, kept, after)
	require.Len(t, before, len(after)+7)
	require.Contains(t, after, embedded.KeyInfo{Shape: embedded.ShapePartition, Key: ledger.RecordKeyPrefix + "rows", Entries: 1, Bytes: after[len(after)-1].Bytes})
}
