package tally_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tally"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

const exp0 = int64(1_700_000_000_000_000) // a plausible expires_at, µs

func sumOf(t testing.TB, xs ...int64) *tally.Sum {
	s := new(tally.Sum)
	for _, x := range xs {
		require.NoError(t, s.Add(x))
	}
	return s
}

func statsOfXs(t testing.TB, xs ...int64) *tally.Stats {
	s := new(tally.Stats)
	for _, x := range xs {
		require.NoError(t, s.Add(x))
	}
	return s
}

func distinctOf(n int) *tally.Distinct {
	d := new(tally.Distinct)
	for i := range n {
		d.AddString(fmt.Sprintf("visitor-%d", i))
	}
	return d
}

// encoded is one table case: a name and the bytes of a shard or tally.
type encoded struct {
	name string
	data []byte
}

// codecCases encodes one shard and one tally of every kind and edge; they
// are the golden files and the fuzz seeds.
func codecCases(t testing.TB) []encoded {
	mn, mx := new(tally.Min), new(tally.Max)
	mn.Add(-7)
	mx.Add(math.MaxInt64)
	var out []encoded
	add := func(name string, b []byte, err error) {
		require.NoError(t, err, name)
		out = append(out, encoded{name, b})
	}
	shard := func(name string, f func() ([]byte, error)) {
		b, err := f()
		add("shard_"+name, b, err)
	}
	shard("sum", tally.Shard[*tally.Sum]{Mutator: "m-1", ExpiresAt: exp0, State: sumOf(t, 40, 2)}.MarshalBinary)
	shard("sum_negative", tally.Shard[*tally.Sum]{Mutator: "m-2", ExpiresAt: exp0, State: sumOf(t, math.MinInt64)}.MarshalBinary)
	shard("sum_nil_state", tally.Shard[*tally.Sum]{Mutator: "m-3", ExpiresAt: 1}.MarshalBinary)
	shard("min", tally.Shard[*tally.Min]{Mutator: "日本", ExpiresAt: exp0, State: mn}.MarshalBinary)
	shard("min_empty", tally.Shard[*tally.Min]{Mutator: "m", ExpiresAt: exp0, State: new(tally.Min)}.MarshalBinary)
	shard("max", tally.Shard[*tally.Max]{Mutator: "m", ExpiresAt: math.MaxInt64, State: mx}.MarshalBinary)
	shard("stats", tally.Shard[*tally.Stats]{Mutator: "m", ExpiresAt: exp0, State: statsOfXs(t, 3, -1, 4, 1, -5)}.MarshalBinary)
	shard("stats_wide", tally.Shard[*tally.Stats]{Mutator: "m", ExpiresAt: exp0, State: statsOfXs(t, math.MinInt64, math.MaxInt64, 3_000_000_000)}.MarshalBinary)
	shard("distinct_sparse", tally.Shard[*tally.Distinct]{Mutator: crdt.ActorID(strings.Repeat("x", crdt.MaxIDLen)), ExpiresAt: exp0, State: distinctOf(3)}.MarshalBinary)
	shard("distinct_dense", tally.Shard[*tally.Distinct]{Mutator: "m", ExpiresAt: exp0, State: distinctOf(20_000)}.MarshalBinary)
	b, err := tally.Tally[*tally.Sum]{}.MarshalBinary()
	add("tally_sum_empty", b, err)
	b, err = tally.Tally[*tally.Sum]{FoldedThrough: exp0, State: sumOf(t, 1234567)}.MarshalBinary()
	add("tally_sum", b, err)
	b, err = tally.Tally[*tally.Stats]{FoldedThrough: exp0, State: statsOfXs(t, 10, 20)}.MarshalBinary()
	add("tally_stats", b, err)
	b, err = tally.Tally[*tally.Distinct]{FoldedThrough: exp0, State: distinctOf(100)}.MarshalBinary()
	add("tally_distinct", b, err)
	b, err = tally.Tally[*tally.Max]{FoldedThrough: exp0, State: mx}.MarshalBinary()
	add("tally_max", b, err)
	return out
}

func TestGolden(t *testing.T) {
	for _, tc := range codecCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join("testdata", tc.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(tc.data)+"\n"), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./tally -run TestGolden -update to create it")
			require.Equal(t, strings.TrimSpace(string(want)), hex.EncodeToString(tc.data),
				"the encoding changed; if on purpose, bump the format version and rerun with -update")
			require.NoError(t, roundTripAny(tc.data))
		})
	}
}

// TestGoldenReadable decodes a golden file field by field with plain
// msgpack, so the documented layout is checked independently of the codec.
func TestGoldenReadable(t *testing.T) {
	b, err := tally.Shard[*tally.Sum]{Mutator: "m-1", ExpiresAt: exp0, State: sumOf(t, 42)}.MarshalBinary()
	require.NoError(t, err)
	var env []any
	require.NoError(t, msgpack.Unmarshal(b, &env))
	require.Len(t, env, 3)
	require.Equal(t, string(crdt.TagTallyShard), env[0])
	require.EqualValues(t, 1, env[1])
	body := env[2].([]any)
	require.Equal(t, "sum", body[0])
	require.Equal(t, "m-1", body[1])
	require.EqualValues(t, exp0, body[2])
	require.EqualValues(t, 42, body[3])
}

// decodeAs tries one kind; ok is false when the bytes are not of that kind.
func decodeAs[A tally.Aggregate[A]](data []byte) (ok bool, err error) {
	if s, err := tally.DecodeShard[A](data); err == nil {
		return true, checkShardRoundTrip(s)
	} else if !errors.Is(err, crdt.ErrTypeMismatch) {
		return false, checkDecodeErr(err)
	}
	if tl, err := tally.DecodeTally[A](data); err == nil {
		return true, checkTallyRoundTrip(tl)
	} else if !errors.Is(err, crdt.ErrTypeMismatch) {
		return false, checkDecodeErr(err)
	}
	return false, nil
}

func checkDecodeErr(err error) error {
	for _, s := range []error{crdt.ErrCorruptEncoding, crdt.ErrTooLarge, crdt.ErrUnsupportedVersion, crdt.ErrTypeMismatch} {
		if errors.Is(err, s) {
			return nil
		}
	}
	return fmt.Errorf("decode error wraps no decoder sentinel: %v", err)
}

// checkState checks what every decoded state must satisfy beyond the
// round trip: a decoded Stats has a variance that is not negative, and so
// has every Stats Combine builds from it (combined with itself, twice),
// which must decode again.
func checkState[A tally.Aggregate[A]](st A) error {
	s, ok := any(st).(*tally.Stats)
	if !ok {
		return nil
	}
	acc := s.Clone()
	for i := range 3 {
		if v, _ := acc.Variance(); v < 0 || math.IsNaN(v) {
			return fmt.Errorf("stats %s (decoded %s combined %d times) has variance %v", acc, s, i, v)
		}
		b, err := tally.Tally[*tally.Stats]{State: acc}.MarshalBinary()
		if i > 0 && errors.Is(err, crdt.ErrOverflow) && !acc.Summary().Fits() {
			return nil // combined past what the encoding holds (SPEC.md 7.1)
		}
		if err != nil {
			return fmt.Errorf("encode %s: %v", acc, err)
		}
		if _, err := tally.DecodeTally[*tally.Stats](b); err != nil {
			return fmt.Errorf("Combine built %s from the decoded %s, which does not decode: %v", acc, s, err)
		}
		if err := acc.Combine(acc.Clone()); err != nil {
			return fmt.Errorf("combine %s: %v", acc, err)
		}
	}
	return nil
}

func checkShardRoundTrip[A tally.Aggregate[A]](s tally.Shard[A]) error {
	if err := checkState(s.State); err != nil {
		return err
	}
	b1, err := s.MarshalBinary()
	if err != nil {
		return fmt.Errorf("re-encode: %v", err)
	}
	b2, _ := s.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		return errors.New("encoding twice gave different bytes")
	}
	s2, err := tally.DecodeShard[A](b1)
	if err != nil {
		return fmt.Errorf("decode(encode(x)): %v", err)
	}
	if s2.Mutator != s.Mutator || s2.ExpiresAt != s.ExpiresAt || !s2.State.Equal(s.State) {
		return fmt.Errorf("decode(encode(x)) = %+v, want %+v", s2, s)
	}
	return nil
}

func checkTallyRoundTrip[A tally.Aggregate[A]](tl tally.Tally[A]) error {
	if err := checkState(tl.State); err != nil {
		return err
	}
	b1, err := tl.MarshalBinary()
	if err != nil {
		return fmt.Errorf("re-encode: %v", err)
	}
	b2, _ := tl.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		return errors.New("encoding twice gave different bytes")
	}
	t2, err := tally.DecodeTally[A](b1)
	if err != nil {
		return fmt.Errorf("decode(encode(x)): %v", err)
	}
	if t2.FoldedThrough != tl.FoldedThrough || !t2.State.Equal(tl.State) {
		return fmt.Errorf("decode(encode(x)) = %+v, want %+v", t2, tl)
	}
	return nil
}

// roundTripAny decodes data as every kind: at most one kind may accept it,
// and whatever is accepted must round-trip.
func roundTripAny(data []byte) error {
	accepted := 0
	for _, try := range []func([]byte) (bool, error){
		decodeAs[*tally.Sum], decodeAs[*tally.Min], decodeAs[*tally.Max], decodeAs[*tally.Stats], decodeAs[*tally.Distinct],
	} {
		ok, err := try(data)
		if err != nil {
			return err
		}
		if ok {
			accepted++
		}
	}
	if accepted > 1 {
		return fmt.Errorf("%d kinds accepted the same bytes", accepted)
	}
	return nil
}

// mustHex builds bytes from a hex string with spaces.
func mustHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

func TestDecodeRejects(t *testing.T) {
	mp := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		require.NoError(t, err)
		return b
	}
	shardTag, tallyTag := string(crdt.TagTallyShard), string(crdt.TagTally)
	sparse := func(entries ...uint32) []byte {
		var b []byte
		for _, e := range entries {
			b = append(b, byte(e>>24), byte(e>>16), byte(e>>8), byte(e))
		}
		return b
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"empty input", nil, crdt.ErrCorruptEncoding},
		{"not an array", mustHex("c0"), crdt.ErrCorruptEncoding},
		{"wrong tag", mp([]any{"gcounter", 1, []any{}}), crdt.ErrTypeMismatch},
		{"tally tag as shard", mp([]any{tallyTag, 1, []any{"sum", 1, 1}}), crdt.ErrTypeMismatch},
		{"future version", mp([]any{shardTag, 2, []any{"sum", "m", 1, 1}}), crdt.ErrUnsupportedVersion},
		{"version zero", mp([]any{shardTag, 0, []any{"sum", "m", 1, 1}}), crdt.ErrUnsupportedVersion},
		{"other kind", mp([]any{shardTag, 1, []any{"max", "m", 1, 1}}), crdt.ErrTypeMismatch},
		{"short body", mp([]any{shardTag, 1, []any{"sum", "m", 1}}), crdt.ErrCorruptEncoding},
		{"long body", mp([]any{shardTag, 1, []any{"sum", "m", 1, 1, 1}}), crdt.ErrCorruptEncoding}, // extra fields are a malformed shape
		{"empty mutator", mp([]any{shardTag, 1, []any{"sum", "", 1, 1}}), crdt.ErrCorruptEncoding},
		{"control char mutator", mp([]any{shardTag, 1, []any{"sum", "a\x00", 1, 1}}), crdt.ErrCorruptEncoding},
		{"zero expires_at", mp([]any{shardTag, 1, []any{"sum", "m", 0, 1}}), crdt.ErrCorruptEncoding},
		{"negative expires_at", mp([]any{shardTag, 1, []any{"sum", "m", -5, 1}}), crdt.ErrCorruptEncoding},
		{"uint64 above int64", mustHex("93 ab 74616c6c792e7368617264 01 94 a3 73756d a1 6d 01 cf ffffffffffffffff"), crdt.ErrCorruptEncoding},
		{"float sum", mp([]any{shardTag, 1, []any{"sum", "m", 1, 1.5}}), crdt.ErrCorruptEncoding},
		{"trailing bytes", append(mp([]any{shardTag, 1, []any{"sum", "m", 1, 1}}), 0xc0), crdt.ErrCorruptEncoding},
		{"truncated", mp([]any{shardTag, 1, []any{"sum", "m", 1, 1}})[:10], crdt.ErrCorruptEncoding},
		{"oversized", make([]byte, tally.MaxEncodedSize+1), crdt.ErrTooLarge},
		{"negative folded_through", mp([]any{tallyTag, 1, []any{"sum", -1, 1}}), crdt.ErrCorruptEncoding},
		{"stats empty array", mp([]any{tallyTag, 1, []any{"stats", 0, []any{}}}), crdt.ErrCorruptEncoding},
		{"stats count zero", mp([]any{tallyTag, 1, []any{"stats", 0, []any{0, 0, 0, 0, 0, 0}}}), crdt.ErrCorruptEncoding},
		{"stats min above max", mp([]any{tallyTag, 1, []any{"stats", 0, []any{2, 3, 2, 1, 0, 5}}}), crdt.ErrCorruptEncoding},
		{"stats sum out of range", mp([]any{tallyTag, 1, []any{"stats", 0, []any{2, 100, 1, 2, 0, 5}}}), crdt.ErrCorruptEncoding},
		{"stats single inconsistent", mp([]any{tallyTag, 1, []any{"stats", 0, []any{1, 3, 3, 3, 0, 8}}}), crdt.ErrCorruptEncoding},
		{"distinct precision", mp([]any{tallyTag, 1, []any{"distinct", 0, []any{12, []byte{}}}}), crdt.ErrCorruptEncoding},
		{"distinct odd length", mp([]any{tallyTag, 1, []any{"distinct", 0, []any{14, []byte{1, 2, 3}}}}), crdt.ErrCorruptEncoding},
		{"distinct unsorted", mp([]any{tallyTag, 1, []any{"distinct", 0, []any{14, sparse(5<<8|1, 3<<8|1)}}}), crdt.ErrCorruptEncoding},
		{"distinct duplicate", mp([]any{tallyTag, 1, []any{"distinct", 0, []any{14, sparse(5<<8|1, 5<<8|2)}}}), crdt.ErrCorruptEncoding},
		{"distinct zero register", mp([]any{tallyTag, 1, []any{"distinct", 0, []any{14, sparse(5 << 8)}}}), crdt.ErrCorruptEncoding},
		{"distinct register too big", mp([]any{tallyTag, 1, []any{"distinct", 0, []any{14, sparse(5<<8 | 52)}}}), crdt.ErrCorruptEncoding},
		{"distinct index out of range", mp([]any{tallyTag, 1, []any{"distinct", 0, []any{14, sparse(1<<14<<8 | 1)}}}), crdt.ErrCorruptEncoding},
		{"distinct dense but sparse due", mp([]any{tallyTag, 1, []any{"distinct", 0, []any{14, make([]byte, 1<<14)}}}), crdt.ErrCorruptEncoding},
		{"distinct too long", mp([]any{tallyTag, 1, []any{"distinct", 0, []any{14, make([]byte, 1<<14+4)}}}), crdt.ErrTooLarge},
		{"kind too long", mp([]any{tallyTag, 1, []any{strings.Repeat("k", 100), 0, 1}}), crdt.ErrCorruptEncoding},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			switch {
			case strings.Contains(tc.name, "stats"):
				_, err = tally.DecodeTally[*tally.Stats](tc.data)
			case strings.Contains(tc.name, "distinct"):
				_, err = tally.DecodeTally[*tally.Distinct](tc.data)
			case strings.Contains(tc.name, "folded") || strings.HasPrefix(tc.name, "kind"):
				_, err = tally.DecodeTally[*tally.Sum](tc.data)
			default:
				_, err = tally.DecodeShard[*tally.Sum](tc.data)
			}
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestMarshalRejects(t *testing.T) {
	_, err := tally.Shard[*tally.Sum]{Mutator: "", ExpiresAt: 1}.MarshalBinary()
	require.ErrorIs(t, err, crdt.ErrInvalidActor)
	_, err = tally.Shard[*tally.Sum]{Mutator: "m", ExpiresAt: 0}.MarshalBinary()
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	_, err = tally.Tally[*tally.Sum]{FoldedThrough: -1}.MarshalBinary()
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
}

// TestDistinctEncodingCanonical: sketches built from the same items in
// different orders and splits encode identically, and the sparse/dense
// switch happens exactly at a quarter of the registers.
func TestDistinctEncodingCanonical(t *testing.T) {
	a, b1, b2 := new(tally.Distinct), new(tally.Distinct), new(tally.Distinct)
	for i := range 5000 {
		a.AddString(fmt.Sprint(i))
		if i%2 == 0 {
			b1.AddString(fmt.Sprint(4999 - i))
		} else {
			b2.AddString(fmt.Sprint(4999 - i))
		}
	}
	require.NoError(t, b2.Combine(b1))
	ea, err := tally.Tally[*tally.Distinct]{State: a}.MarshalBinary()
	require.NoError(t, err)
	eb, err := tally.Tally[*tally.Distinct]{State: b2}.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, ea, eb)
	small, err := tally.Tally[*tally.Distinct]{State: distinctOf(10)}.MarshalBinary()
	require.NoError(t, err)
	require.Less(t, len(small), 80, "a 10-item sketch should use the sparse form")
	require.Greater(t, len(ea), 1<<14, "a 5000-item sketch sets over a quarter of the registers")
}

func FuzzDecodeShard(f *testing.F) {
	for _, tc := range codecCases(f) {
		if strings.HasPrefix(tc.name, "shard_") {
			f.Add(tc.data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := roundTripAny(data); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzDecodeTally(f *testing.F) {
	for _, tc := range codecCases(f) {
		if strings.HasPrefix(tc.name, "tally_") {
			f.Add(tc.data)
		}
	}
	// Stats at and just past the bounds of the decoder's check.
	for _, c := range []statsCells{
		{n: 2, sum: 4, min: 2, max: 2, sq: big.NewInt(6)}, // variance −1 without the check
		{n: 4, sum: 20, min: 0, max: 10, sq: big.NewInt(150)},
		{n: 4, sum: 20, min: 0, max: 10, sq: big.NewInt(148)},
		{n: 4, sum: 20, min: 0, max: 10, sq: big.NewInt(200)},
		{n: 4, sum: 20, min: 0, max: 10, sq: big.NewInt(202)},
		cellsOf(math.MinInt64, math.MaxInt64, 0),
	} {
		f.Add(c.encode(f))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := roundTripAny(data); err != nil {
			t.Fatal(err)
		}
	})
}
