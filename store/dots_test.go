package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

func TestDotTokens(t *testing.T) {
	const p = store.DotTokens('m')
	for _, tc := range []struct {
		dots []uint64
		want store.Token
	}{
		{nil, store.Token{'m'}},
		{[]uint64{1}, store.Token{'m', 1}},
		{[]uint64{300, 2, 1}, store.Token{'m', 1, 2, 0xac, 0x02}},
		{[]uint64{1<<64 - 1}, store.Token{'m', 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}},
	} {
		in := slices.Clone(tc.dots)
		got := p.Encode(in)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("Encode(%v) = %x, want %x", tc.dots, got, tc.want)
		}
		dots, err := p.Decode(got)
		if err != nil || !slices.Equal(dots, slices.Sorted(slices.Values(tc.dots))) {
			t.Errorf("Decode(%x) = %v, %v; want %v sorted", got, dots, err, tc.dots)
		}
	}
	if dots, err := p.Decode(nil); dots != nil || err != nil {
		t.Errorf("Decode(nil) = %v, %v; want nil, nil", dots, err)
	}
	for _, bad := range []store.Token{
		{'e', 1},    // another store's token
		{'m', 0x80}, // a truncated uvarint
		append(store.Token{'m'}, bytes.Repeat([]byte{0xff}, 10)...), // past 64 bits
	} {
		if _, err := p.Decode(bad); !errors.Is(err, crdt.ErrCorruptEncoding) {
			t.Errorf("Decode(%x) = %v, want crdt.ErrCorruptEncoding", bad, err)
		}
	}
}

// FuzzDotTokens: decoding never panics, a decoded token's dots re-encode to
// a token naming the same dots, and encoding twice gives the same bytes.
func FuzzDotTokens(f *testing.F) {
	const p = store.DotTokens('e')
	for _, seed := range [][]byte{nil, {'e'}, {'e', 1, 2}, {'e', 2, 1}, {'m', 1}, {'e', 0x80}} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		dots, err := p.Decode(b)
		if err != nil || len(b) == 0 {
			return
		}
		again := p.Encode(slices.Clone(dots))
		back, err := p.Decode(again)
		if err != nil || !slices.Equal(back, slices.Sorted(slices.Values(dots))) {
			t.Fatalf("%x decodes to %v; re-encoded %x decodes to %v, %v", b, dots, again, back, err)
		}
		if !bytes.Equal(again, p.Encode(slices.Clone(back))) {
			t.Fatalf("encoding %v twice gives different bytes", back)
		}
	})
}

func ExampleDotTokens() {
	const tokens = store.DotTokens('m')
	t := tokens.Encode([]uint64{7, 3, 300})
	fmt.Printf("%q\n", t)
	dots, err := tokens.Decode(t)
	fmt.Println(dots, err)
	_, err = store.DotTokens('e').Decode(t)
	fmt.Println(err)
	// Output:
	// "m\x03\a\xac\x02"
	// [3 7 300] <nil>
	// store: token starts with 'm', not 'e': counterkit: corrupt encoding
}
