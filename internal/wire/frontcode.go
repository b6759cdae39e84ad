package wire

import (
	"fmt"
	"unicode/utf8"

	"github.com/counterkit/counterkit/crdt"
)

// Front coding: sorted ids are written as rows starting [shared, suffix], the
// id being the previous id's first shared bytes plus suffix (gcounter and
// pncounter version 2, SPEC.md 4.4 and 5.4).

// SharedPrefix returns how many bytes of next a row takes from prev: their
// common prefix, cut back to a UTF-8 boundary of next so that the suffix is
// valid UTF-8 (and, with prev < next, never empty).
func SharedPrefix(prev, next string) int {
	k := 0
	for k < len(prev) && k < len(next) && prev[k] == next[k] {
		k++
	}
	for k > 0 && k < len(next) && !utf8.RuneStart(next[k]) {
		k--
	}
	return k
}

// FrontCodedID reads row i's [shared, suffix] after id prev ("" first) and
// returns the id, refusing (crdt.ErrCorruptEncoding) a shared length beyond prev
// or not SharedPrefix's, an id over crdt.MaxIDLen or not after prev; buf is scratch.
func (d *Decoder) FrontCodedID(i int, prev string, buf []byte) (string, []byte, error) {
	shared, err := d.NonNegInt()
	if err != nil {
		return "", buf, fmt.Errorf("row %d: %w", i, err)
	}
	if shared > int64(len(prev)) {
		return "", buf, fmt.Errorf("%w: row %d shares %d bytes of a %d-byte previous actor", crdt.ErrCorruptEncoding, i, shared, len(prev))
	}
	suffix, err := d.StringBytes(crdt.MaxIDLen)
	if err != nil {
		return "", buf, fmt.Errorf("row %d: %w", i, err)
	}
	if int(shared)+len(suffix) > crdt.MaxIDLen {
		return "", buf, fmt.Errorf("%w: row %d: actor of %d bytes, limit %d", crdt.ErrCorruptEncoding, i, int(shared)+len(suffix), crdt.MaxIDLen)
	}
	buf = append(append(buf[:0], prev[:shared]...), suffix...)
	id := string(buf)
	if i > 0 && id <= prev {
		return "", buf, fmt.Errorf("%w: row %d: actor %q after %q: rows must be strictly increasing", crdt.ErrCorruptEncoding, i, id, prev)
	}
	if want := SharedPrefix(prev, id); int64(want) != shared {
		return "", buf, fmt.Errorf("%w: row %d: actor %q stored as %d shared bytes, canonical is %d", crdt.ErrCorruptEncoding, i, id, shared, want)
	}
	return id, buf, nil
}
