package gcounter

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// FormatVersion is the format version MarshalBinary writes and the newest one
// UnmarshalBinary reads.
const FormatVersion = 1

// MaxEncodedSize is the largest input UnmarshalBinary accepts.
const MaxEncodedSize = crdt.DefaultMaxEncodedSize

// envelopeSize is the encoded size of [tag, FormatVersion] plus the array header.
var envelopeSize = wire.ArrayHeaderSize(crdt.EnvelopeLen) + wire.StrSize(len(crdt.TagGCounter)) + wire.UintSize(FormatVersion)

// MarshalBinary encodes the counter as the crdt envelope
//
//	["gcounter", 1, [[actor, count], ...]]
//
// with pairs sorted by actor byte order and every count positive, so equal
// counters always give identical bytes.
func (c *Counter) MarshalBinary() ([]byte, error) {
	e := wire.NewEncoder(crdt.TagGCounter, FormatVersion)
	e.ArrayLen(len(c.entries))
	for _, en := range c.sorted() {
		e.ArrayLen(2)
		e.String(string(en.actor))
		e.Int(en.count)
	}
	return e.Bytes()
}

// UnmarshalBinary replaces the counter with the one data encodes. It accepts
// only the canonical form MarshalBinary writes: at most MaxEncodedSize bytes
// and MaxActors pairs, actors valid and strictly increasing, counts positive
// and summing to at most math.MaxInt64, no trailing bytes. Errors wrap
// crdt.ErrCorruptEncoding, ErrTooLarge, ErrTypeMismatch or
// ErrUnsupportedVersion, and leave the receiver unchanged.
func (c *Counter) UnmarshalBinary(data []byte) error {
	d, _, err := wire.NewDecoder(data, crdt.TagGCounter, FormatVersion, MaxEncodedSize)
	if err != nil {
		return fmt.Errorf("gcounter: decode: %w", err)
	}
	out, err := decodePairs(d)
	if err != nil {
		return fmt.Errorf("gcounter: decode: %w", err)
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("gcounter: decode: %w", err)
	}
	*c = *out
	return nil
}

// decodePairs reads the body array of [actor, count] pairs.
func decodePairs(d *wire.Decoder) (*Counter, error) {
	out := &Counter{}
	err := d.ActorCounts(MaxActors, out.Grow, func(actor crdt.ActorID, count int64) error {
		if out.total > maxInt64-count {
			return fmt.Errorf("%w: counts sum past %d", crdt.ErrCorruptEncoding, int64(maxInt64))
		}
		out.add(actor, count)
		out.total += count
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

const maxInt64 = 1<<63 - 1

// bodySize is the encoded size of the pairs array.
func (c *Counter) bodySize() int {
	n := wire.ArrayHeaderSize(len(c.entries))
	for _, e := range c.entries {
		n += wire.ArrayHeaderSize(2) + wire.StrSize(len(e.actor)) + wire.UintSize(uint64(e.count))
	}
	return n
}
