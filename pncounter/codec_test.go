package pncounter_test

import (
	"encoding/hex"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/pncounter"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

type delta struct {
	actor crdt.ActorID
	d     int64
}

// goldenCases are states whose encodings are locked in testdata/, given as
// the signed deltas that build them (out of actor order on purpose).
var goldenCases = []struct {
	name   string
	deltas []delta
}{
	{"empty", nil},
	{"only_p", []delta{{"b", 2}, {"a", 1}}},
	{"only_n", []delta{{"a", -3}}},
	{"mixed", []delta{{"carol", 5}, {"alice", -2}, {"bob", 7}, {"alice", 4}, {"carol", -1}}},
	{"unicode", []delta{{"日本", -2}, {"Zoë", 5}, {"🦀", 9}, {"🦀", -9}}},
	{"extremes", []delta{{"p", math.MaxInt64}, {"n", -math.MaxInt64}}},
	{"long_actor", []delta{{crdt.ActorID(strings.Repeat("x", crdt.MaxIDLen)), -42}, {"short", 1 << 40}}},
}

func build(t testing.TB, deltas []delta) *pncounter.Counter {
	c := pncounter.New()
	for _, d := range deltas {
		require.NoError(t, c.Apply(d.actor, d.d))
	}
	return c
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, tc.deltas)
			got, err := c.MarshalBinary()
			require.NoError(t, err)
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(got)+"\n"), 0o644))
			}
			raw, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./pncounter -run TestGolden -update to create it")
			want, err := hex.DecodeString(strings.TrimSpace(string(raw)))
			require.NoError(t, err)
			require.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got), "encoding changed: a format change needs a new Version")

			dec := pncounter.New()
			require.NoError(t, dec.UnmarshalBinary(want))
			require.True(t, dec.Equal(c))
			var sum, pos, neg int64
			for _, d := range tc.deltas {
				sum += d.d
				if d.d > 0 {
					pos += d.d
				} else {
					neg -= d.d
				}
			}
			require.Equal(t, sum, dec.Value())
			require.Equal(t, pos, dec.Positive())
			require.Equal(t, neg, dec.Negative())
		})
	}
}

func env(t testing.TB, tag string, version any, body any) []byte {
	b, err := msgpack.Marshal([]any{tag, version, body})
	require.NoError(t, err)
	return b
}

func p(actor any, n any) []any { return []any{actor, n} }

func pn(p, n []any) []any { return []any{p, n} }

func corruptCases(t testing.TB) []struct {
	name string
	data []byte
	want error
} {
	valid := env(t, "pncounter", 1, pn([]any{p("a", 1)}, []any{}))
	huge := make([]byte, pncounter.MaxEncodedSize+1)
	copy(huge, valid)
	prefix := env(t, "pncounter", 1, nil)
	prefix = prefix[:len(prefix)-1]
	tooMany := append(append([]byte{}, prefix...), 0x92, 0xdd, 0, 0, 0x75, 0x31) // P: array32 of MaxActors+1
	return []struct {
		name string
		data []byte
		want error
	}{
		{"empty input", nil, crdt.ErrCorruptEncoding},
		{"wrong tag", env(t, "gcounter", 1, []any{}), crdt.ErrTypeMismatch},
		{"version 2", env(t, "pncounter", 2, pn(nil, nil)), crdt.ErrUnsupportedVersion},
		{"nil body", env(t, "pncounter", 1, nil), crdt.ErrCorruptEncoding},
		{"body of one", env(t, "pncounter", 1, []any{[]any{}}), crdt.ErrCorruptEncoding},
		{"body of three", env(t, "pncounter", 1, []any{[]any{}, []any{}, []any{}}), crdt.ErrCorruptEncoding},
		{"nil half", env(t, "pncounter", 1, []any{[]any{}, nil}), crdt.ErrCorruptEncoding},
		{"unsorted P", env(t, "pncounter", 1, pn([]any{p("b", 1), p("a", 1)}, []any{})), crdt.ErrCorruptEncoding},
		{"duplicate N", env(t, "pncounter", 1, pn([]any{}, []any{p("a", 1), p("a", 1)})), crdt.ErrCorruptEncoding},
		{"zero count", env(t, "pncounter", 1, pn([]any{}, []any{p("a", 0)})), crdt.ErrCorruptEncoding},
		{"negative count", env(t, "pncounter", 1, pn([]any{p("a", -5)}, []any{})), crdt.ErrCorruptEncoding},
		{"P overflow", env(t, "pncounter", 1, pn([]any{p("a", int64(math.MaxInt64)), p("b", 1)}, []any{})), crdt.ErrCorruptEncoding},
		{"N overflow", env(t, "pncounter", 1, pn([]any{}, []any{p("a", int64(math.MaxInt64)), p("b", 1)})), crdt.ErrCorruptEncoding},
		{"bad actor", env(t, "pncounter", 1, pn([]any{p("a\tb", 1)}, []any{})), crdt.ErrCorruptEncoding},
		{"pair of three", env(t, "pncounter", 1, pn([]any{[]any{"a", 1, 1}}, []any{})), crdt.ErrCorruptEncoding},
		{"trailing byte", append(valid, 0x00), crdt.ErrCorruptEncoding},
		{"too many actors", tooMany, crdt.ErrTooLarge},
		{"oversized input", huge, crdt.ErrTooLarge},
	}
}

func TestUnmarshalRejects(t *testing.T) {
	for _, tc := range corruptCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, []delta{{"keep", 5}, {"keep", -2}})
			before := c.Clone()
			err := c.UnmarshalBinary(tc.data)
			require.ErrorIs(t, err, tc.want)
			require.True(t, c.Equal(before), "receiver changed on error")
		})
	}
}

func TestUnmarshalRejectsEveryTruncation(t *testing.T) {
	for _, tc := range goldenCases {
		b, err := build(t, tc.deltas).MarshalBinary()
		require.NoError(t, err)
		for i := range len(b) {
			var c pncounter.Counter
			err := c.UnmarshalBinary(b[:i])
			require.True(t, errors.Is(err, crdt.ErrCorruptEncoding), "%s cut at %d: %v", tc.name, i, err)
		}
	}
}
