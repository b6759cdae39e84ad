package tpncounter

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// TestDecodeRefusesOverstatedVersion: each state has one encoding, in the
// version the encoder writes for it (6.7), so a state under a higher
// version is corrupt; the versions it needs decode, as does an older one.
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
	} {
		var g GCounter
		err := g.UnmarshalBinary(c.data)
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
	}
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
