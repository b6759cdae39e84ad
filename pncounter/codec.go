package pncounter

import (
	"fmt"
	"math"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/wire"
)

// Version is the format version MarshalBinary writes and the newest one
// UnmarshalBinary reads.
const Version = 1

// MaxEncodedSize is the largest input UnmarshalBinary accepts.
const MaxEncodedSize = crdt.DefaultMaxEncodedSize

// Envelope sizes: array header (1), fixstr tag, fixint version (1).
const (
	envelopeSize         = 1 + 1 + len(crdt.TagPNCounter) + 1
	gcounterEnvelopeSize = 1 + 1 + len(crdt.TagGCounter) + 1
)

// MarshalBinary encodes the counter as the crdt envelope
//
//	["pncounter", 1, [P, N]]
//
// where P and N each have the gcounter body format: an array of
// [actor, count] pairs sorted by actor byte order, counts positive. Equal
// counters always give identical bytes.
func (c *Counter) MarshalBinary() ([]byte, error) {
	e := wire.NewEncoder(crdt.TagPNCounter, Version)
	e.ArrayLen(2)
	for _, g := range []*gcounter.Counter{&c.p, &c.n} {
		e.ArrayLen(g.Len())
		for actor, count := range g.All() {
			e.ArrayLen(2)
			e.String(string(actor))
			e.Int(count)
		}
	}
	return e.Bytes()
}

// UnmarshalBinary replaces the counter with the one data encodes. It accepts
// only the canonical form MarshalBinary writes: at most MaxEncodedSize bytes;
// in each half at most gcounter.MaxActors pairs, actors valid and strictly
// increasing, counts positive and summing to at most math.MaxInt64; no
// trailing bytes. Errors wrap crdt.ErrCorruptEncoding, ErrTooLarge,
// ErrTypeMismatch or ErrUnsupportedVersion, and leave the receiver unchanged.
func (c *Counter) UnmarshalBinary(data []byte) error {
	d, _, err := wire.NewDecoder(data, crdt.TagPNCounter, Version, MaxEncodedSize)
	if err != nil {
		return fmt.Errorf("pncounter: decode: %w", err)
	}
	out, err := decodeBody(d)
	if err != nil {
		return fmt.Errorf("pncounter: decode: %w", err)
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("pncounter: decode: %w", err)
	}
	*c = *out
	return nil
}

func decodeBody(d *wire.Decoder) (*Counter, error) {
	if err := tuple(d, 2, "body [P, N]"); err != nil {
		return nil, err
	}
	out := &Counter{}
	for h, g := range []*gcounter.Counter{&out.p, &out.n} {
		if err := decodeHalf(d, g); err != nil {
			return nil, fmt.Errorf("%s: %w", "PN"[h:h+1], err)
		}
	}
	return out, nil
}

// decodeHalf reads one gcounter body (sorted [actor, count] pairs) into the
// empty counter g, enforcing the canonical form.
func decodeHalf(d *wire.Decoder, g *gcounter.Counter) error {
	n, err := d.ArrayLen(gcounter.MaxActors)
	if err != nil {
		return err
	}
	g.Grow(n)
	var prev crdt.ActorID
	for i := range n {
		if err := tuple(d, 2, "pair"); err != nil {
			return fmt.Errorf("pair %d: %w", i, err)
		}
		// Increment validates the id (ErrInvalidActor, reported as
		// corrupt below), so read it as a plain bounded string.
		s, err := d.String(crdt.MaxIDLen)
		if err != nil {
			return err
		}
		actor := crdt.ActorID(s)
		if i > 0 && actor <= prev {
			return fmt.Errorf("%w: actor %q after %q: pairs must be strictly increasing", crdt.ErrCorruptEncoding, actor, prev)
		}
		prev = actor
		count, err := d.NonNegInt()
		if err != nil {
			return err
		}
		if count == 0 {
			return fmt.Errorf("%w: actor %q has a zero count (not canonical)", crdt.ErrCorruptEncoding, actor)
		}
		// Actors are distinct and n <= MaxActors, so Increment fails only
		// for an invalid actor id or an overflowing total.
		if err := g.Increment(actor, count); err != nil {
			return fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, err)
		}
	}
	return nil
}

// tuple reads the header of a fixed-shape array of exactly n elements. A
// different length is corrupt, never "too large": the shape is part of the
// format. (wire.Decoder.ArrayLen(n) would report n+1 elements as
// crdt.ErrTooLarge.)
func tuple(d *wire.Decoder, n int, what string) error {
	m, err := d.ArrayLen(math.MaxInt32)
	if err != nil {
		return err
	}
	if m != n {
		return fmt.Errorf("%w: %s has %d elements, want %d", crdt.ErrCorruptEncoding, what, m, n)
	}
	return nil
}
