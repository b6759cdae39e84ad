package pncounter_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/pncounter"
)

// FuzzUnmarshalBinary checks that decoding arbitrary bytes never panics,
// fails only with a crdt sentinel and leaves the receiver unchanged, and
// that whatever decodes re-encodes deterministically to bytes that decode
// to an Equal counter, and that a version 2 input re-encodes to itself (the
// decoder accepts only the canonical form). Run it with
//
//	go test ./pncounter -run '^$' -fuzz FuzzUnmarshalBinary -fuzztime 60s
func FuzzUnmarshalBinary(f *testing.F) {
	for _, tc := range goldenCases {
		b, err := build(f, tc.deltas).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, tc := range v1Cases {
		raw, err := os.ReadFile(filepath.Join("testdata", "v1", tc.name+".golden"))
		if err != nil {
			f.Fatal(err)
		}
		b, err := hex.DecodeString(strings.TrimSpace(string(raw)))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, tc := range corruptCases(f) {
		if len(tc.data) <= 1<<10 {
			f.Add(tc.data)
		}
	}
	for _, b := range vectorSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := build(t, []delta{{"keep", 5}, {"keep", -1}})
		before := c.Clone()
		if err := c.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTooLarge) &&
				!errors.Is(err, crdt.ErrTypeMismatch) && !errors.Is(err, crdt.ErrUnsupportedVersion) {
				t.Fatalf("error wraps no decoder sentinel: %v", err)
			}
			if !c.Equal(before) {
				t.Fatalf("receiver changed on error %v", err)
			}
			return
		}
		b1, err := c.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded counter does not encode: %v", err)
		}
		b2, err := c.MarshalBinary()
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("encoding is not deterministic: %x vs %x (%v)", b1, b2, err)
		}
		// A version 2 input is canonical, so it re-encodes to itself. (A
		// version 1 input re-encodes as version 2, which can be a few
		// bytes longer for actors with no shared prefix.)
		if data[2+len("pncounter")] == pncounter.FormatVersion && !bytes.Equal(b1, data) {
			t.Fatalf("canonical input %x re-encodes as %x", data, b1)
		}
		if got := c.Stats().EncodedSize; got != len(b1) {
			t.Fatalf("Stats().EncodedSize = %d, encoding has %d bytes", got, len(b1))
		}
		var again pncounter.Counter
		if err := again.UnmarshalBinary(b1); err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !again.Equal(c) || again.Value() != c.Value() {
			t.Fatalf("round trip changed the counter: %v vs %v", &again, c)
		}
		if c.Value() != c.Positive()-c.Negative() || c.Positive() < 0 || c.Negative() < 0 {
			t.Fatalf("inconsistent halves: %v", c)
		}
	})
}
