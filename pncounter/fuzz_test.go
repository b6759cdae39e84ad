package pncounter_test

import (
	"math"
	"math/big"
	"testing"

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
	var states []*pncounter.Counter
	for _, tc := range goldenCases {
		states = append(states, build(f, tc.deltas))
	}
	var v1 []string
	for _, tc := range v1Cases {
		v1 = append(v1, tc.name)
	}
	format.Corpus(f, states, v1, corruptCases(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, ok := format.Decode(t, build(t, []delta{{"keep", 5}, {"keep", -1}}), data)
		if !ok {
			return
		}
		v := new(big.Int).Sub(c.P().BigValue(), c.N().BigValue())
		if v.Cmp(c.BigValue()) != 0 || c.Positive() < 0 || c.Negative() < 0 {
			t.Fatalf("inconsistent halves: %v", c)
		}
		if w := c.Value(); (v.IsInt64() && w != v.Int64()) || (!v.IsInt64() && w != map[int]int64{1: math.MaxInt64, -1: math.MinInt64}[v.Sign()]) {
			t.Fatalf("Value %d of %s", w, v)
		}
	})
}
