package riaktest

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
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

func TestVClockRejects(t *testing.T) {
	good, err := VClock{"m": 1, "n": 2}.MarshalBinary()
	require.NoError(t, err)
	// Swap the two one-byte ids to make the order non-canonical ("m" and
	// "n" do not occur in the envelope tag).
	swapped := bytes.Clone(good)
	im, in := bytes.IndexByte(swapped, 'm'), bytes.IndexByte(swapped, 'n')
	require.Positive(t, im)
	require.Positive(t, in)
	swapped[im], swapped[in] = 'n', 'm'
	zero := bytes.Clone(good)
	zero[len(zero)-1] = 0 // last counter 2 -> 0

	var sb strings.Builder
	for i := 0; i < MaxVClockEntries+1; i++ {
		sb.WriteString("x")
	}
	tooMany := VClock{}
	for i := 0; i <= MaxVClockEntries; i++ {
		tooMany[sb.String()[:i+1]] = 1
	}
	_, errMany := tooMany.MarshalBinary()
	require.ErrorIs(t, errMany, crdt.ErrTooLarge)

	e := wire.NewEncoder(VClockTag, vclockVersion)
	e.ArrayLen(0)
	emptyArray, err := e.Bytes()
	require.NoError(t, err)
	e = wire.NewEncoder("other.tag", vclockVersion)
	e.ArrayLen(0)
	otherTag, err := e.Bytes()
	require.NoError(t, err)
	e = wire.NewEncoder(VClockTag, vclockVersion+1)
	e.ArrayLen(0)
	newer, err := e.Bytes()
	require.NoError(t, err)

	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"empty array (found by fuzzing)", emptyArray, crdt.ErrCorruptEncoding},
		{"other tag", otherTag, crdt.ErrTypeMismatch},
		{"newer version", newer, crdt.ErrUnsupportedVersion},
		{"truncated", good[:len(good)-1], crdt.ErrCorruptEncoding},
		{"trailing", append(bytes.Clone(good), 0), crdt.ErrCorruptEncoding},
		{"unsorted", swapped, crdt.ErrCorruptEncoding},
		{"zero counter", zero, crdt.ErrCorruptEncoding},
		{"not msgpack", []byte("not a vclock"), crdt.ErrCorruptEncoding},
		{"oversized", make([]byte, MaxVClockSize+1), crdt.ErrTooLarge},
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
	f.Fuzz(func(t *testing.T, data []byte) {
		var v VClock
		if err := v.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTooLarge) &&
				!errors.Is(err, crdt.ErrTypeMismatch) && !errors.Is(err, crdt.ErrUnsupportedVersion) {
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
