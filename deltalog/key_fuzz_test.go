package deltalog_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"regexp"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
)

// vectorHex returns every "hex" string of a vector file, decoded.
func vectorHex(tb testing.TB, file string) [][]byte {
	raw, err := os.ReadFile(file)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, m := range regexp.MustCompile(`"hex":\s*"([0-9a-f]*)"`).FindAllSubmatch(raw, -1) {
		if b, err := hex.DecodeString(string(m[1])); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// FuzzDecodeKey: DecodeKey never panics, refuses with a corrupt
// error, and what it accepts EncodeKey gives back byte for byte. Seeds:
// the keys of every cell the vectors hold.
//
//	go test ./deltalog -run '^$' -fuzz FuzzDecodeKey -fuzztime 30s
func FuzzDecodeKey(f *testing.F) {
	for _, b := range vectorHex(f, "../testdata/vectors/deltalog.json") {
		var c deltalog.Cell
		if c.UnmarshalBinary(b) == nil {
			f.Add(deltalog.EncodeKey(c.ID, c.Kind))
		}
	}
	f.Add(make([]byte, deltalog.RowKeyLen))
	f.Fuzz(func(t *testing.T, key []byte) {
		id, kind, err := deltalog.DecodeKey(key)
		if err != nil {
			if !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Fatalf("DecodeKey(%x): %v, not corrupt", key, err)
			}
			return
		}
		if got := deltalog.EncodeKey(id, kind); !bytes.Equal(got, key) {
			t.Fatalf("DecodeKey(%x) re-encodes as %x", key, got)
		}
		if err := id.Validate(); err != nil {
			t.Fatalf("DecodeKey(%x) accepted id %v: %v", key, id, err)
		}
	})
}
