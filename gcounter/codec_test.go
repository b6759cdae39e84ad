package gcounter_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

type pair struct {
	actor crdt.ActorID
	n     int64
}

// goldenCases are states whose encodings are locked in testdata/. Pairs are
// listed out of order on purpose: the encoding must sort them.
var goldenCases = []struct {
	name  string
	pairs []pair
}{
	{"empty", nil},
	{"single", []pair{{"a", 1}}},
	{"several", []pair{{"carol", 1}, {"alice", 3}, {"bob", 7}}},
	{"unicode", []pair{{"日本", 2}, {"Zoë", 5}, {"🦀", 9}, {"zoe", 1}}},
	{"int_widths", []pair{{"u8", 255}, {"fix", 127}, {"u16", 65535}, {"u32", 1<<32 - 1}, {"u64", 1 << 32}, {"u8min", 128}}},
	{"max_total", []pair{{"b", 1}, {"a", math.MaxInt64 - 1}}},
	{"long_actor", []pair{{crdt.ActorID(strings.Repeat("x", crdt.MaxIDLen)), 42}, {"short", 1}}},
}

func build(t testing.TB, pairs []pair) *gcounter.Counter {
	c := gcounter.New()
	for _, p := range pairs {
		require.NoError(t, c.Increment(p.actor, p.n))
	}
	return c
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, tc.pairs)
			got, err := c.MarshalBinary()
			require.NoError(t, err)
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(got)+"\n"), 0o644))
			}
			raw, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./gcounter -run TestGolden -update to create it")
			want, err := hex.DecodeString(strings.TrimSpace(string(raw)))
			require.NoError(t, err)
			require.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got), "encoding changed: a format change needs a new Version")

			// The locked bytes decode to the same state, whose value is
			// the plain sum of the listed increments.
			dec := gcounter.New()
			require.NoError(t, dec.UnmarshalBinary(want))
			require.True(t, dec.Equal(c))
			var sum int64
			for _, p := range tc.pairs {
				sum += p.n
				require.Equal(t, p.n, dec.Get(p.actor))
			}
			require.Equal(t, sum, dec.Value())
		})
	}
}

// env builds an envelope with the msgpack library directly, independent of
// the package's encoder, with integers in their smallest form so that each
// case is rejected for the reason its name gives (an int64 would otherwise
// be written as d3 and rejected as non-canonical).
func env(t testing.TB, tag string, version any, body any) []byte {
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	e.UseCompactInts(true)
	require.NoError(t, e.Encode([]any{tag, version, body}))
	return buf.Bytes()
}

func p(actor any, n any) []any { return []any{actor, n} }

// corruptCases are inputs that must be rejected with the given sentinel.
func corruptCases(t testing.TB) []struct {
	name string
	data []byte
	want error
} {
	valid := env(t, "gcounter", 1, []any{p("a", 1)})
	huge := make([]byte, gcounter.MaxEncodedSize+1)
	copy(huge, valid)
	tooMany := append(env(t, "gcounter", 1, nil)[:11], 0xdd, 0, 0, 0x75, 0x31) // array32 of MaxActors+1
	u64, err := msgpack.Marshal(uint64(math.MaxInt64) + 1)
	require.NoError(t, err)
	bigCount := append(append(env(t, "gcounter", 1, nil)[:11], 0x91, 0x92, 0xa1, 'a'), u64...)
	return []struct {
		name string
		data []byte
		want error
	}{
		{"empty input", nil, crdt.ErrCorruptEncoding},
		{"not an array", []byte{0xc0}, crdt.ErrCorruptEncoding},
		{"short envelope", mustMarshal(t, []any{"gcounter", 1}), crdt.ErrCorruptEncoding},
		// wire.NewDecoder reports a 4-element envelope as ErrTooLarge
		// (reported as a wire finding); either sentinel rejects it.
		{"long envelope", mustMarshal(t, []any{"gcounter", 1, []any{}, 0}), errCorruptOrTooLarge},
		{"wrong tag", env(t, "pncounter", 1, []any{[]any{}, []any{}}), crdt.ErrTypeMismatch},
		{"tag not a string", mustMarshal(t, []any{7, 1, []any{}}), crdt.ErrCorruptEncoding},
		{"version 0", env(t, "gcounter", 0, []any{}), crdt.ErrUnsupportedVersion},
		{"version 2", env(t, "gcounter", 2, []any{}), crdt.ErrUnsupportedVersion},
		{"negative version", env(t, "gcounter", -1, []any{}), crdt.ErrCorruptEncoding},
		{"nil body", env(t, "gcounter", 1, nil), crdt.ErrCorruptEncoding},
		{"map body", env(t, "gcounter", 1, map[string]int{"a": 1}), crdt.ErrCorruptEncoding},
		{"unsorted", env(t, "gcounter", 1, []any{p("b", 1), p("a", 1)}), crdt.ErrCorruptEncoding},
		{"duplicate", env(t, "gcounter", 1, []any{p("a", 1), p("a", 2)}), crdt.ErrCorruptEncoding},
		{"zero count", env(t, "gcounter", 1, []any{p("a", 0)}), crdt.ErrCorruptEncoding},
		{"negative count", env(t, "gcounter", 1, []any{p("a", -1)}), crdt.ErrCorruptEncoding},
		{"float count", env(t, "gcounter", 1, []any{p("a", 1.5)}), crdt.ErrCorruptEncoding},
		{"string count", env(t, "gcounter", 1, []any{p("a", "1")}), crdt.ErrCorruptEncoding},
		{"count above MaxInt64", bigCount, crdt.ErrCorruptEncoding},
		{"total overflow", env(t, "gcounter", 1, []any{p("a", int64(math.MaxInt64)), p("b", 1)}), crdt.ErrCorruptEncoding},
		{"empty actor", env(t, "gcounter", 1, []any{p("", 1)}), crdt.ErrCorruptEncoding},
		{"control char actor", env(t, "gcounter", 1, []any{p("a\nb", 1)}), crdt.ErrCorruptEncoding},
		{"invalid utf8 actor", env(t, "gcounter", 1, []any{p("\xff", 1)}), crdt.ErrCorruptEncoding},
		{"long actor", env(t, "gcounter", 1, []any{p(strings.Repeat("x", crdt.MaxIDLen+1), 1)}), crdt.ErrCorruptEncoding},
		{"actor as bin", env(t, "gcounter", 1, []any{p([]byte("a"), 1)}), crdt.ErrCorruptEncoding},
		{"pair of three", env(t, "gcounter", 1, []any{[]any{"a", 1, 2}}), crdt.ErrCorruptEncoding},
		{"pair of one", env(t, "gcounter", 1, []any{[]any{"a"}}), crdt.ErrCorruptEncoding},
		{"trailing byte", append(valid, 0xc0), crdt.ErrCorruptEncoding},
		{"too many actors", tooMany, crdt.ErrTooLarge},
		{"oversized input", huge, crdt.ErrTooLarge},
	}
}

// errCorruptOrTooLarge matches either sentinel, for the one case where the
// shared wire decoder and the format's intent disagree.
var errCorruptOrTooLarge = anyOf{crdt.ErrCorruptEncoding, crdt.ErrTooLarge}

type anyOf []error

func (a anyOf) Error() string { return "one of " + fmt.Sprint([]error(a)) }

func matches(err, want error) bool {
	if set, ok := want.(anyOf); ok {
		for _, w := range set {
			if errors.Is(err, w) {
				return true
			}
		}
		return false
	}
	return errors.Is(err, want)
}

func mustMarshal(t testing.TB, v any) []byte {
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestUnmarshalRejects(t *testing.T) {
	for _, tc := range corruptCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			c := build(t, []pair{{"keep", 5}})
			before := c.Clone()
			err := c.UnmarshalBinary(tc.data)
			require.True(t, matches(err, tc.want), "got %v, want %v", err, tc.want)
			require.True(t, c.Equal(before), "receiver changed on error")
		})
	}
}

func TestUnmarshalRejectsEveryTruncation(t *testing.T) {
	for _, tc := range goldenCases {
		b, err := build(t, tc.pairs).MarshalBinary()
		require.NoError(t, err)
		for i := range len(b) {
			c := gcounter.New()
			require.ErrorIs(t, c.UnmarshalBinary(b[:i]), crdt.ErrCorruptEncoding, "%s cut at %d", tc.name, i)
		}
	}
}

func TestUnmarshalReplacesState(t *testing.T) {
	src := build(t, []pair{{"x", 3}})
	b, err := src.MarshalBinary()
	require.NoError(t, err)
	c := build(t, []pair{{"old", 9}})
	require.NoError(t, c.UnmarshalBinary(b))
	require.True(t, c.Equal(src))
	require.Zero(t, c.Get("old"))
	require.NoError(t, c.Increment("x", 1), "decoded counter is usable")
	require.EqualValues(t, 4, c.Value())
}
