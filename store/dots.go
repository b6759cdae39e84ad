package store

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/counterkit/counterkit/crdt"
)

// DotTokens is an optional helper for Siblings backends that give every
// stored value a unique number (a dot) and name the siblings a Fetch
// returned by their dots. Its value is the first byte of every token it
// makes, which tells one backend's tokens from another's; the dots follow
// in ascending order as uvarints. The in-memory store uses DotTokens('m'),
// the embedded store DotTokens('e').
//
// A DotTokens is a plain value, safe for concurrent use.
type DotTokens byte

// Encode returns the token naming dots: the prefix byte, then the dots in
// ascending order. It sorts dots in place.
func (p DotTokens) Encode(dots []uint64) Token {
	slices.Sort(dots)
	b := []byte{byte(p)}
	for _, d := range dots {
		b = binary.AppendUvarint(b, d)
	}
	return b
}

// Decode returns the dots t names, in the order t lists them; an empty
// token names none. A token that does not start with the prefix byte, or
// whose dots do not parse, is an error wrapping crdt.ErrCorruptEncoding.
func (p DotTokens) Decode(t Token) ([]uint64, error) {
	if len(t) == 0 {
		return nil, nil
	}
	if t[0] != byte(p) {
		return nil, fmt.Errorf("store: token starts with %q, not %q: %w", t[0], byte(p), crdt.ErrCorruptEncoding)
	}
	var dots []uint64
	for rest := t[1:]; len(rest) > 0; {
		d, n := binary.Uvarint(rest)
		if n <= 0 {
			return nil, fmt.Errorf("store: malformed dot %d of a token: %w", len(dots)+1, crdt.ErrCorruptEncoding)
		}
		dots = append(dots, d)
		rest = rest[n:]
	}
	return dots, nil
}
