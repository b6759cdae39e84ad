package gcounter_test

import (
	"math/big"
	"testing"

	"github.com/counterkit/counterkit/gcounter"
)

// FuzzUnmarshalBinary checks that decoding arbitrary bytes never panics,
// fails only with a crdt sentinel and leaves the receiver unchanged, and
// that whatever decodes re-encodes deterministically to bytes that decode
// to an Equal counter, and that a version 2 input re-encodes to itself (the
// decoder accepts only the canonical form). The seeds are the vectors
// (testdata/vectors), the golden encodings of both versions and every
// rejected input of corruptCases. Run it with
//
//	go test ./gcounter -run '^$' -fuzz FuzzUnmarshalBinary -fuzztime 60s
func FuzzUnmarshalBinary(f *testing.F) {
	var states []*gcounter.Counter
	for _, tc := range goldenCases {
		states = append(states, build(f, tc.pairs))
	}
	var v1 []string
	for _, tc := range v1Cases {
		v1 = append(v1, tc.name)
	}
	format.Corpus(f, states, v1, corruptCases(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, enc, ok := format.Decode(t, build(t, []pair{{"keep", 5}}), data)
		if !ok {
			return
		}
		// A version 1 input re-encodes as version 2, which is one byte per
		// actor longer for actors that share no prefix.
		switch v := data[2+len("gcounter")]; v {
		case gcounter.FormatVersion:
		case 1:
			if len(enc) > len(data)+c.Len() {
				t.Fatalf("version 1 input of %d bytes and %d actors re-encodes as %d bytes", len(data), c.Len(), len(enc))
			}
		default:
			t.Fatalf("decoded a version %d input", v)
		}
		sum := new(big.Int)
		for _, n := range c.All() {
			if n <= 0 {
				t.Fatalf("decoded a non-positive count %d", n)
			}
			sum.Add(sum, big.NewInt(n))
		}
		if sum.Cmp(c.BigValue()) != 0 {
			t.Fatalf("cached total %s, counts sum to %s", c.BigValue(), sum)
		}
	})
}
