package pncounter_test

import (
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/countertest"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/pncounter"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var format = countertest.Format[*pncounter.Counter]{Tag: "pncounter", Version: pncounter.FormatVersion, New: pncounter.New,
	Size: func(c *pncounter.Counter) int { return c.Stats().EncodedSize }}

// env encodes with the msgpack library directly.
var env = countertest.Env

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
	// Front coding: "node-1" → "node-10" shares 6 bytes, "node-2" 5.
	{"shared_prefix", []delta{{"node-2", 3}, {"node-10", -4}, {"node-1", 1}, {"node-1", -1}}},
	// "aā" and "aą" share the bytes 61 c4, but the prefix may not end
	// inside a character: the second row shares only "a".
	{"rune_boundary", []delta{{"aāx", 1}, {"aąy", -1}}},
}

// v1Cases are the golden cases locked in testdata/v1 in format version 1,
// which UnmarshalBinary still reads.
var v1Cases = goldenCases[:7]

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
			dec := format.Golden(t, tc.name, build(t, tc.deltas), *update)
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

// TestGoldenV1 decodes the version 1 golden files: a stored version 1 state
// reads back as the same counter, and re-encodes as version 2.
func TestGoldenV1(t *testing.T) {
	for _, tc := range v1Cases {
		t.Run(tc.name, func(t *testing.T) { format.GoldenV1(t, tc.name, build(t, tc.deltas)) })
	}
}

// TestFrontCoding spells out the rows of the shared_prefix case.
func TestFrontCoding(t *testing.T) {
	c := build(t, []delta{{"node-2", 3}, {"node-10", -4}, {"node-1", 1}, {"node-1", -1}})
	got, err := c.MarshalBinary()
	require.NoError(t, err)
	want := env(t, "pncounter", 2, []any{
		row(0, "node-1", 1, 1),
		row(6, "0", 0, 4), // "node-1" + "0"
		row(5, "2", 3, 0), // "node-" + "2"
	})
	require.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got))
}

// TestUnicodeFrontCoding checks, on random ids over an alphabet of one- to
// four-byte characters, that every row's suffix is valid UTF-8 (the shared
// prefix ends on a character boundary), that the encoding round-trips and
// that Stats predicts its size. Replay:
// COUNTERKIT_SEED=<seed> go test ./pncounter -run '^TestUnicodeFrontCoding$'
func TestUnicodeFrontCoding(t *testing.T) {
	format.UnicodeFrontCoding(t, func(c *pncounter.Counter, id crdt.ActorID, rng *rand.Rand) error {
		return c.Apply(id, rng.Int64N(2001)-1000)
	})
}

func p(actor any, n any) []any { return []any{actor, n} }

func pn(p, n []any) []any { return []any{p, n} }

func row(shared int, suffix any, p, n int64) []any { return []any{shared, suffix, p, n} }

func corruptCases(t testing.TB) []countertest.Case {
	v2 := func(rows ...[]any) []byte { return env(t, "pncounter", 2, rows) }
	valid := v2(row(0, "a", 1, 0))
	huge := make([]byte, pncounter.MaxEncodedSize+1)
	copy(huge, valid)
	prefix := env(t, "pncounter", 2, nil)
	prefix = prefix[:len(prefix)-1]
	tooManyRows := append(append([]byte{}, prefix...), 0xdd, 0, 2, 0, 1) // array32 of MaxRows+1
	// MaxMergedActors+1 rows, every actor in P: too many actors in one half.
	// The ids are fixed-width ASCII, so the canonical shared prefix is the
	// plain common prefix.
	rows := make([]any, gcounter.MaxMergedActors+1)
	prev := ""
	for i := range rows {
		id := fmt.Sprintf("%06d", i)
		k := 0
		for k < len(prev) && prev[k] == id[k] {
			k++
		}
		rows[i] = row(k, id[k:], 1, 0)
		prev = id
	}
	tooManyP := env(t, "pncounter", 2, rows)
	v1prefix := env(t, "pncounter", 1, nil)
	v1prefix = v1prefix[:len(v1prefix)-1]
	tooManyV1 := append(append([]byte{}, v1prefix...), 0x92, 0xdd, 0, 1, 0, 1) // P: array32 of MaxMergedActors+1
	return []countertest.Case{
		{"empty input", nil, crdt.ErrCorruptEncoding},
		{"wrong tag", env(t, "gcounter", 2, []any{}), crdt.ErrTypeMismatch},
		{"version 0", env(t, "pncounter", 0, []any{}), crdt.ErrUnsupportedVersion},
		{"version 3", env(t, "pncounter", 3, []any{}), crdt.ErrUnsupportedVersion},
		{"nil body", env(t, "pncounter", 2, nil), crdt.ErrCorruptEncoding},
		{"v1 body in v2", env(t, "pncounter", 2, pn([]any{}, []any{})), crdt.ErrCorruptEncoding},
		{"nil row", v2(nil), crdt.ErrCorruptEncoding},
		{"row of three", env(t, "pncounter", 2, []any{[]any{0, "a", 1}}), crdt.ErrCorruptEncoding},
		{"row of five", env(t, "pncounter", 2, []any{[]any{0, "a", 1, 0, 0}}), crdt.ErrCorruptEncoding},
		{"first row shares", v2(row(1, "a", 1, 0)), crdt.ErrCorruptEncoding},
		{"shares more than previous", v2(row(0, "ab", 1, 0), row(3, "c", 1, 0)), crdt.ErrCorruptEncoding},
		{"negative shared", v2([]any{-1, "a", 1, 0}), crdt.ErrCorruptEncoding},
		{"shares too little", v2(row(0, "ab", 1, 0), row(1, "c", 1, 0), row(0, "ad", 1, 0)), crdt.ErrCorruptEncoding},
		{"shares inside a character", v2(row(0, "ā", 1, 0), row(1, "\x85", 1, 0)), crdt.ErrCorruptEncoding},
		{"suffix not a str", v2(row(0, []byte("a"), 1, 0)), crdt.ErrCorruptEncoding},
		{"empty suffix (duplicate actor)", v2(row(0, "a", 1, 0), row(1, "", 0, 1)), crdt.ErrCorruptEncoding},
		{"unsorted", v2(row(0, "b", 1, 0), row(0, "a", 1, 0)), crdt.ErrCorruptEncoding},
		{"empty actor", v2(row(0, "", 1, 0)), crdt.ErrCorruptEncoding},
		{"bad actor", v2(row(0, "a\tb", 1, 0)), crdt.ErrCorruptEncoding},
		{"actor over 255 bytes", v2(row(0, strings.Repeat("x", 255), 1, 0), row(255, "y", 1, 0)), crdt.ErrCorruptEncoding},
		{"no count", v2(row(0, "a", 0, 0)), crdt.ErrCorruptEncoding},
		{"negative P", v2(row(0, "a", -5, 0)), crdt.ErrCorruptEncoding},
		{"negative N", v2(row(0, "a", 0, -5)), crdt.ErrCorruptEncoding},
		{"trailing byte", append(valid, 0x00), crdt.ErrCorruptEncoding},
		{"too many rows", tooManyRows, crdt.ErrTooLarge},
		{"too many P actors", tooManyP, crdt.ErrTooLarge},
		{"oversized input", huge, crdt.ErrTooLarge},
		// Version 1, still read.
		{"v1 body of one", env(t, "pncounter", 1, []any{[]any{}}), crdt.ErrCorruptEncoding},
		{"v1 body of three", env(t, "pncounter", 1, []any{[]any{}, []any{}, []any{}}), crdt.ErrCorruptEncoding},
		{"v1 nil half", env(t, "pncounter", 1, []any{[]any{}, nil}), crdt.ErrCorruptEncoding},
		{"v1 unsorted P", env(t, "pncounter", 1, pn([]any{p("b", 1), p("a", 1)}, []any{})), crdt.ErrCorruptEncoding},
		{"v1 duplicate N", env(t, "pncounter", 1, pn([]any{}, []any{p("a", 1), p("a", 1)})), crdt.ErrCorruptEncoding},
		{"v1 zero count", env(t, "pncounter", 1, pn([]any{}, []any{p("a", 0)})), crdt.ErrCorruptEncoding},
		{"v1 negative count", env(t, "pncounter", 1, pn([]any{p("a", -5)}, []any{})), crdt.ErrCorruptEncoding},
		{"v1 bad actor", env(t, "pncounter", 1, pn([]any{p("a\tb", 1)}, []any{})), crdt.ErrCorruptEncoding},
		{"v1 pair of three", env(t, "pncounter", 1, pn([]any{[]any{"a", 1, 1}}, []any{})), crdt.ErrCorruptEncoding},
		{"v1 rows", env(t, "pncounter", 1, []any{row(0, "a", 1, 0)}), crdt.ErrCorruptEncoding},
		{"v1 too many actors", tooManyV1, crdt.ErrTooLarge},
	}
}

func TestUnmarshalRejects(t *testing.T) {
	testsize.SkipSequential(t)
	format.Rejects(t, build(t, []delta{{"keep", 5}, {"keep", -2}}), corruptCases(t))
}

func TestUnmarshalRejectsEveryTruncation(t *testing.T) {
	states := map[string]*pncounter.Counter{}
	for _, tc := range goldenCases {
		states[tc.name] = build(t, tc.deltas)
	}
	format.RejectsEveryTruncation(t, states)
}

// TestHostileRowCountAllocatesLittle: an input that declares 30,000 rows but
// holds 30,000 one-byte nils must not make the decoder pre-size both halves
// for 30,000 actors (found by review: 4.9 MB allocated for a 30 kB input).
func TestHostileRowCountAllocatesLittle(t *testing.T) { format.HostileRowCount(t) }
