// Package countertest holds the checks that gcounter's and pncounter's
// tests run alike on their encodings (golden files, rejected inputs,
// truncations, fuzzing, round trips), and the machinery of their
// benchmarks against a map baseline.
package countertest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
)

// Counter is what the checks need of a counter type C (a pointer type).
type Counter[C any] interface {
	MarshalBinary() ([]byte, error)
	UnmarshalBinary([]byte) error
	Equal(C) bool
	Clone() C
	Value() int64
}

// Format describes a counter type's encoding.
type Format[C Counter[C]] struct {
	// Tag is the envelope's type tag, which is also the package's
	// directory and the name of its vector file.
	Tag string
	// Version is the version the encoder writes.
	Version byte
	// New returns an empty counter.
	New func() C
	// Size is what the counter's Stats reports as its encoded size.
	Size func(C) int
}

// version returns the version byte of an envelope of f's tag, or false for
// an input too short to hold one.
func (f Format[C]) version(data []byte) (byte, bool) {
	i := 2 + len(f.Tag)
	if len(data) <= i {
		return 0, false
	}
	return data[i], true
}

// Decoded returns c encoded and decoded again: a counter whose ids are its
// own copies, as a reader that merges what it fetches holds them.
func (f Format[C]) Decoded(t testing.TB, c C) C {
	t.Helper()
	data, err := c.MarshalBinary()
	require.NoError(t, err)
	out := f.New()
	require.NoError(t, out.UnmarshalBinary(data))
	return out
}

// ReadGolden reads a hex golden file.
func ReadGolden(t testing.TB, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	b, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	require.NoError(t, err)
	return b
}

// Golden checks that c encodes to testdata/<name>.golden (rewriting the
// file first when update is set) and that those bytes pass Decode as a
// counter Equal to c, which it returns.
func (f Format[C]) Golden(t *testing.T, name string, c C, update bool) C {
	t.Helper()
	got, err := c.MarshalBinary()
	require.NoError(t, err)
	path := filepath.Join("testdata", name+".golden")
	if update {
		require.NoError(t, os.WriteFile(path, []byte(hex.EncodeToString(got)+"\n"), 0o644))
	}
	_, err = os.Stat(path)
	require.NoError(t, err, "run go test ./%s -run TestGolden -update to create it", f.Tag)
	want := ReadGolden(t, path)
	require.Equal(t, hex.EncodeToString(want), hex.EncodeToString(got), "encoding changed: a format change needs a new FormatVersion")
	dec, _, ok := f.Decode(t, f.New(), want)
	require.True(t, ok && dec.Equal(c), "%v vs %v", dec, c)
	return dec
}

// GoldenV1 checks that testdata/v1/<name>.golden, a version 1 encoding,
// passes Decode as a counter Equal to want that re-encodes as want does
// and as testdata/<name>.golden holds.
func (f Format[C]) GoldenV1(t *testing.T, name string, want C) {
	t.Helper()
	data := ReadGolden(t, filepath.Join("testdata", "v1", name+".golden"))
	v, _ := f.version(data)
	require.Equal(t, byte(1), v, "a version 1 file")
	dec, again, ok := f.Decode(t, f.New(), data)
	require.True(t, ok && dec.Equal(want), "%v vs %v", dec, want)
	wantEnc, err := want.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, hex.EncodeToString(wantEnc), hex.EncodeToString(again))
	require.Equal(t, hex.EncodeToString(ReadGolden(t, filepath.Join("testdata", name+".golden"))), hex.EncodeToString(again))
}

// Env builds an envelope with the msgpack library directly, independent of
// the encoder under test, with integers in their smallest form so that
// each case is rejected for the reason its name gives (an int64 would
// otherwise be written as d3 and rejected as non-canonical).
func Env(t testing.TB, tag string, version, body any) []byte {
	t.Helper()
	var buf bytes.Buffer
	e := msgpack.NewEncoder(&buf)
	e.UseCompactInts(true)
	require.NoError(t, e.Encode([]any{tag, version, body}))
	return buf.Bytes()
}

// MustMarshal encodes v with the msgpack library.
func MustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return b
}

// Case is an input the decoder must reject with Want (an error or AnyOf).
// It is an unnamed struct type, so that tables of it need no field keys.
type Case = struct {
	Name string
	Data []byte
	Want error
}

// AnyOf matches any of its errors, for an input where the shared wire
// decoder and the format's intent name different sentinels.
type AnyOf []error

func (a AnyOf) Error() string { return "one of " + fmt.Sprint([]error(a)) }

// Is reports whether err wraps want, or one of want's errors for an AnyOf.
func Is(err, want error) bool {
	if set, ok := want.(AnyOf); ok {
		return slices.ContainsFunc(set, func(w error) bool { return errors.Is(err, w) })
	}
	return errors.Is(err, want)
}

// Rejects checks that decoding each case into a copy of keep fails with
// the case's sentinel and leaves the copy unchanged.
func (f Format[C]) Rejects(t *testing.T, keep C, cases []Case) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			c := keep.Clone()
			err := c.UnmarshalBinary(tc.Data)
			require.True(t, Is(err, tc.Want), "got %v, want %v", err, tc.Want)
			require.True(t, c.Equal(keep), "receiver changed on error")
		})
	}
}

// RejectsEveryTruncation checks that every proper prefix of each state's
// encoding is rejected as corrupt.
func (f Format[C]) RejectsEveryTruncation(t *testing.T, states map[string]C) {
	for name, s := range states {
		b, err := s.MarshalBinary()
		require.NoError(t, err)
		for i := range len(b) {
			require.ErrorIs(t, f.New().UnmarshalBinary(b[:i]), crdt.ErrCorruptEncoding, "%s cut at %d", name, i)
		}
	}
}

// HostileRowCount checks that an input declaring 30,000 rows but holding
// 30,000 one-byte nils is rejected without the decoder sizing the counter
// for 30,000 actors: a valid input of that size holds at most about 6,000
// rows, about 23 bytes allocated per input byte; sized for the declared
// rows it would be 100 or more.
func (f Format[C]) HostileRowCount(t *testing.T) {
	prefix := Env(t, f.Tag, int(f.Version), nil)
	data := append(append([]byte{}, prefix[:len(prefix)-1]...), 0xdc, 0x75, 0x30)
	data = append(data, bytes.Repeat([]byte{0xc0}, 30000)...)
	c := f.New()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := c.UnmarshalBinary(data)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	allocated := after.TotalAlloc - before.TotalAlloc
	require.Less(t, allocated, uint64(40*len(data)), "allocated %d bytes for a %d-byte input", allocated, len(data))
}

// Decode checks what decoding data into a copy of keep guarantees: it
// never panics; a failure wraps a decoder sentinel and changes nothing;
// what decodes re-encodes deterministically, to Size bytes, to data itself
// when data is of the current version, and back to an Equal counter of
// the same Value. It returns the decoded counter and its encoding, or
// false when data was rejected.
func (f Format[C]) Decode(t *testing.T, keep C, data []byte) (C, []byte, bool) {
	t.Helper()
	c := keep.Clone()
	if err := c.UnmarshalBinary(data); err != nil {
		require.True(t, Is(err, AnyOf{crdt.ErrCorruptEncoding, crdt.ErrTooLarge, crdt.ErrTypeMismatch, crdt.ErrUnsupportedVersion}), "error wraps no decoder sentinel: %v", err)
		require.True(t, c.Equal(keep), "receiver changed on error %v", err)
		return c, nil, false
	}
	b1, err := c.MarshalBinary()
	require.NoError(t, err, "decoded counter does not encode")
	b2, err := c.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, b1, b2, "encoding is not deterministic")
	if v, _ := f.version(data); v == f.Version {
		require.Equal(t, data, b1, "canonical input re-encodes otherwise")
	}
	require.Equal(t, len(b1), f.Size(c), "Stats().EncodedSize = %d, encoding has %d bytes", f.Size(c), len(b1))
	again := f.New()
	require.NoError(t, again.UnmarshalBinary(b1), "re-encoding does not decode")
	require.True(t, again.Equal(c) && again.Value() == c.Value(), "round trip changed the counter: %v vs %v", again, c)
	return c, b1, true
}

// Corpus adds to the fuzz corpus the encodings of states, the version 1
// golden files named v1, every case of at most 1 KiB and the vectors.
func (f Format[C]) Corpus(fz *testing.F, states []C, v1 []string, cases []Case) {
	for _, s := range states {
		b, err := s.MarshalBinary()
		require.NoError(fz, err)
		fz.Add(b)
	}
	for _, name := range v1 {
		fz.Add(ReadGolden(fz, filepath.Join("testdata", "v1", name+".golden")))
	}
	for _, tc := range cases {
		if len(tc.Data) <= 1<<10 {
			fz.Add(tc.Data)
		}
	}
	for _, b := range f.VectorInputs(fz) {
		fz.Add(b)
	}
}

// VectorInputs returns every encoding in testdata/vectors/<Tag>.json at the
// repository's root (a string field named hex or reencoded or ending in
// _hex, at most 4 KiB), so that fuzzing starts from the language-neutral
// vectors, valid and malformed.
func (f Format[C]) VectorInputs(t testing.TB) [][]byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "vectors", f.Tag+".json"))
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(raw, &v))
	var out [][]byte
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "hex" || k == "reencoded" || strings.HasSuffix(k, "_hex")) {
					if b, err := hex.DecodeString(s); err == nil && len(b) <= 1<<12 {
						out = append(out, b)
					}
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	require.GreaterOrEqual(t, len(out), 10, "encodings in the vectors")
	return out
}

// RoundTrip checks on random counters, built by build from random ids and
// amounts drawn from amounts, that decode(encode(c)) is Equal to c with
// the same Value, and that the encoding is stable and Size bytes long. It
// logs its seed and the command that replays it.
func (f Format[C]) RoundTrip(t *testing.T, build func(ids []string, amounts []int64) C, amounts gopter.Gen) {
	cfg := proptest.DefaultOptions()
	params := gopter.DefaultTestParametersWithSeed(cfg.Seed)
	params.MinSuccessfulTests = cfg.Cases
	params.MaxSize = 40
	t.Logf("seed %d; replay: %s", cfg.Seed, proptest.Replay(t, cfg.Seed))
	props := gopter.NewProperties(params)
	props.Property("round trip", prop.ForAll(func(ids []string, amounts []int64) bool {
		c := build(ids, amounts)
		b1, err := c.MarshalBinary()
		if err != nil {
			return false
		}
		b2, _ := c.MarshalBinary()
		got := f.New()
		if err := got.UnmarshalBinary(b1); err != nil {
			return false
		}
		return bytes.Equal(b1, b2) && got.Equal(c) && got.Value() == c.Value() && len(b1) == f.Size(c)
	}, gen.SliceOf(gen.AnyString()), gen.SliceOf(amounts)))
	props.TestingRun(t)
}

// UnicodeFrontCoding checks, on 300 counters of random ids over an
// alphabet of one- to four-byte characters, each id given an amount by
// add, that every row's suffix is valid UTF-8 (the shared prefix ends on
// a character boundary), that the encoding passes Decode as an Equal
// counter and that Size predicts its length. It logs its seed and the command that replays it.
func (f Format[C]) UnicodeFrontCoding(t *testing.T, add func(c C, id crdt.ActorID, rng *randv2.Rand) error) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := randv2.New(randv2.NewPCG(uint64(seed), 0))
	alphabet := []rune{'a', 'b', 'ā', 'ą', 'ć', '日', '本', '🦀', '🦁'}
	for range 300 {
		c := f.New()
		for range 1 + rng.IntN(20) {
			var id []rune
			for range 1 + rng.IntN(5) {
				id = append(id, alphabet[rng.IntN(len(alphabet))])
			}
			require.NoError(t, add(c, crdt.ActorID(string(id)), rng))
		}
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		back, _, ok := f.Decode(t, f.New(), b)
		require.True(t, ok && back.Equal(c), "%x", b)
		require.Equal(t, len(b), f.Size(c))
		var decoded []any
		require.NoError(t, msgpack.Unmarshal(b, &decoded))
		for _, r := range decoded[2].([]any) {
			suffix := r.([]any)[1].(string)
			require.True(t, utf8.ValidString(suffix), "suffix %q of %x", suffix, b)
		}
	}
}

// ActorN returns the actor id "actor-<i>".
func ActorN(i int) crdt.ActorID { return crdt.ActorID(fmt.Sprintf("actor-%d", i)) }

// RandomActor returns a 32-hex-digit id (a UUID without dashes) from a
// fixed sequence: ids that share almost no prefix, the worst case for the
// front coding.
func RandomActor(i int) crdt.ActorID {
	h := uint64(i+1) * 0x9e3779b97f4a7c15
	return crdt.ActorID(fmt.Sprintf("%016x%016x", h, h*0xbf58476d1ce4e5b9))
}

// PodActor returns a Kubernetes pod name from a fixed sequence, the id a
// service that names its actor after its pod gets: deployment "ledger", a
// new pod-template hash for each of 100 rollouts and 10 pods per rollout,
// with the 5-character random suffix Kubernetes draws from its
// 27-character alphabet.
func PodActor(i int) crdt.ActorID {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	pick := func(x uint64, n int) string {
		s := make([]byte, n)
		for k := range s {
			s[k] = alphabet[x%27]
			x /= 27
		}
		return string(s)
	}
	rollout := uint64(i/10+1) * 0x9e3779b97f4a7c15
	pod := uint64(i+1) * 0xbf58476d1ce4e5b9
	return crdt.ActorID("ledger-" + pick(rollout, 10) + "-" + pick(pod>>20, 5))
}

// UUIDIDs returns n distinct actor ids shaped like UUIDs, from rng.
func UUIDIDs(rng *rand.Rand, n int) []crdt.ActorID {
	seen := map[crdt.ActorID]bool{}
	var out []crdt.ActorID
	for len(out) < n {
		id := crdt.ActorID(fmt.Sprintf("%08x-%04x-4%03x-%04x-%012x", rng.Uint32(), rng.Intn(1<<16), rng.Intn(1<<12), 0x8000|rng.Intn(1<<14), rng.Int63n(1<<48)))
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
