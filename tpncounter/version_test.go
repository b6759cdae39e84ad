package tpncounter

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/internal/wire"
)

// TestDecodeRefusesOverstatedVersion: each state has one encoding, in the
// version the encoder writes for it (6.7), so a state under a higher
// version is corrupt; the versions it needs decode, as does an older one.
// Each input also goes, as either half of a tpncounter (asCounter), to
// Counter.UnmarshalBinary and to MergeBinary, which must give the same
// result and error (checkShiftMerge) into an empty Counter and into one
// holding the state, whose entry MergeBinary then passes over unread.
func TestDecodeRefusesOverstatedVersion(t *testing.T) {
	const uuid = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
	tg := func(version uint64, entry func(*wire.Encoder)) []byte {
		e := wire.NewEncoder(crdt.TagTGCounter, version)
		if entry == nil {
			e.ArrayLen(0)
		} else {
			e.ArrayLen(1)
			entry(e)
		}
		b, err := e.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	live := func(id string, bin bool) func(*wire.Encoder) {
		return func(e *wire.Encoder) {
			e.ArrayLen(6)
			e.String("a")
			e.Uint(1)
			e.Int(0)
			e.Int(0)
			e.ArrayLen(1)
			e.ArrayLen(2)
			if bin {
				e.TxnID(id, true)
			} else {
				e.String(id)
			}
			e.Int(5)
			e.ArrayLen(0)
		}
	}
	retired := func(e *wire.Encoder) { // version 3's retired entry, no time
		e.ArrayLen(4)
		e.String("a")
		e.Uint(1)
		e.Int(5)
		e.Int(0)
	}
	timed := func(e *wire.Encoder) { // version 4's, retired at 1 s
		e.ArrayLen(5)
		e.String("a")
		e.Uint(1)
		e.Int(5)
		e.Int(0)
		e.Int(1e9)
	}
	baseOnly := func(e *wire.Encoder) { // cutoff 1 s, total 7
		e.ArrayLen(3)
		e.Int(1e9)
		e.Int(7)
		e.Int(0)
	}
	for _, c := range []struct {
		name string
		data []byte
		want int // the version it re-encodes in; 0: corrupt
	}{
		{"empty, v2", tg(2, nil), 2},
		{"empty, v3", tg(3, nil), 0},
		{"empty, v4", tg(4, nil), 0},
		{"live entry, v1", tg(1, func(e *wire.Encoder) {
			e.ArrayLen(5)
			e.String("a")
			e.Uint(1)
			e.Int(0)
			e.ArrayLen(1)
			e.ArrayLen(2)
			e.String("t1")
			e.Int(5)
			e.ArrayLen(0)
		}), 2},
		{"live entry, v2", tg(2, live("t1", false)), 2},
		{"live entry, v3", tg(3, live("t1", false)), 0},
		{"live entry, v4", tg(4, live("t1", false)), 0},
		{"UUID id as text, v2", tg(2, live(uuid, false)), 3},
		{"UUID id, v3", tg(3, live(uuid, true)), 3},
		{"UUID id, v4", tg(4, live(uuid, true)), 0},
		{"retired entry, v3", tg(3, retired), 3},
		{"retired entry, v4", tg(4, retired), 0},
		{"retired entry with a time, v4", tg(4, timed), 4},
		{"base, v4", tg(4, baseOnly), 4},
	} {
		var g GCounter
		err := g.UnmarshalBinary(c.data)
		for h := range 2 {
			data := asCounter(c.data, h)
			var d Counter
			derr := d.UnmarshalBinary(data)
			if (derr == nil) != (err == nil) {
				t.Errorf("%s, half %d: Counter.UnmarshalBinary: %v; GCounter's: %v", c.name, h, derr, err)
			}
			for _, recv := range []string{"empty", "holding the state"} {
				m := newT(t, Options{})
				if recv != "empty" {
					require.NoError(t, m.UnmarshalBinary(lowest(t, data)))
					must(m.MarshalBinary()) // the entry's encoding cached, as a writer's is
				}
				if err := checkShiftMerge(m, data); err != nil {
					t.Errorf("%s, half %d, into a Counter %s: %v", c.name, h, recv, err)
				}
				mergesOwnUndecoded(t, m, data)
			}
		}
		if c.want == 0 {
			if !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Errorf("%s: err = %v, want ErrCorruptEncoding", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		re, err := g.MarshalBinary()
		if err != nil || re[2+len(crdt.TagTGCounter)] != byte(c.want) {
			t.Errorf("%s: re-encoding %x, %v; want version %d", c.name, re, err, c.want)
		}
	}
	// tpncounter: the empty counter, and a half's version deciding.
	for v, want := range map[byte]bool{2: true, 3: false, 4: false} {
		data := hexBytes(t, fmt.Sprintf("93aa74706e636f756e746572%02x929090", v))
		var c Counter
		if err := c.UnmarshalBinary(data); (err == nil) != want || err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) {
			t.Errorf("empty tpncounter, v%d: err = %v", v, err)
		}
		if err := newT(t, Options{}).MergeBinary(data); (err == nil) != want || err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) {
			t.Errorf("empty tpncounter, v%d: MergeBinary: err = %v", v, err)
		}
	}
	// A UUID id in P and a retired entry in N need version 3, in either order.
	for _, v := range []uint64{3, 4} {
		for _, swap := range []bool{false, true} {
			e := wire.NewEncoder(crdt.TagTPNCounter, v)
			e.ArrayLen(2)
			for i, entry := range []func(*wire.Encoder){live(uuid, true), retired} {
				if swap {
					entry = [...]func(*wire.Encoder){retired, live(uuid, true)}[i]
				}
				e.ArrayLen(1)
				entry(e)
			}
			data := must(e.Bytes())
			for _, recv := range []string{"empty", "holding the state"} {
				m := newT(t, Options{})
				if recv != "empty" {
					require.NoError(t, m.UnmarshalBinary(lowest(t, data)))
					must(m.MarshalBinary())
				}
				err := m.Clone().MergeBinary(data)
				if (err == nil) != (v == 3) {
					t.Errorf("UUID id and retired entry, v%d, swapped %v, into a Counter %s: MergeBinary: %v", v, swap, recv, err)
				}
				if err := checkShiftMerge(m, data); err != nil {
					t.Errorf("UUID id and retired entry, v%d, swapped %v, into a Counter %s: %v", v, swap, recv, err)
				}
				mergesOwnUndecoded(t, m, data)
			}
		}
	}
}

// mergesOwnUndecoded checks, if data is c's own encoding, that MergeBinary
// passes over all of it: it allocates less than decoding data does, which
// it would not if it took data's version for one above its state's and
// had the decoder judge it.
func mergesOwnUndecoded(t *testing.T, c *Counter, data []byte) {
	t.Helper()
	if !bytes.Equal(must(c.MarshalBinary()), data) {
		return
	}
	dec := testing.AllocsPerRun(5, func() {
		var d Counter
		require.NoError(t, d.UnmarshalBinary(data))
	})
	mb := testing.AllocsPerRun(5, func() { require.NoError(t, c.MergeBinary(data)) })
	if mb >= dec {
		t.Errorf("MergeBinary of a Counter's own encoding %x: %v allocations, decoding it %v", data, mb, dec)
	}
}

// lowest returns data (a tgcounter or tpncounter encoding) under the
// lowest version that decodes it.
func lowest(t *testing.T, data []byte) []byte {
	t.Helper()
	vpos := 2 + int(data[1]&0x1f) // [tag, version, body], the tag a fixstr
	for v := byte(1); v <= FormatVersion; v++ {
		b := bytes.Clone(data)
		b[vpos] = v
		var c Counter
		if c.UnmarshalBinary(b) == nil {
			return b
		}
	}
	t.Fatalf("%x decodes under no version", data)
	return nil
}

func hexBytes(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// v1Edge returns a version 1 encoding (tag tgcounter, or tpncounter with
// every entry in P) of n entries of 255-byte actors but the last, of last
// bytes, each with a total of 1 and no transaction.
func v1Edge(tag crdt.TypeTag, n, last int) []byte {
	e := wire.NewEncoder(tag, 1)
	if tag == crdt.TagTPNCounter {
		e.ArrayLen(2)
	}
	e.ArrayLen(n)
	for i := range n {
		l := 255
		if i == n-1 {
			l = last
		}
		e.ArrayLen(5)
		e.String(fmt.Sprintf("%08d", i) + strings.Repeat("a", l-8))
		e.Uint(1)
		e.Int(1)
		e.ArrayLen(0)
		e.ArrayLen(0)
	}
	if tag == crdt.TagTPNCounter {
		e.ArrayLen(0)
	}
	b, err := e.Bytes()
	if err != nil {
		panic(err)
	}
	return b
}

// TestDecodeV1TooLargeToReencode decodes version 1 inputs under the size
// cap whose version 2 encoding (a forgot byte more per entry) is one byte
// above it (refused: too_large) and exactly at it (accepted, and written
// back).
func TestDecodeV1TooLargeToReencode(t *testing.T) {
	testsize.SkipSequential(t)
	const max = crdt.DefaultMaxEncodedSize
	for _, c := range []struct {
		tag    crdt.TypeTag
		header int // envelope and body headers, in version 2
		decode func([]byte) ([]byte, error)
	}{
		{crdt.TagTGCounter, 12 + 3, func(b []byte) ([]byte, error) {
			var g GCounter
			if err := g.UnmarshalBinary(b); err != nil {
				return nil, err
			}
			return g.MarshalBinary()
		}},
		{crdt.TagTPNCounter, 13 + 1 + 3 + 1, func(b []byte) ([]byte, error) {
			var c Counter
			if err := c.UnmarshalBinary(b); err != nil {
				return nil, err
			}
			return c.MarshalBinary()
		}},
	} {
		n := (max-c.header)/263 + 1 // entries of 263 bytes in version 2
		last := 255 - (c.header + n*263 - max) + 1
		b := v1Edge(c.tag, n, last)
		if len(b) > max {
			t.Fatalf("%s: input %d bytes", c.tag, len(b))
		}
		if _, err := c.decode(b); !errors.Is(err, crdt.ErrTooLarge) {
			t.Errorf("%s: %d-byte version 1 input: err = %v, want ErrTooLarge", c.tag, len(b), err)
		} else {
			t.Log(err)
		}
		re, err := c.decode(v1Edge(c.tag, n, last-1))
		if err != nil || len(re) != max {
			t.Errorf("%s: version 2 at the cap: %d bytes, %v", c.tag, len(re), err)
		}
	}
}
