package wire_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/exact"
	"github.com/counterkit/counterkit/internal/wire"
)

const tag crdt.TypeTag = "test.type"

// body encodes one envelope whose body is written by f.
func body(t testing.TB, f func(e *wire.Encoder)) []byte {
	t.Helper()
	e := wire.NewEncoder(tag, 1)
	f(e)
	b, err := e.Bytes()
	require.NoError(t, err)
	return bytes.Clone(b)
}

// raw builds an envelope with the msgpack library directly, so that
// decoder tests do not depend on the encoder under test.
func raw(t testing.TB, tagv, version any, rest ...any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(append([]any{tagv, version}, rest...))
	require.NoError(t, err)
	return b
}

func open(t testing.TB, data []byte) *wire.Decoder {
	t.Helper()
	d, v, err := wire.NewDecoder(data, tag, 1, 1<<20)
	require.NoError(t, err)
	require.EqualValues(t, 1, v)
	return d
}

func TestEnvelopeBytes(t *testing.T) {
	got := body(t, func(e *wire.Encoder) { e.Nil() })
	// fixarray(3), fixstr(9) "test.type", fixint 1, nil
	require.Equal(t, "93a9746573742e7479706501c0", hex.EncodeToString(got))
}

func TestIntRoundTripAndMinimalForm(t *testing.T) {
	// Each value with the size msgpack's smallest form takes.
	cases := []struct {
		v    int64
		size int
	}{
		{0, 1}, {1, 1}, {127, 1}, {128, 2}, {255, 2}, {256, 3}, {65535, 3}, {65536, 5},
		{math.MaxUint32, 5}, {math.MaxUint32 + 1, 9}, {math.MaxInt64, 9},
		{-1, 1}, {-32, 1}, {-33, 2}, {-128, 2}, {-129, 3}, {-32768, 3}, {-32769, 5},
		{math.MinInt32, 5}, {math.MinInt32 - 1, 9}, {math.MinInt64, 9},
	}
	empty := len(body(t, func(e *wire.Encoder) {}))
	for _, c := range cases {
		b := body(t, func(e *wire.Encoder) { e.Int(c.v) })
		require.Equal(t, c.size, len(b)-empty, "size of %d", c.v)
		d := open(t, b)
		got, err := d.Int()
		require.NoError(t, err)
		require.Equal(t, c.v, got)
		require.NoError(t, d.Finish())
	}
}

func TestUintRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 1<<16 - 1, 1 << 16, 1<<32 - 1, 1 << 32, math.MaxInt64, math.MaxInt64 + 1, math.MaxUint64} {
		d := open(t, body(t, func(e *wire.Encoder) { e.Uint(v) }))
		got, err := d.Uint()
		require.NoError(t, err)
		require.Equal(t, v, got)
		require.NoError(t, d.Finish())
	}
}

func TestIntRejects(t *testing.T) {
	tests := []struct {
		name string
		v    any
		read func(d *wire.Decoder) error
	}{
		{"uint64 above MaxInt64", uint64(math.MaxInt64) + 1, func(d *wire.Decoder) error { _, err := d.Int(); return err }},
		{"float", 1.5, func(d *wire.Decoder) error { _, err := d.Int(); return err }},
		{"string", "1", func(d *wire.Decoder) error { _, err := d.Int(); return err }},
		{"nil", nil, func(d *wire.Decoder) error { _, err := d.Int(); return err }},
		{"bool", true, func(d *wire.Decoder) error { _, err := d.Int(); return err }},
		{"negative as NonNegInt", int64(-1), func(d *wire.Decoder) error { _, err := d.NonNegInt(); return err }},
		{"MinInt64 as NonNegInt", int64(math.MinInt64), func(d *wire.Decoder) error { _, err := d.NonNegInt(); return err }},
		{"negative as Uint", int64(-5), func(d *wire.Decoder) error { _, err := d.Uint(); return err }},
		{"float as Uint", 2.0, func(d *wire.Decoder) error { _, err := d.Uint(); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := open(t, raw(t, string(tag), 1, tt.v))
			require.ErrorIs(t, tt.read(d), crdt.ErrCorruptEncoding)
		})
	}
}

func TestStringsAndIDs(t *testing.T) {
	long := strings.Repeat("x", crdt.MaxIDLen)
	d := open(t, body(t, func(e *wire.Encoder) {
		e.ArrayLen(4)
		e.String("")
		e.String("Zoë 🦀")
		e.String(long)
		e.String(long)
	}))
	n, err := d.ArrayLen(4)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	s, err := d.String(0)
	require.NoError(t, err)
	require.Empty(t, s)
	s, err = d.String(100)
	require.NoError(t, err)
	require.Equal(t, "Zoë 🦀", s)
	a, err := d.Actor()
	require.NoError(t, err)
	require.Equal(t, crdt.ActorID(long), a)
	x, err := d.Txn()
	require.NoError(t, err)
	require.Equal(t, crdt.TxnID(long), x)
	require.NoError(t, d.Finish())

	for _, bad := range []string{"", "a\x00", "\xff\xfe", strings.Repeat("y", crdt.MaxIDLen+1)} {
		d := open(t, raw(t, string(tag), 1, bad))
		_, err := d.Actor()
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "actor %q", bad)
		d = open(t, raw(t, string(tag), 1, bad))
		_, err = d.Txn()
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "txn %q", bad)
	}
	d = open(t, raw(t, string(tag), 1, "abcdef"))
	_, err = d.String(5)
	require.Error(t, err, "string longer than maxLen")
	d = open(t, raw(t, string(tag), 1, []byte("bin")))
	_, err = d.String(10)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "bin is not a string")
}

func TestBoolBinNil(t *testing.T) {
	d := open(t, body(t, func(e *wire.Encoder) {
		e.ArrayLen(5)
		e.Bool(true)
		e.Bool(false)
		e.Bin([]byte{1, 2, 3})
		e.Bin([]byte{})
		e.Nil()
	}))
	_, err := d.ArrayLen(5)
	require.NoError(t, err)
	v, err := d.Bool()
	require.NoError(t, err)
	require.True(t, v)
	v, err = d.Bool()
	require.NoError(t, err)
	require.False(t, v)
	b, err := d.Bin(3)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2, 3}, b)
	b, err = d.Bin(0)
	require.NoError(t, err)
	require.Empty(t, b)
	isNil, err := d.IsNil()
	require.NoError(t, err)
	require.True(t, isNil)
	require.NoError(t, d.Finish())

	d = open(t, raw(t, string(tag), 1, 0))
	isNil, err = d.IsNil()
	require.NoError(t, err)
	require.False(t, isNil, "IsNil on a non-nil value")
	n, err := d.Int()
	require.NoError(t, err, "IsNil must not consume a non-nil value")
	require.Zero(t, n)

	d = open(t, raw(t, string(tag), 1, 1))
	_, err = d.Bool()
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	d = open(t, raw(t, string(tag), 1, []byte("abcd")))
	_, err = d.Bin(3)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	d = open(t, raw(t, string(tag), 1, "str"))
	_, err = d.Bin(3)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
}

func TestArrayLen(t *testing.T) {
	d := open(t, raw(t, string(tag), 1, []int{1, 2, 3}))
	_, err := d.ArrayLen(2)
	require.ErrorIs(t, err, crdt.ErrTooLarge)

	d = open(t, raw(t, string(tag), 1, nil))
	_, err = d.ArrayLen(10)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "nil array")

	d = open(t, raw(t, string(tag), 1, map[string]int{}))
	_, err = d.ArrayLen(10)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "map is not an array")

	// A header claiming more elements than bytes remain is corrupt before
	// anything is allocated.
	env := raw(t, string(tag), 1, nil)
	claim := append(env[:len(env)-1], 0xdd, 0x7f, 0xff, 0xff, 0xff, 0x01, 0x02)
	d = open(t, claim)
	_, err = d.ArrayLen(math.MaxInt32)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
}

func TestNewDecoderRejects(t *testing.T) {
	good := raw(t, string(tag), 1, nil)
	tests := []struct {
		name string
		data []byte
		max  int
		want error
	}{
		{"too large", good, len(good) - 1, crdt.ErrTooLarge},
		{"empty", nil, 100, crdt.ErrCorruptEncoding},
		{"not array", []byte{0x01}, 100, crdt.ErrCorruptEncoding},
		{"two elements", mustMarshal(t, []any{string(tag), 1}), 100, crdt.ErrCorruptEncoding},
		{"wrong tag", raw(t, "other", 1, nil), 100, crdt.ErrTypeMismatch},
		{"tag too long", raw(t, strings.Repeat("t", 65), 1, nil), 1000, crdt.ErrCorruptEncoding},
		{"tag not string", mustMarshal(t, []any{1, 1, nil}), 100, crdt.ErrCorruptEncoding},
		{"version 0", raw(t, string(tag), 0, nil), 100, crdt.ErrUnsupportedVersion},
		{"version too new", raw(t, string(tag), 4, nil), 100, crdt.ErrUnsupportedVersion},
		{"version negative", raw(t, string(tag), -1, nil), 100, crdt.ErrCorruptEncoding},
		{"version string", raw(t, string(tag), "1", nil), 100, crdt.ErrCorruptEncoding},
		{"truncated after tag", good[:11], 100, crdt.ErrCorruptEncoding},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := wire.NewDecoder(tt.data, tag, 3, tt.max)
			require.ErrorIs(t, err, tt.want)
		})
	}
	_, v, err := wire.NewDecoder(raw(t, string(tag), 3, nil), tag, 3, 100)
	require.NoError(t, err)
	require.EqualValues(t, 3, v)
}

func mustMarshal(t testing.TB, v any) []byte {
	b, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return b
}

func TestFinishAndRemaining(t *testing.T) {
	b := append(body(t, func(e *wire.Encoder) { e.Int(5) }), 0xc0)
	d := open(t, b)
	_, err := d.Int()
	require.NoError(t, err)
	require.Equal(t, 1, d.Remaining())
	require.ErrorIs(t, d.Finish(), crdt.ErrCorruptEncoding)
}

func TestEveryTruncationIsCorrupt(t *testing.T) {
	b := body(t, func(e *wire.Encoder) {
		e.ArrayLen(6)
		e.String("actor")
		e.Int(math.MinInt64)
		e.Uint(math.MaxUint64)
		e.Bool(true)
		e.Bin([]byte("payload"))
		e.Nil()
	})
	for i := range len(b) {
		err := readAll(b[:i])
		require.True(t, errors.Is(err, crdt.ErrCorruptEncoding), "cut at %d: %v", i, err)
	}
	require.NoError(t, readAll(b))
}

func readAll(data []byte) error {
	d, _, err := wire.NewDecoder(data, tag, 1, 1<<20)
	if err != nil {
		return err
	}
	if _, err := d.ArrayLen(6); err != nil {
		return err
	}
	if _, err := d.Actor(); err != nil {
		return err
	}
	if _, err := d.Int(); err != nil {
		return err
	}
	if _, err := d.Uint(); err != nil {
		return err
	}
	if _, err := d.Bool(); err != nil {
		return err
	}
	if _, err := d.Bin(100); err != nil {
		return err
	}
	if isNil, err := d.IsNil(); err != nil || !isNil {
		return errors.Join(err, errors.New("want nil"))
	}
	return d.Finish()
}

func TestEncodingIsDeterministic(t *testing.T) {
	f := func(e *wire.Encoder) {
		e.ArrayLen(3)
		e.String("a")
		e.Int(-7)
		e.Bin([]byte{9})
	}
	require.Equal(t, body(t, f), body(t, f))
}

// Regression tests for four wire.go bugs found while writing the codecs
// (hostile string length allocating before the bounds check, a 4-element
// envelope reported as too large, Bin(nil) not round-tripping, non-minimal
// integers accepted). Each failed before the fix.

// TestKnownStringLengthPrefixAllocates: a str32 header claiming ~2 GiB in a
// 20-byte input makes String allocate before noticing the input is short
// (msgpack reads in 1 MiB chunks), breaking "a length prefix can never make
// a decoder allocate more than the input's own size".
func TestKnownStringLengthPrefixAllocates(t *testing.T) {
	env := raw(t, string(tag), 1, nil)
	data := append(env[:len(env)-1], 0xdb, 0x7f, 0xff, 0xff, 0xff, 'a', 'b')
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 10 {
		d := open(t, data)
		_, err := d.String(crdt.MaxIDLen)
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	}
	runtime.ReadMemStats(&after)
	perCall := (after.TotalAlloc - before.TotalAlloc) / 10
	require.Less(t, perCall, uint64(64<<10), "decoding a %d-byte input allocated %d bytes", len(data), perCall)
}

// TestKnownFixedShapeReportedTooLarge: an envelope of four elements is a
// malformed encoding, but NewDecoder reports it as crdt.ErrTooLarge
// because it reads the header with ArrayLen(3).
func TestKnownFixedShapeReportedTooLarge(t *testing.T) {
	_, _, err := wire.NewDecoder(mustMarshal(t, []any{string(tag), 1, nil, nil}), tag, 1, 100)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	require.NotErrorIs(t, err, crdt.ErrTooLarge)
}

// TestKnownNonMinimalIntsAccepted: the decoder accepts 5 encoded as a
// 9-byte uint64, so two different byte strings decode to one state and the
// format is not canonical on input.
func TestKnownNonMinimalIntsAccepted(t *testing.T) {
	env := raw(t, string(tag), 1, nil)
	data := append(env[:len(env)-1], 0xcf, 0, 0, 0, 0, 0, 0, 0, 5)
	d := open(t, data)
	_, err := d.Int()
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
}

// TestKnownNilBinDoesNotRoundTrip: Encoder.Bin(nil) writes msgpack nil
// (msgpack's EncodeBytes(nil)), which Decoder.Bin rejects, so a codec that
// encodes a nil payload cannot decode its own output.
func TestKnownNilBinDoesNotRoundTrip(t *testing.T) {
	d := open(t, body(t, func(e *wire.Encoder) { e.Bin(nil) }))
	b, err := d.Bin(10)
	require.NoError(t, err)
	require.Empty(t, b)
}

// TestStringOverCapSentinel documents an inconsistency rather than a bug:
// Bin over its cap is ErrTooLarge, String over its cap is
// ErrCorruptEncoding. Either rejects.
func TestStringOverCapSentinel(t *testing.T) {
	d := open(t, raw(t, string(tag), 1, "abcdef"))
	_, err := d.String(5)
	require.True(t, errors.Is(err, crdt.ErrCorruptEncoding) || errors.Is(err, crdt.ErrTooLarge), "%v", err)
}

// TestRejectsNonMinimalHeaders: every collection header and unsigned integer
// must use msgpack's smallest form, so one state has exactly one encoding.
func TestRejectsNonMinimalHeaders(t *testing.T) {
	env := []byte{0x93, 0xa1, 'x', 0x01} // ["x", 1, ...]
	cases := map[string][]byte{
		"array16 for 1 element":  append(append([]byte{}, env...), 0xdc, 0x00, 0x01, 0x01),
		"array32 for 1 element":  append(append([]byte{}, env...), 0xdd, 0, 0, 0, 1, 0x01),
		"str8 for 1 byte":        append(append([]byte{}, env...), 0xd9, 0x01, 'a'),
		"str16 for 1 byte":       append(append([]byte{}, env...), 0xda, 0x00, 0x01, 'a'),
		"bin16 for 1 byte":       append(append([]byte{}, env...), 0xc5, 0x00, 0x01, 'a'),
		"uint64 for 1 (version)": {0x93, 0xa1, 'x', 0xcf, 0, 0, 0, 0, 0, 0, 0, 1, 0x01},
		"uint64 for 2^32-1":      append(append([]byte{}, env...), 0xcf, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff),
	}
	read := map[string]func(d *wire.Decoder) error{
		"array": func(d *wire.Decoder) error { _, err := d.ArrayLen(10); return err },
		"str":   func(d *wire.Decoder) error { _, err := d.String(10); return err },
		"bin":   func(d *wire.Decoder) error { _, err := d.Bin(10); return err },
		"uint":  func(d *wire.Decoder) error { _, err := d.Uint(); return err },
	}
	kind := map[string]string{
		"array16 for 1 element": "array", "array32 for 1 element": "array",
		"str8 for 1 byte": "str", "str16 for 1 byte": "str", "bin16 for 1 byte": "bin",
		"uint64 for 1 (version)": "", "uint64 for 2^32-1": "uint",
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			d, _, err := wire.NewDecoder(in, "x", 1, 1<<10)
			if kind[name] == "" {
				require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
				return
			}
			require.NoError(t, err)
			require.ErrorIs(t, read[kind[name]](d), crdt.ErrCorruptEncoding)
		})
	}
	// The smallest forms of the same values are accepted.
	d, _, err := wire.NewDecoder([]byte{0x93, 0xa1, 'x', 0x01, 0x91, 0xa1, 'a'}, "x", 1, 1<<10)
	require.NoError(t, err)
	require.NoError(t, d.Tuple(1, "body"))
	s, err := d.String(10)
	require.NoError(t, err)
	require.Equal(t, "a", s)
	require.NoError(t, d.Finish())
}

// TestTupleArity: a fixed-arity body with too few or too many elements is
// corrupt (not too large).
func TestTupleArity(t *testing.T) {
	for _, n := range []int{1, 3} {
		in := []byte{0x93, 0xa1, 'x', 0x01, byte(0x90 | n)}
		for i := 0; i < n; i++ {
			in = append(in, 0x00)
		}
		d, _, err := wire.NewDecoder(in, "x", 1, 1<<10)
		require.NoError(t, err)
		require.ErrorIs(t, d.Tuple(2, "body"), crdt.ErrCorruptEncoding)
	}
}

func TestStringBytesAliasesInput(t *testing.T) {
	data := body(t, func(e *wire.Encoder) { e.String("hello") })
	d := open(t, data)
	b, err := d.StringBytes(5)
	require.NoError(t, err)
	require.Equal(t, "hello", string(b))
	require.Equal(t, len(b), cap(b), "capacity is clipped so an append cannot write into the input")
	require.NoError(t, d.Finish())
	i := bytes.Index(data, []byte("hello"))
	require.Same(t, &data[i], &b[0], "StringBytes copies nothing")

	d = open(t, data)
	_, err = d.StringBytes(4)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
}

// TestSizes checks StrSize, UintSize and ArrayHeaderSize against the encoder
// at every boundary of msgpack's header forms.
func TestSizes(t *testing.T) {
	enc := func(f func(e *wire.Encoder)) int {
		return len(body(t, f)) - len(body(t, func(e *wire.Encoder) { e.Nil() })) + 1
	}
	for _, n := range []int{0, 1, 31, 32, 255, 256, 65535, 65536} {
		s := strings.Repeat("s", n)
		require.Equal(t, enc(func(e *wire.Encoder) { e.String(s) }), wire.StrSize(n), "str of %d", n)
	}
	for _, v := range []uint64{0, 127, 128, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, math.MaxInt64, math.MaxUint64} {
		require.Equal(t, enc(func(e *wire.Encoder) { e.Uint(v) }), wire.UintSize(v), "uint %d", v)
		if v <= math.MaxInt64 {
			require.Equal(t, enc(func(e *wire.Encoder) { e.Int(int64(v)) }), wire.UintSize(v), "int %d", v)
		}
	}
	for _, n := range []int{0, 15, 16, 65535, 65536} {
		require.Equal(t, enc(func(e *wire.Encoder) {
			e.ArrayLen(n)
			for range n {
				e.Nil()
			}
		})-n, wire.ArrayHeaderSize(n), "array of %d", n)
	}
}

// TestActorCountsGrowIsBoundedByInput: a body declaring 30,000 pairs but
// holding one-byte nils asks grow for no more pairs than the bytes can hold.
func TestActorCountsGrowIsBoundedByInput(t *testing.T) {
	data := body(t, func(e *wire.Encoder) {
		e.ArrayLen(30000)
		for range 30000 {
			e.Nil()
		}
	})
	d := open(t, data)
	grown := -1
	err := d.ActorCounts(30000, func(n int) { grown = n }, func(crdt.ActorID, int64) error { return nil })
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	require.Equal(t, 30000/4, grown)

	good := body(t, func(e *wire.Encoder) {
		e.ArrayLen(2)
		for _, a := range []string{"a", "b"} {
			e.ArrayLen(2)
			e.String(a)
			e.Int(7)
		}
	})
	var got []crdt.ActorID
	require.NoError(t, open(t, good).ActorCounts(10, func(int) {}, func(a crdt.ActorID, n int64) error {
		got = append(got, a)
		return nil
	}))
	require.Equal(t, []crdt.ActorID{"a", "b"}, got)
}

// TestTimeID checks that a time-based id is read from a bin of exactly 16
// bytes and that every other bin, or another kind of value, is refused.
func TestTimeID(t *testing.T) {
	var want [16]byte
	for i := range want {
		want[i] = byte(i + 1)
	}
	d := open(t, body(t, func(e *wire.Encoder) { e.Bin(want[:]) }))
	id, err := d.TimeID()
	require.NoError(t, err)
	require.Equal(t, want, [16]byte(id))
	for _, c := range []struct {
		name  string
		write func(e *wire.Encoder)
		want  error
	}{
		{"15 bytes", func(e *wire.Encoder) { e.Bin(want[:15]) }, crdt.ErrCorruptEncoding},
		{"empty", func(e *wire.Encoder) { e.Bin(nil) }, crdt.ErrCorruptEncoding},
		{"17 bytes", func(e *wire.Encoder) { e.Bin(append(want[:], 0)) }, crdt.ErrTooLarge},
		{"a string", func(e *wire.Encoder) { e.String(string(want[:])) }, crdt.ErrCorruptEncoding},
	} {
		_, err := open(t, body(t, c.write)).TimeID()
		require.ErrorIs(t, err, c.want, c.name)
	}
}

// TestInt128 checks that a value that fits in int64 is written as Int
// writes it and one past int64 as a bin 8 of 16 bytes, that each reads
// back, and that every other form is refused.
func TestInt128(t *testing.T) {
	of := func(terms ...int64) exact.Int128 {
		var a exact.Int128
		for _, v := range terms {
			a.Add(v)
		}
		return a
	}
	for _, c := range []struct {
		v    exact.Int128
		want string // the value's encoding, hex
	}{
		{of(5), "05"},
		{of(-33), "d0df"},
		{of(math.MaxInt64), "cf7fffffffffffffff"},
		{of(math.MinInt64), "d38000000000000000"},
		{of(math.MaxInt64, 1), "c41000000000000000008000000000000000"},
		{of(math.MinInt64, -1), "c410ffffffffffffffff7fffffffffffffff"},
		{exact.FromBytes([16]byte{0x40}), "c41040000000000000000000000000000000"},
	} {
		b := body(t, func(e *wire.Encoder) { e.Int128(c.v) })
		empty := len(body(t, func(e *wire.Encoder) {}))
		require.Equal(t, c.want, hex.EncodeToString(b[empty:]), c.v.Big().String())
		d := open(t, b)
		got, err := d.Int128()
		require.NoError(t, err)
		require.Equal(t, c.v, got)
		require.NoError(t, d.Finish())
	}
	sixteen := func(first, last byte) []byte {
		b := make([]byte, 16)
		b[0], b[15] = first, last
		return b
	}
	for _, c := range []struct {
		name string
		hex  string
	}{
		{"5 in 16 bytes", "c410" + hex.EncodeToString(sixteen(0, 5))},
		{"-1 in 16 bytes", "c410" + strings.Repeat("ff", 16)},
		{"2^63-1 in 16 bytes", "c410" + "0000000000000000" + "7fffffffffffffff"},
		{"15 bytes", "c40f" + hex.EncodeToString(sixteen(1, 0)[:15])},
		{"17 bytes", "c411" + hex.EncodeToString(append(sixteen(1, 0), 0))},
		{"16 bytes in a bin 16", "c50010" + hex.EncodeToString(sixteen(1, 0))},
		{"truncated", "c410" + hex.EncodeToString(sixteen(1, 0)[:15])},
		{"a string", "b0" + hex.EncodeToString(sixteen(1, 0))},
		{"an integer not in its smallest form", "d005"},
	} {
		v, err := hex.DecodeString(c.hex)
		require.NoError(t, err)
		b := append(body(t, func(e *wire.Encoder) {}), v...)
		_, err = open(t, b).Int128()
		require.ErrorIs(t, err, crdt.ErrCorruptEncoding, c.name)
	}
}

// Sized refuses exactly what NewDecoder refuses for its size, with the
// same error, and passes an encoder's own error through.
func TestSizedMirrorsTheDecoder(t *testing.T) {
	e := wire.NewEncoder(crdt.TagGCounter, 2)
	e.ArrayLen(0)
	b, err := e.Bytes()
	require.NoError(t, err)
	for _, max := range []int{len(b) - 1, len(b)} {
		got, serr := wire.Sized(crdt.TagGCounter, max, b, nil)
		_, _, derr := wire.NewDecoder(b, crdt.TagGCounter, 2, max)
		if max < len(b) {
			require.ErrorIs(t, serr, crdt.ErrTooLarge)
			require.Nil(t, got)
			require.EqualError(t, serr, derr.Error())
		} else {
			require.NoError(t, serr)
			require.Equal(t, b, got)
		}
	}
	boom := errors.New("boom")
	_, err = wire.Sized(crdt.TagGCounter, 1, nil, boom)
	require.ErrorIs(t, err, boom)
}
