package gcounter

import (
	"errors"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/internal/wire"
)

// v1Edge returns a version 1 encoding of n actors of 255 bytes but the
// last, of last bytes, no two sharing a first character (so that version 2
// shares no prefix and costs a byte more per actor).
func v1Edge(n, last int) []byte {
	e := wire.NewEncoder(crdt.TagGCounter, 1)
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
	const n = (MaxEncodedSize-14)/260 + 1 // rows of 259 bytes, 260 in version 2
	over := 14 + n*260 - MaxEncodedSize   // version 2 bytes above the cap with every actor of 255
	last := 255 - over + 1                // version 2 is MaxEncodedSize + 1
	b := v1Edge(n, last)
	if len(b) > MaxEncodedSize {
		t.Fatalf("input %d bytes", len(b))
	}
	var c Counter
	err := c.UnmarshalBinary(b)
	if !errors.Is(err, crdt.ErrTooLarge) {
		t.Fatalf("%d-byte version 1 input, %d bytes in version 2: err = %v, want ErrTooLarge", len(b), len(b)+n, err)
	}
	t.Log(err)
	b = v1Edge(n, last-1)
	if err := c.UnmarshalBinary(b); err != nil {
		t.Fatalf("version 2 at the cap: %v", err)
	}
	re, err := c.MarshalBinary()
	if err != nil || len(re) != MaxEncodedSize {
		t.Fatalf("re-encoding: %d bytes, %v; want %d", len(re), err, MaxEncodedSize)
	}
}
