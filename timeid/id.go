// Package timeid is the time-based id the windowed log (deltalog) and the
// tombstone balance (balance) key their updates by: an RFC 4122 version 1
// UUID, which Cassandra stores as a timeuuid.
//
// An ID is chosen by the client that issues an update, so a retry of the
// update carries the same ID and rewrites the same cell or row. IDs are
// ordered as Cassandra orders timeuuid values (Compare): by the embedded
// timestamp first, then by the clock-sequence and node bytes compared as
// signed bytes.
//
// AppendAscending and AppendDescending encode an ID as 16 bytes whose
// order, compared as unsigned bytes, is Compare's order (or its reverse),
// so that a store that orders row keys as bytes clusters rows by ID;
// DecodeAscending and DecodeDescending invert them.
package timeid

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/counterkit/counterkit/crdt"
)

// ID is a time-based UUID (RFC 4122 version 1, Cassandra's timeuuid). The
// zero ID is invalid (Validate); every stored cell and row carries a valid
// one.
//
// ID is a value type, safe for concurrent use.
type ID [16]byte

// uuidEpoch is 1582-10-15T00:00:00Z, the start of version 1 UUID time.
var uuidEpoch = time.Date(1582, time.October, 15, 0, 0, 0, 0, time.UTC)

// uuidTicks converts t to 100ns ticks since the UUID epoch. Times before the
// epoch, or after the 60-bit range ends (year 5236), are clamped.
func uuidTicks(t time.Time) uint64 {
	if t.Before(uuidEpoch) {
		return 0
	}
	// Avoid time.Duration overflow (about 292 years) by splitting seconds.
	secs := t.Unix() - uuidEpoch.Unix()
	if secs > maxTicks/10_000_000 {
		return maxTicks
	}
	// The last second is partly past the 60 bits.
	return min(uint64(secs)*10_000_000+uint64(t.Nanosecond()/100), maxTicks)
}

// New returns a fresh version 1 UUID whose timestamp is t (to 100ns
// precision) and whose clock sequence and node are random, so two calls
// with the same t give different IDs. A t outside what the timestamp holds
// (before 1582-10-15, or past its 60 bits, in the year 5236) is clamped to
// the nearest end.
func New(t time.Time) ID {
	var tail [8]byte
	if _, err := rand.Read(tail[:]); err != nil {
		panic("timeid: crypto/rand failed: " + err.Error())
	}
	return fromTicks(uuidTicks(t), tail)
}

// FromParts builds a version 1 UUID from a timestamp and an explicit 14-bit
// clock sequence and 48-bit node: the top 2 bits of clockSeq and the top
// 16 bits of node are dropped, so nodes that differ only there give equal
// IDs. It is deterministic and exists for tests, examples and golden files
// that need reproducible IDs.
func FromParts(t time.Time, clockSeq uint16, node uint64) ID {
	var tail [8]byte
	binary.BigEndian.PutUint64(tail[:], node) // its low 48 bits in tail[2:]
	binary.BigEndian.PutUint16(tail[0:2], clockSeq&0x3fff)
	return fromTicks(uuidTicks(t), tail)
}

// fromTicks lays out a version 1 UUID. google/uuid builds version 1 UUIDs
// only from the current clock and a process-wide clock sequence and node
// (NewUUID), so a chosen time or tail is written out here.
func fromTicks(ticks uint64, tail [8]byte) ID {
	var id ID
	binary.BigEndian.PutUint32(id[0:4], uint32(ticks))
	binary.BigEndian.PutUint16(id[4:6], uint16(ticks>>32))
	binary.BigEndian.PutUint16(id[6:8], uint16(ticks>>48)&0x0fff|0x1000)
	copy(id[8:], tail[:])
	id[8] = id[8]&0x3f | 0x80 // RFC 4122 variant
	return id
}

// Parse parses the canonical textual form of a version 1 UUID, the one
// String returns: 36 characters, lowercase hex digits in groups of
// 8-4-4-4-12 separated by hyphens. Other forms (uppercase, braces, a
// "urn:uuid:" prefix, no hyphens) are refused. The error wraps
// crdt.ErrInvalidTxnID.
func Parse(s string) (ID, error) {
	u, err := uuid.Parse(s)
	if err != nil {
		return ID{}, fmt.Errorf("%w: %q is not a UUID: %v", crdt.ErrInvalidTxnID, s, err)
	}
	id := ID(u)
	if id.String() != s {
		return ID{}, fmt.Errorf("%w: %q is not in the canonical form %s", crdt.ErrInvalidTxnID, s, id)
	}
	if err := id.Validate(); err != nil {
		return ID{}, err
	}
	return id, nil
}

// Validate reports whether id is a version 1 UUID of the RFC 4122 variant.
// The error wraps crdt.ErrInvalidTxnID.
func (id ID) Validate() error {
	u := uuid.UUID(id)
	if u.Version() != 1 || u.Variant() != uuid.RFC4122 {
		return fmt.Errorf("%w: %s is not a version 1 (time-based) UUID", crdt.ErrInvalidTxnID, u)
	}
	return nil
}

// IsZero reports whether id is the zero value.
func (id ID) IsZero() bool { return id == ID{} }

// ticks returns the 60-bit timestamp in 100ns units since 1582-10-15,
// read with the version 1 layout whatever the version nibble says: Compare
// and the key encodings need one layout for every 16-byte value, while
// google/uuid's UUID.Time reads versions 6 and 7 with their own layouts.
func (id ID) ticks() uint64 {
	lo := uint64(binary.BigEndian.Uint32(id[0:4]))
	mid := uint64(binary.BigEndian.Uint16(id[4:6]))
	hi := uint64(binary.BigEndian.Uint16(id[6:8]) & 0x0fff)
	return hi<<48 | mid<<32 | lo
}

// Time returns the timestamp embedded in id.
func (id ID) Time() time.Time { return ticksTime(id.ticks()) }

// ticksTime is the time of t ticks since the UUID epoch.
func ticksTime(t uint64) time.Time {
	return time.Unix(uuidEpoch.Unix()+int64(t/10_000_000), int64(t%10_000_000)*100).UTC()
}

// String returns the canonical textual form.
func (id ID) String() string { return uuid.UUID(id).String() }

// Compare orders ids the way Cassandra orders timeuuid values: by timestamp
// first, then by the remaining eight bytes (clock sequence and node) compared
// one by one as signed bytes. It returns -1, 0 or +1. The order is total on
// all 16-byte values, valid or not.
func (id ID) Compare(other ID) int {
	if c := cmp.Compare(id.ticks(), other.ticks()); c != 0 {
		return c
	}
	// Equal timestamps: the version nibble is equal too for valid ids; fall
	// back to the full high half for invalid ones so the order stays total.
	if c := bytes.Compare(id[:8], other[:8]); c != 0 {
		return c
	}
	for i := 8; i < 16; i++ {
		if c := cmp.Compare(int8(id[i]), int8(other[i])); c != 0 {
			return c
		}
	}
	return 0
}

// maxTicks is the largest timestamp an ID holds (60 bits: 5236-03-31).
const maxTicks = 1<<60 - 1

// NextTick returns an id one timestamp tick (100ns) after id's, with the
// same clock sequence and node, and true: it sorts after every id that
// carries id's timestamp. The result is a valid version 1 UUID (RFC 4122
// variant) even when id is not. At the largest timestamp there is none: it
// returns id and false.
func (id ID) NextTick() (ID, bool) {
	t := id.ticks()
	if t == maxTicks {
		return id, false
	}
	var tail [8]byte
	copy(tail[:], id[8:])
	return fromTicks(t+1, tail), true
}
