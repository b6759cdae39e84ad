package ledger_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestGroupCommitUndecodableRecordFailsOnlyItsCall: in one group, a
// transaction whose record key holds bytes that are no record (damaged,
// another type's state, a record of a newer format) fails alone, with
// crdt.ErrCorruptEncoding beside the decoder's own sentinel, after one
// read of that record; the group's other members are applied by the
// group's one Put, and the undecodable values stay as they were.
func TestGroupCommitUndecodableRecordFailsOnlyItsCall(t *testing.T) {
	ctx := context.Background()
	r := newGroupRig(t)
	g := gcounter.New()
	require.NoError(t, g.Increment("a", 1))
	gb, err := g.MarshalBinary()
	require.NoError(t, err)
	rec, err := (ledger.Record{Txn: "newer", Amount: 1, Writer: "w", At: time.Now(), Version: 1}).MarshalBinary()
	require.NoError(t, err)
	newer := []byte(strings.Replace(string(rec), "ledger.txn\x01", "ledger.txn\x03", 1))
	bad := map[crdt.TxnID]struct {
		value []byte
		also  error
	}{
		"damaged":  {[]byte("not a record"), crdt.ErrCorruptEncoding},
		"gcounter": {gb, crdt.ErrTypeMismatch},
		"newer":    {newer, crdt.ErrUnsupportedVersion},
	}
	for x, b := range bad {
		require.NoError(t, r.inner.Put(ctx, ledger.RecordKey("k", x), "w", b.value, nil))
	}
	l := r.ledger(ledger.Options{})
	reqs := []req{{txn: "good1", amount: 2}, {txn: "damaged", amount: 3}, {txn: "gcounter", amount: 4}, {txn: "good2", amount: 5}, {txn: "newer", amount: 6}}
	out := r.runGroup(l, "lead", reqs, nil)
	require.NoError(t, out[0].err)
	for i, q := range reqs {
		a := out[1+i]
		if b, ok := bad[q.txn]; ok {
			require.ErrorIs(t, a.err, crdt.ErrCorruptEncoding, "%s", q.txn)
			require.ErrorIs(t, a.err, b.also, "%s", q.txn)
			sibs, _, err := r.inner.Fetch(ctx, ledger.RecordKey("k", q.txn))
			require.NoError(t, err)
			require.Equal(t, [][]byte{b.value}, sibs, "%s: the record key changed", q.txn)
			continue
		}
		require.NoError(t, a.err, "%s", q.txn)
		require.Equal(t, tpncounter.Applied, a.res.Outcome, "%s", q.txn)
	}
	require.EqualValues(t, 2, r.puts.Load(), "the lead's Put and one for the group")
	require.Equal(t, int64(1+2+5), r.stored().Value())
}
