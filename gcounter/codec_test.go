package gcounter_test

import (
	"encoding/hex"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/countertest"
	"github.com/counterkit/counterkit/internal/testsize"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var format = countertest.Format[*gcounter.Counter]{Tag: "gcounter", Version: gcounter.FormatVersion, New: gcounter.New,
	Size: func(c *gcounter.Counter) int { return c.Stats().EncodedSize }}

// env and mustMarshal encode with the msgpack library directly.
var env, mustMarshal = countertest.Env, countertest.MustMarshal

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
	// Front coding: "node-1" → "node-10" shares 6 bytes, "node-2" 5.
	{"shared_prefix", []pair{{"node-2", 3}, {"node-10", 4}, {"node-1", 1}}},
	// "aā" and "aą" share the bytes 61 c4, but the prefix may not end
	// inside a character: the second row shares only "a".
	{"rune_boundary", []pair{{"aāx", 1}, {"aąy", 2}}},
}

// v1Cases are the golden cases locked in testdata/v1 in format version 1,
// which UnmarshalBinary still reads.
var v1Cases = goldenCases[:7]

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
			// The locked bytes decode to the same state, whose value is
			// the plain sum of the listed increments.
			dec := format.Golden(t, tc.name, build(t, tc.pairs), *update)
			var sum int64
			for _, p := range tc.pairs {
				sum += p.n
				require.Equal(t, p.n, dec.Get(p.actor))
			}
			require.Equal(t, sum, dec.Value())
		})
	}
}

// TestGoldenV1 decodes the version 1 golden files: a stored version 1 state
// reads back as the same counter, and re-encodes as version 2.
func TestGoldenV1(t *testing.T) {
	for _, tc := range v1Cases {
		t.Run(tc.name, func(t *testing.T) { format.GoldenV1(t, tc.name, build(t, tc.pairs)) })
	}
}

// TestFrontCoding spells out the rows of the shared_prefix and
// rune_boundary cases.
func TestFrontCoding(t *testing.T) {
	c := build(t, []pair{{"node-2", 3}, {"node-10", 4}, {"node-1", 1}})
	got, err := c.MarshalBinary()
	require.NoError(t, err)
	want := env(t, "gcounter", 2, []any{
		row(0, "node-1", 1),
		row(6, "0", 4), // "node-1" + "0"
		row(5, "2", 3), // "node-" + "2"
	})
	require.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got))

	c = build(t, []pair{{"aāx", 1}, {"aąy", 2}})
	got, err = c.MarshalBinary()
	require.NoError(t, err)
	want = env(t, "gcounter", 2, []any{
		row(0, "aāx", 1),
		row(1, "ąy", 2), // shares "a", not the c4 that starts ā and ą
	})
	require.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got))
}

// TestUnicodeFrontCoding checks, on random ids over an alphabet of one- to
// four-byte characters, that every row's suffix is valid UTF-8 (the shared
// prefix ends on a character boundary), that the encoding round-trips and
// that Stats predicts its size. Replay:
// COUNTERKIT_SEED=<seed> go test ./gcounter -run '^TestUnicodeFrontCoding$'
func TestUnicodeFrontCoding(t *testing.T) {
	format.UnicodeFrontCoding(t, func(c *gcounter.Counter, id crdt.ActorID, rng *rand.Rand) error {
		return c.Increment(id, 1+rng.Int64N(1000))
	})
}

func p(actor any, n any) []any { return []any{actor, n} }

func row(shared any, suffix any, n any) []any { return []any{shared, suffix, n} }

// corruptCases are inputs that must be rejected with the given sentinel.
func corruptCases(t testing.TB) []countertest.Case {
	valid := env(t, "gcounter", 1, []any{p("a", 1)})
	huge := make([]byte, gcounter.MaxEncodedSize+1)
	copy(huge, valid)
	tooMany := append(env(t, "gcounter", 1, nil)[:11], 0xdd, 0, 1, 0, 1) // array32 of MaxMergedActors+1
	u64, err := msgpack.Marshal(uint64(math.MaxInt64) + 1)
	require.NoError(t, err)
	bigCount := append(append(env(t, "gcounter", 1, nil)[:11], 0x91, 0x92, 0xa1, 'a'), u64...)
	v2 := func(rows ...[]any) []byte { return env(t, "gcounter", 2, rows) }
	v2prefix := env(t, "gcounter", 2, nil)[:11]
	// MaxMergedActors+1 rows (array32, its smallest header).
	tooManyRows := append(append([]byte{}, v2prefix...), 0xdd, 0, 1, 0, 1)
	// MaxMergedActors+1 real rows: the cap is checked on the header, before any
	// row is read. The ids are fixed-width ASCII, so the canonical shared
	// prefix is the plain common prefix.
	rows := make([]any, gcounter.MaxMergedActors+1)
	prev := ""
	for i := range rows {
		id := fmt.Sprintf("%06d", i)
		k := 0
		for k < len(prev) && prev[k] == id[k] {
			k++
		}
		rows[i] = row(k, id[k:], 1)
		prev = id
	}
	tooManyReal := env(t, "gcounter", 2, rows)
	v2BigCount := append(append(append([]byte{}, v2prefix...), 0x91, 0x93, 0x00, 0xa1, 'a'), u64...)
	return []countertest.Case{
		{"empty input", nil, crdt.ErrCorruptEncoding},
		{"not an array", []byte{0xc0}, crdt.ErrCorruptEncoding},
		{"short envelope", mustMarshal(t, []any{"gcounter", 1}), crdt.ErrCorruptEncoding},
		// wire.NewDecoder reports a 4-element envelope as ErrTooLarge
		// (reported as a wire finding); either sentinel rejects it.
		{"long envelope", mustMarshal(t, []any{"gcounter", 1, []any{}, 0}), errCorruptOrTooLarge},
		{"wrong tag", env(t, "pncounter", 1, []any{[]any{}, []any{}}), crdt.ErrTypeMismatch},
		{"tag not a string", mustMarshal(t, []any{7, 1, []any{}}), crdt.ErrCorruptEncoding},
		{"version 0", env(t, "gcounter", 0, []any{}), crdt.ErrUnsupportedVersion},
		{"version 3", env(t, "gcounter", 3, []any{}), crdt.ErrUnsupportedVersion},
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
		// Version 2.
		{"v2 nil body", env(t, "gcounter", 2, nil), crdt.ErrCorruptEncoding},
		{"v2 map body", env(t, "gcounter", 2, map[string]int{"a": 1}), crdt.ErrCorruptEncoding},
		{"v2 version 1 pairs", v2(p("a", 1)), crdt.ErrCorruptEncoding},
		{"v1 rows", env(t, "gcounter", 1, []any{row(0, "a", 1)}), crdt.ErrCorruptEncoding},
		{"v2 nil row", v2(nil), crdt.ErrCorruptEncoding},
		{"v2 row of four", v2([]any{0, "a", 1, 0}), crdt.ErrCorruptEncoding},
		{"v2 first row shares", v2(row(1, "a", 1)), crdt.ErrCorruptEncoding},
		{"v2 shares more than previous", v2(row(0, "ab", 1), row(3, "c", 1)), crdt.ErrCorruptEncoding},
		{"v2 negative shared", v2(row(-1, "a", 1)), crdt.ErrCorruptEncoding},
		{"v2 shared as a string", v2(row("0", "a", 1)), crdt.ErrCorruptEncoding},
		{"v2 shares too little", v2(row(0, "ab", 1), row(1, "c", 1), row(0, "ad", 1)), crdt.ErrCorruptEncoding},
		{"v2 shares nothing of a common prefix", v2(row(0, "node-1", 1), row(0, "node-2", 1)), crdt.ErrCorruptEncoding},
		{"v2 shares inside a character", v2(row(0, "ā", 1), row(1, "\x85", 1)), crdt.ErrCorruptEncoding},
		{"v2 suffix not a str", v2(row(0, []byte("a"), 1)), crdt.ErrCorruptEncoding},
		{"v2 empty suffix (duplicate actor)", v2(row(0, "a", 1), row(1, "", 2)), crdt.ErrCorruptEncoding},
		{"v2 duplicate actor written in full", v2(row(0, "a", 1), row(0, "a", 2)), crdt.ErrCorruptEncoding},
		{"v2 unsorted", v2(row(0, "b", 1), row(0, "a", 1)), crdt.ErrCorruptEncoding},
		{"v2 unsorted after a shared prefix", v2(row(0, "ab", 1), row(1, "a", 1)), crdt.ErrCorruptEncoding},
		{"v2 empty actor", v2(row(0, "", 1)), crdt.ErrCorruptEncoding},
		{"v2 control char actor", v2(row(0, "a\nb", 1)), crdt.ErrCorruptEncoding},
		{"v2 control char in a suffix", v2(row(0, "a", 1), row(1, "\x01", 1)), crdt.ErrCorruptEncoding},
		{"v2 invalid utf8 actor", v2(row(0, "\xff", 1)), crdt.ErrCorruptEncoding},
		{"v2 suffix over 255 bytes", v2(row(0, strings.Repeat("x", crdt.MaxIDLen+1), 1)), crdt.ErrCorruptEncoding},
		{"v2 actor over 255 bytes", v2(row(0, strings.Repeat("x", crdt.MaxIDLen), 1), row(crdt.MaxIDLen, "y", 1)), crdt.ErrCorruptEncoding},
		{"v2 zero count", v2(row(0, "a", 0)), crdt.ErrCorruptEncoding},
		{"v2 negative count", v2(row(0, "a", -1)), crdt.ErrCorruptEncoding},
		{"v2 float count", v2(row(0, "a", 1.5)), crdt.ErrCorruptEncoding},
		{"v2 count above MaxInt64", v2BigCount, crdt.ErrCorruptEncoding},
		{"v2 trailing byte", append(v2(row(0, "a", 1)), 0xc0), crdt.ErrCorruptEncoding},
		{"v2 too many rows", tooManyRows, crdt.ErrTooLarge},
		{"v2 too many real rows", tooManyReal, crdt.ErrTooLarge},
	}
}

// errCorruptOrTooLarge matches either sentinel, for the one case where the
// shared wire decoder and the format's intent disagree.
var errCorruptOrTooLarge = countertest.AnyOf{crdt.ErrCorruptEncoding, crdt.ErrTooLarge}

func TestUnmarshalRejects(t *testing.T) {
	testsize.SkipSequential(t)
	format.Rejects(t, build(t, []pair{{"keep", 5}}), corruptCases(t))
}

func TestUnmarshalRejectsEveryTruncation(t *testing.T) {
	states := map[string]*gcounter.Counter{}
	for _, tc := range goldenCases {
		states[tc.name] = build(t, tc.pairs)
	}
	format.RejectsEveryTruncation(t, states)
}

// TestHostileRowCountAllocatesLittle: an input that declares 30,000 rows
// but holds 30,000 one-byte nils must not make the decoder pre-size the
// counter for 30,000 actors.
func TestHostileRowCountAllocatesLittle(t *testing.T) { format.HostileRowCount(t) }

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
