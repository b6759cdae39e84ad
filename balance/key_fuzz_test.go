package balance_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"testing"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
)

// FuzzDecodeKey: DecodeKey never panics, refuses with a corrupt
// error, and what it accepts EncodeKey gives back byte for byte. Seeds:
// the keys of every row the vectors hold.
//
//	go test ./balance -run '^$' -fuzz FuzzDecodeKey -fuzztime 30s
func FuzzDecodeKey(f *testing.F) {
	raw, err := os.ReadFile("../testdata/vectors/balance.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`"hex":\s*"([0-9a-f]*)"`).FindAllSubmatch(raw, -1) {
		b, err := hex.DecodeString(string(m[1]))
		if err != nil {
			continue
		}
		var r balance.Row
		if r.UnmarshalBinary(b) == nil {
			f.Add(balance.EncodeKey(r.Key()))
		}
	}
	f.Add(make([]byte, balance.RowKeyLen))
	f.Fuzz(func(t *testing.T, key []byte) {
		k, err := balance.DecodeKey(key)
		if err != nil {
			if !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Fatalf("DecodeKey(%x): %v, not corrupt", key, err)
			}
			return
		}
		if got := balance.EncodeKey(k); !bytes.Equal(got, key) {
			t.Fatalf("DecodeKey(%x) re-encodes as %x", key, got)
		}
	})
}
