package gcounter_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
)

// FuzzUnmarshalBinary checks that decoding arbitrary bytes never panics,
// fails only with a crdt sentinel and leaves the receiver unchanged, and
// that whatever decodes re-encodes deterministically to bytes that decode
// to an Equal counter, and that a version 2 input re-encodes to itself (the
// decoder accepts only the canonical form). The seeds are the vectors
// (testdata/vectors), the golden encodings of both versions and every rejected input of corruptCases.
// Run it with
//
//	go test ./gcounter -run '^$' -fuzz FuzzUnmarshalBinary -fuzztime 60s
func FuzzUnmarshalBinary(f *testing.F) {
	for _, tc := range goldenCases {
		b, err := build(f, tc.pairs).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, tc := range v1Cases {
		f.Add(readGolden(f, filepath.Join("testdata", "v1", tc.name+".golden")))
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
		c := build(t, []pair{{"keep", 5}})
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
		// version 1 input re-encodes as version 2, which is one byte per
		// actor longer for actors that share no prefix.)
		switch data[2+len("gcounter")] {
		case gcounter.FormatVersion:
			if !bytes.Equal(b1, data) {
				t.Fatalf("canonical input %x re-encodes as %x", data, b1)
			}
		case 1:
			if len(b1) > len(data)+c.Len() {
				t.Fatalf("version 1 input of %d bytes and %d actors re-encodes as %d bytes", len(data), c.Len(), len(b1))
			}
		default:
			t.Fatalf("decoded a version %d input", data[2+len("gcounter")])
		}
		if got := c.Stats().EncodedSize; got != len(b1) {
			t.Fatalf("Stats().EncodedSize = %d, encoding has %d bytes", got, len(b1))
		}
		again := gcounter.New()
		if err := again.UnmarshalBinary(b1); err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !again.Equal(c) || again.Value() != c.Value() {
			t.Fatalf("round trip changed the counter: %v vs %v", again, c)
		}
		var sum int64
		for _, n := range c.All() {
			if n <= 0 {
				t.Fatalf("decoded a non-positive count %d", n)
			}
			sum += n
		}
		if sum != c.Value() {
			t.Fatalf("cached total %d, counts sum to %d", c.Value(), sum)
		}
	})
}
