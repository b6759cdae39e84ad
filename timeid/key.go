package timeid

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// KeyLen is the length of an encoded ID.
const KeyLen = 16

// AppendAscending appends the 16-byte order-preserving encoding of id to
// dst: for any two IDs a and b, bytes.Compare of their encodings equals
// a.Compare(b). The encoding is the 60-bit timestamp and the 4-bit version
// as one big-endian uint64, then the clock-sequence and node bytes with
// their sign bit flipped (so signed order becomes unsigned order). Every
// 16-byte value, valid UUID or not, has exactly one encoding.
func AppendAscending(dst []byte, id ID) []byte {
	version := uint64(id[6] >> 4)
	dst = binary.BigEndian.AppendUint64(dst, id.ticks()<<4|version)
	for _, b := range id[8:] {
		dst = append(dst, b^0x80)
	}
	return dst
}

// AppendDescending appends the encoding of AppendAscending with every bit
// inverted, whose unsigned-byte order is the reverse of Compare's: newest
// first.
func AppendDescending(dst []byte, id ID) []byte {
	n := len(dst)
	dst = AppendAscending(dst, id)
	for i := n; i < len(dst); i++ {
		dst[i] = ^dst[i]
	}
	return dst
}

// DecodeAscending returns the ID whose AppendAscending encoding is b. It
// refuses, with an error wrapping crdt.ErrCorruptEncoding, any b that is
// not exactly KeyLen bytes. It does not validate the ID.
func DecodeAscending(b []byte) (ID, error) {
	if len(b) != KeyLen {
		return ID{}, fmt.Errorf("%w: encoded id of %d bytes, want %d", crdt.ErrCorruptEncoding, len(b), KeyLen)
	}
	hi := binary.BigEndian.Uint64(b[:8])
	ticks, version := hi>>4, uint16(hi&0xf)
	var id ID
	binary.BigEndian.PutUint32(id[0:4], uint32(ticks))
	binary.BigEndian.PutUint16(id[4:6], uint16(ticks>>32))
	binary.BigEndian.PutUint16(id[6:8], uint16(ticks>>48)&0x0fff|version<<12)
	for i, x := range b[8:] {
		id[8+i] = x ^ 0x80
	}
	return id, nil
}

// DecodeDescending inverts AppendDescending, as DecodeAscending inverts
// AppendAscending.
func DecodeDescending(b []byte) (ID, error) {
	if len(b) != KeyLen {
		return ID{}, fmt.Errorf("%w: encoded id of %d bytes, want %d", crdt.ErrCorruptEncoding, len(b), KeyLen)
	}
	var inv [KeyLen]byte
	for i, x := range b {
		inv[i] = ^x
	}
	return DecodeAscending(inv[:])
}

// AppendDescendingBefore appends the 8-byte key at which the IDs whose
// time is before t begin in AppendDescending's order: the key of every ID
// whose time is before t is at or after it, and of every other ID before
// it. A scan from it skips the IDs of t and later. ok is false, and
// nothing appended, when no ID's time is before t.
func AppendDescendingBefore(dst []byte, t time.Time) (_ []byte, ok bool) {
	ticks := uuidTicks(t) // the last tick at or before t
	if !ticksTime(ticks).Before(t) {
		if ticks == 0 {
			return dst, false
		}
		ticks-- // t falls on a tick: the last one before t is the one before
	}
	return binary.BigEndian.AppendUint64(dst, ^(ticks<<4 | 0xf)), true
}
