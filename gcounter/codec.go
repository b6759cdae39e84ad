package gcounter

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// FormatVersion is the format MarshalBinary writes; UnmarshalBinary also
// reads version 1 (["gcounter", 1, [[actor, count], ...]]). Version 2
// front-codes the sorted ids, roughly halving counters whose ids share
// prefixes, as generated ids do.
const FormatVersion = 2

// MaxEncodedSize is the largest input UnmarshalBinary accepts, and the
// largest encoding MarshalBinary writes.
const MaxEncodedSize = crdt.DefaultMaxEncodedSize

// minRowSize is the smallest encoded version 2 row: fixarray, shared, a
// one-byte suffix, a count.
const minRowSize = 1 + 1 + 2 + 1

// envelopeSize is the encoded size of [tag, FormatVersion] plus the array header.
var envelopeSize = wire.ArrayHeaderSize(crdt.EnvelopeLen) + wire.StrSize(len(crdt.TagGCounter)) + wire.UintSize(FormatVersion)

// MarshalBinary encodes the counter as ["gcounter", 2, [[shared, suffix,
// count], ...]]: a row per actor, in byte order, its id the previous row's
// first shared bytes (the longest common prefix ending on a character
// boundary) plus suffix. Equal counters give identical bytes.
func (c *Counter) MarshalBinary() ([]byte, error) {
	c = c.orEmpty()
	e := wire.NewEncoder(crdt.TagGCounter, FormatVersion)
	e.ArrayLen(len(c.entries))
	c.rows(func(shared int, suffix string, count int64) {
		e.ArrayLen(3)
		e.Uint(uint64(shared))
		e.String(suffix)
		e.Int(count)
	})
	b, err := e.Bytes()
	return wire.Sized(crdt.TagGCounter, MaxEncodedSize, b, err)
}

// rows calls f with each version 2 row, in actor order.
func (c *Counter) rows(f func(shared int, suffix string, count int64)) {
	prev := ""
	for _, en := range c.sorted() {
		actor := string(en.actor)
		k := wire.SharedPrefix(prev, actor)
		f(k, actor[k:], en.count)
		prev = actor
	}
}

// UnmarshalBinary replaces c with data's counter, version 1 or 2, in its
// canonical form only: at most MaxEncodedSize bytes and MaxMergedActors actors,
// valid and strictly increasing, positive counts (whose sum may pass
// math.MaxInt64, see Value), no trailing bytes, and (version 2) the encoder's shared
// lengths. Errors wrap crdt.ErrCorruptEncoding, ErrTooLarge,
// ErrTypeMismatch or ErrUnsupportedVersion and leave c unchanged. It
// allocates at most 16 bytes per input byte (TestDecodeAllocation).
func (c *Counter) UnmarshalBinary(data []byte) error {
	d, version, err := wire.NewDecoder(data, crdt.TagGCounter, FormatVersion, MaxEncodedSize)
	if err != nil {
		return fmt.Errorf("gcounter: decode: %w", err)
	}
	var out *Counter
	if version == 1 {
		if out, err = decodePairs(d); err == nil {
			err = fitsNewest(envelopeSize+out.bodySize(), crdt.TagGCounter)
		}
	} else {
		out, err = decodeRows(d)
	}
	if err != nil {
		return fmt.Errorf("gcounter: decode: %w", err)
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("gcounter: decode: %w", err)
	}
	*c = *out
	return nil
}

// fitsNewest refuses, with crdt.ErrTooLarge, a version 1 state whose
// encoding in FormatVersion, size bytes, is above MaxEncodedSize: it is
// written back in that form (SPEC.md 3.3), and a state that cannot be
// written back is not accepted. Version 2 adds a byte per actor, the
// shared length, and saves the prefixes actors share.
func fitsNewest(size int, tag crdt.TypeTag) error {
	if size > MaxEncodedSize {
		return fmt.Errorf("%w: a version 1 state whose version %d encoding is %d bytes, limit %d", crdt.ErrTooLarge, FormatVersion, size, MaxEncodedSize)
	}
	return nil
}

// decodeRows reads a version 2 body of [shared, suffix, count] rows.
func decodeRows(d *wire.Decoder) (*Counter, error) {
	n, err := d.ArrayLen(MaxMergedActors)
	if err != nil {
		return nil, err
	}
	out := &Counter{}
	// Sized for the rows the remaining bytes can hold, not the header.
	out.Grow(min(n, d.Remaining()/minRowSize))
	var (
		prev string
		buf  []byte
	)
	for i := range n {
		if err := d.Tuple(3, "row"); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		var actor string
		if actor, buf, err = d.FrontCodedID(i, prev, buf); err != nil {
			return nil, err
		}
		if err := crdt.ActorID(actor).Validate(); err != nil {
			return nil, fmt.Errorf("%w: row %d: %v", crdt.ErrCorruptEncoding, i, err)
		}
		prev = actor
		count, err := d.NonNegInt()
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		if count == 0 {
			return nil, fmt.Errorf("%w: row %d: actor %q has a zero count (not canonical)", crdt.ErrCorruptEncoding, i, actor)
		}
		// Actors are distinct (strictly increasing) and at most MaxMergedActors.
		out.add(crdt.ActorID(actor), count, tagOf(actor))
		out.total.Add(count)
	}
	return out, nil
}

// decodePairs reads a version 1 body: an array of [actor, count] pairs.
func decodePairs(d *wire.Decoder) (*Counter, error) {
	out := &Counter{}
	err := d.ActorCounts(MaxMergedActors, out.Grow, func(actor crdt.ActorID, count int64) error {
		out.add(actor, count, tagOf(string(actor)))
		out.total.Add(count)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// bodySize is the encoded size of the version 2 rows array.
func (c *Counter) bodySize() int {
	n := wire.ArrayHeaderSize(len(c.entries))
	c.rows(func(shared int, suffix string, count int64) {
		n += wire.ArrayHeaderSize(3) + wire.UintSize(uint64(shared)) + wire.StrSize(len(suffix)) + wire.UintSize(uint64(count))
	})
	return n
}
