package ledger_test

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// FuzzRecordUnmarshal checks that decoding arbitrary bytes as a transaction
// record never panics, fails only with an error wrapping a crdt sentinel
// and leaves the receiver unchanged, and that whatever decodes re-encodes
// to exactly its input (the decoder accepts only the canonical form of
// either version). The seeds are records of both versions, with and
// without a key, and edits of them, and records at the largest version
// and one above it. Run it with
//
//	go test ./ledger -run '^$' -fuzz FuzzRecordUnmarshal -fuzztime 60s
func FuzzRecordUnmarshal(f *testing.F) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range []ledger.Record{
		{Txn: "pay-0", Amount: 100, Writer: "svc~abcdefgh", At: at, Version: 1},
		{Txn: "refund-9", Amount: -40, Writer: "svc~abcdefgh", At: at, Version: 1 << 40, Key: "wallet-7/3"},
		{Txn: crdt.TxnID(strings.Repeat("t", crdt.MaxIDLen)), Amount: 1, Writer: "w", At: at, Version: 2, Key: strings.Repeat("k", crdt.MaxKeyLen)},
	} {
		b, err := r.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)-1])
		f.Add(append(bytes.Clone(b), 0xc0))
	}
	// The largest version (2^64−2) and, its last byte raised, 2^64−1.
	top, err := ledger.Record{Txn: "t", Amount: 1, Writer: "w", At: at, Version: 1<<64 - 2}.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(top)
	over := bytes.Clone(top)
	over[len(over)-1]++
	f.Add(over)
	sentinels := []error{crdt.ErrCorruptEncoding, crdt.ErrTypeMismatch, crdt.ErrUnsupportedVersion, crdt.ErrTooLarge}
	f.Fuzz(func(t *testing.T, data []byte) {
		keep := ledger.Record{Txn: "keep", Amount: 1, Writer: "w", At: at, Version: 1}
		r := keep
		if err := r.UnmarshalBinary(data); err != nil {
			if !slices.ContainsFunc(sentinels, func(s error) bool { return errors.Is(err, s) }) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			if r != keep {
				t.Fatalf("a failed decode changed the receiver: %+v", r)
			}
			return
		}
		enc, err := r.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded %+v, which does not encode: %v", r, err)
		}
		if !bytes.Equal(enc, data) {
			t.Fatalf("%x decodes to %+v, which encodes as %x", data, r, enc)
		}
	})
}
