package riaktest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// vclockCases are the table cases; they also seed the fuzz corpus and name
// the golden files.
var vclockCases = []struct {
	name string
	vc   VClock
}{
	{"empty", VClock{}},
	{"one", VClock{"vnode-0": 1}},
	{"three", VClock{"vnode-2": 7, "vnode-0": 1, "vnode-1": 300}},
	{"big-counter", VClock{"a": 1 << 62, "b": 1<<64 - 1}},
	{"zero-dropped", VClock{"a": 0, "b": 2}},
}

func TestVClockRoundTripAndDeterminism(t *testing.T) {
	for _, tc := range vclockCases {
		t.Run(tc.name, func(t *testing.T) {
			b1, err := tc.vc.MarshalBinary()
			require.NoError(t, err)
			b2, err := tc.vc.Clone().MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, b1, b2)
			var got VClock
			require.NoError(t, got.UnmarshalBinary(b1))
			require.True(t, got.Equal(tc.vc), "%v != %v", got, tc.vc)
			for _, n := range got {
				require.NotZero(t, n)
			}
		})
	}
}

func TestVClockGolden(t *testing.T) {
	for _, tc := range vclockCases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.vc.MarshalBinary()
			require.NoError(t, err)
			path := filepath.Join("testdata", "vclock", tc.name+".golden")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, b, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./riaktest -run TestVClockGolden -update")
			require.True(t, bytes.Equal(want, b), "encoding changed: the vclock format is frozen\nwant %x\ngot  %x", want, b)
			var got VClock
			require.NoError(t, got.UnmarshalBinary(want))
			require.True(t, got.Equal(tc.vc))
		})
	}
}

// TestVClockEncoding pins the format byte by byte, so that the golden files
// are not the only statement of it.
func TestVClockEncoding(t *testing.T) {
	b, err := VClock{"b": 300, "a": 1}.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, []byte{0xC7, 2, 1, 'a', 1, 1, 'b', 0xAC, 0x02}, b)
}

func TestVClockRejects(t *testing.T) {
	// entry encodes one id and counter as MarshalBinary does.
	entry := func(id string, c uint64) []byte {
		b := binary.AppendUvarint(nil, uint64(len(id)))
		return binary.AppendUvarint(append(b, id...), c)
	}
	vc := func(count byte, entries ...[]byte) []byte {
		return append([]byte{vclockMagic, count}, bytes.Join(entries, nil)...)
	}
	good := vc(2, entry("m", 1), entry("n", 2))
	var check VClock
	require.NoError(t, check.UnmarshalBinary(good), "the cases below differ from a valid vclock in one way")
	require.Equal(t, VClock{"m": 1, "n": 2}, check)

	tooMany := VClock{}
	var many [][]byte
	for i := 0; i <= MaxVClockEntries; i++ {
		id := strings.Repeat("x", i+1)
		tooMany[id] = 1
		many = append(many, entry(id, 1))
	}
	_, errMany := tooMany.MarshalBinary()
	require.ErrorIs(t, errMany, crdt.ErrTooLarge)
	_, errID := VClock{"bad\x00id": 1}.MarshalBinary()
	require.ErrorIs(t, errID, crdt.ErrCorruptEncoding)

	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"no entries (must be no bytes)", []byte{vclockMagic, 0}, crdt.ErrCorruptEncoding},
		{"magic only", []byte{vclockMagic}, crdt.ErrCorruptEncoding},
		{"wrong magic", append([]byte{0xC6}, good[1:]...), crdt.ErrCorruptEncoding},
		{"old msgpack format", []byte("\x93\xafriaktest.vclock\x01\x90"), crdt.ErrCorruptEncoding},
		{"not a vclock", []byte("not a vclock"), crdt.ErrCorruptEncoding},
		{"truncated counter", good[:len(good)-1], crdt.ErrCorruptEncoding},
		{"truncated id", vc(1, []byte{3, 'a', 'b'}), crdt.ErrCorruptEncoding},
		{"missing entry", vc(3, entry("m", 1), entry("n", 2)), crdt.ErrCorruptEncoding},
		{"trailing", append(bytes.Clone(good), 0), crdt.ErrCorruptEncoding},
		{"unsorted", vc(2, entry("n", 2), entry("m", 1)), crdt.ErrCorruptEncoding},
		{"duplicate id", vc(2, entry("m", 1), entry("m", 2)), crdt.ErrCorruptEncoding},
		{"zero counter", vc(2, entry("m", 1), entry("n", 0)), crdt.ErrCorruptEncoding},
		{"empty id", vc(1, entry("", 1)), crdt.ErrCorruptEncoding},
		{"invalid id", vc(1, entry("a\x00", 1)), crdt.ErrCorruptEncoding},
		{"long count", []byte{vclockMagic, 0x82, 0x00, 1, 'm', 1, 1, 'n', 2}, crdt.ErrCorruptEncoding},
		{"long id length", vc(1, []byte{0x81, 0x00, 'm', 1}), crdt.ErrCorruptEncoding},
		{"long counter", vc(1, []byte{1, 'm', 0x81, 0x00}), crdt.ErrCorruptEncoding},
		{"counter over 64 bits", vc(1, append([]byte{1, 'm'}, bytes.Repeat([]byte{0xFF}, 10)...)), crdt.ErrCorruptEncoding},
		{"too many entries", append([]byte{vclockMagic, MaxVClockEntries + 1}, bytes.Join(many, nil)...), crdt.ErrTooLarge},
		{"id too long", vc(1, entry(strings.Repeat("x", MaxVnodeIDLen+1), 1)), crdt.ErrTooLarge},
		{"oversized", append([]byte{vclockMagic}, make([]byte, MaxVClockSize)...), crdt.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := VClock{"keep": 9}
			err := v.UnmarshalBinary(tc.in)
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, VClock{"keep": 9}, v, "receiver unchanged on error")
		})
	}
}

func TestVClockOrder(t *testing.T) {
	a := VClock{"x": 2, "y": 1}
	b := VClock{"x": 1, "y": 3}
	require.False(t, a.Descends(b))
	require.False(t, b.Descends(a))
	j := a.Join(b)
	require.True(t, j.Descends(a) && j.Descends(b))
	require.Equal(t, VClock{"x": 2, "y": 3}, j)
	require.True(t, j.Covers(Dot{"x", 2}))
	require.False(t, j.Covers(Dot{"x", 3}))
	require.False(t, j.Covers(Dot{"z", 1}))
	require.True(t, VClock(nil).Descends(VClock{}))
}

func FuzzVClockDecode(f *testing.F) {
	for _, tc := range vclockCases {
		b, err := tc.vc.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("not a vclock"))
	f.Add([]byte{vclockMagic, 1, 1, 'a', 0x81, 0x00}) // a counter not in its shortest form
	f.Fuzz(func(t *testing.T, data []byte) {
		var v VClock
		if err := v.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTooLarge) {
				t.Fatalf("error wraps no sentinel: %v", err)
			}
			return
		}
		b1, err := v.MarshalBinary()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		b2, err := v.MarshalBinary()
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("encoding not deterministic")
		}
		// Accepted input is canonical, so it re-encodes to itself.
		if len(data) > 0 && !bytes.Equal(b1, data) {
			t.Fatalf("accepted non-canonical input %x (canonical %x)", data, b1)
		}
		var w VClock
		if err := w.UnmarshalBinary(b1); err != nil || !w.Equal(v) {
			t.Fatalf("decode(encode(x)) != x: %v %v", w, err)
		}
	})
}
