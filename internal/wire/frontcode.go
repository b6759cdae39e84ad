package wire

import (
	"fmt"
	"unicode/utf8"

	"github.com/counterkit/counterkit/crdt"
)

// Front coding: a list of ids sorted in byte order is written as rows that
// each start with [shared, suffix], where the row's id is the first shared
// bytes of the previous row's id followed by suffix. gcounter and
// pncounter version 2 use it for their actor rows (SPEC.md 4.4 and 5.4).

// SharedPrefix returns how many leading bytes of next a front-coded row
// takes from prev: their longest common prefix, shortened so that it ends on
// a UTF-8 character boundary of next. The stored suffix next[k:] is then
// itself valid UTF-8, as a msgpack str should be. With prev < next in byte
// order, next is never a prefix of prev and the suffix is never empty.
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

// FrontCodedID reads row i's [shared, suffix] after the id prev ("" first)
// and returns the row's id, refusing (crdt.ErrCorruptEncoding) a shared
// length beyond prev or other than SharedPrefix's, an id over
// crdt.MaxIDLen, and an id not after prev. buf is scratch for the next row.
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
