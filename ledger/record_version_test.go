package ledger_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/txnrec"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestRecordVersionBound checks that a record's version is at most the
// largest a writer reaches, the sum of two seqs of tpncounter.MaxSeq
// (SPEC.md 6.11): a record at that version encodes and decodes, one above
// it is refused by the encoder and the decoder, which leaves the receiver
// unchanged.
func TestRecordVersionBound(t *testing.T) {
	require.Equal(t, 2*tpncounter.MaxSeq, txnrec.MaxVersion)
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, key := range []string{"", "wallet-7/3"} {
		top := ledger.Record{Txn: "t", Amount: 1, Writer: "w", At: at, Version: txnrec.MaxVersion, Key: key}
		b, err := top.MarshalBinary()
		require.NoError(t, err)
		var got ledger.Record
		require.NoError(t, got.UnmarshalBinary(b))
		require.Equal(t, top, got)

		over := top
		over.Version++
		_, err = over.MarshalBinary()
		require.ErrorIs(t, err, crdt.ErrInvalidAmount)
		require.ErrorContains(t, err, "transaction record at version 18446744073709551615, above the largest a writer reaches (18446744073709551614)")

		// The same bytes with the version raised by one: its last byte
		// without a key, the key's length and bytes after it with one.
		raised := bytes.Clone(b)
		raised[len(raised)-1-len(key)-min(len(key), 1)]++
		keep := ledger.Record{Txn: "keep", Amount: 1, Writer: "w", At: at, Version: 1}
		got = keep
		err = got.UnmarshalBinary(raised)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
		require.ErrorContains(t, err, "transaction record at version 18446744073709551615, above the largest a writer reaches")
		require.Equal(t, keep, got)
	}
}
