package pncounter

import (
	"errors"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/internal/wire"
)

// v1Edge returns a version 1 encoding of n actors in P, of 255 bytes but
// the last, of last bytes, no two sharing a first character (so that a
// version 2 row costs two bytes more: shared and the N count).
func v1Edge(n, last int) []byte {
	e := wire.NewEncoder(crdt.TagPNCounter, 1)
	e.ArrayLen(2)
	e.ArrayLen(n)
	for i := range n {
		l := 255
		if i == n-1 {
			l = last
		}
		e.ArrayLen(2)
		e.String(string(rune(0x10000+i)) + strings.Repeat("a", l-4))
		e.Int(1)
	}
	e.ArrayLen(0)
	b, err := e.Bytes()
	if err != nil {
		panic(err)
	}
	return b
}

// TestDecodeV1TooLargeToReencode decodes version 1 inputs under
// MaxEncodedSize whose version 2 encoding is one byte above it (refused:
// too_large) and exactly at it (accepted, and written back).
func TestDecodeV1TooLargeToReencode(t *testing.T) {
	testsize.SkipSequential(t)
	const n = (MaxEncodedSize-15)/261 + 1 // version 2: 15 bytes and rows of 261
	over := 15 + n*261 - MaxEncodedSize
	last := 255 - over + 1 // version 2 is MaxEncodedSize + 1
	b := v1Edge(n, last)
	if len(b) > MaxEncodedSize {
		t.Fatalf("input %d bytes", len(b))
	}
	var c Counter
	err := c.UnmarshalBinary(b)
	if !errors.Is(err, crdt.ErrTooLarge) {
		t.Fatalf("%d-byte version 1 input: err = %v, want ErrTooLarge", len(b), err)
	}
	t.Log(err)
	if err := c.UnmarshalBinary(v1Edge(n, last-1)); err != nil {
		t.Fatalf("version 2 at the cap: %v", err)
	}
	re, err := c.MarshalBinary()
	if err != nil || len(re) != MaxEncodedSize {
		t.Fatalf("re-encoding: %d bytes, %v; want %d", len(re), err, MaxEncodedSize)
	}
}
