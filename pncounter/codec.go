package pncounter

import (
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/internal/wire"
)

// FormatVersion is the format MarshalBinary writes; UnmarshalBinary also
// reads version 1 (["pncounter", 1, [P, N]], gcounter version 1 halves).
// Version 2 writes a row per actor and front-codes the sorted ids.
const FormatVersion = 2

// MaxEncodedSize is the largest input UnmarshalBinary accepts, and the
// largest encoding MarshalBinary writes.
const MaxEncodedSize = crdt.DefaultMaxEncodedSize

// MaxRows is the most rows a version 2 encoding may hold: every actor of P
// and of N, when no actor is in both.
const MaxRows = 2 * gcounter.MaxMergedActors

// minRowSize is the smallest encoded row: fixarray, shared, a one-byte
// suffix, two counts.
const minRowSize = 1 + 1 + 2 + 1 + 1

// envelopeSize is the size of ["pncounter", FormatVersion, ...] without the body.
var envelopeSize = wire.ArrayHeaderSize(crdt.EnvelopeLen) + wire.StrSize(len(crdt.TagPNCounter)) + wire.UintSize(FormatVersion)

// row is one actor's line in the version 2 body.
type row struct {
	shared int    // bytes of the previous row's actor that this one starts with
	actor  string // the whole id; the encoding holds actor[shared:]
	p, n   int64
}

// rows returns the rows of the actors in either half, in byte order.
func (c *Counter) rows() []row {
	actors := c.Actors()
	out := make([]row, len(actors))
	prev := ""
	for i, a := range actors {
		out[i] = row{shared: wire.SharedPrefix(prev, string(a)), actor: string(a), p: c.p.Get(a), n: c.n.Get(a)}
		prev = string(a)
	}
	return out
}

// MarshalBinary encodes the counter as ["pncounter", 2, [[shared, suffix,
// p, n], ...]]: a row per actor with a positive count in P or N, in byte
// order, its id the previous row's first shared bytes (the longest common
// prefix ending on a character boundary) plus suffix. Equal counters give
// identical bytes.
func (c *Counter) MarshalBinary() ([]byte, error) {
	e := wire.NewEncoder(crdt.TagPNCounter, FormatVersion)
	rows := c.rows()
	e.ArrayLen(len(rows))
	for _, r := range rows {
		e.ArrayLen(4)
		e.Uint(uint64(r.shared))
		e.String(r.actor[r.shared:])
		e.Int(r.p)
		e.Int(r.n)
	}
	b, err := e.Bytes()
	return wire.Sized(crdt.TagPNCounter, MaxEncodedSize, b, err)
}

// bodySize is the size of the version 2 body MarshalBinary writes.
func (c *Counter) bodySize() int {
	rows := c.rows()
	size := wire.ArrayHeaderSize(len(rows))
	for _, r := range rows {
		size += wire.ArrayHeaderSize(4) + wire.UintSize(uint64(r.shared)) + wire.StrSize(len(r.actor)-r.shared) +
			wire.UintSize(uint64(r.p)) + wire.UintSize(uint64(r.n))
	}
	return size
}

// UnmarshalBinary replaces c with data's counter, version 1 or 2, canonical
// only: at most MaxEncodedSize bytes, valid strictly increasing actors, per
// half non-negative counts (whose sum may pass math.MaxInt64) and at most
// gcounter.MaxMergedActors actors, no trailing bytes; version 2 at most MaxRows rows
// with the encoder's shared lengths and a positive count each, version 1
// positive counts. Errors wrap crdt.ErrCorruptEncoding, ErrTooLarge,
// ErrTypeMismatch or ErrUnsupportedVersion and leave c unchanged. It
// allocates at most 16 bytes per input byte for a state of at most
// gcounter.MaxActors actors, and 28 for the most a merge makes, where every
// row's actor holds both counts (TestDecodeAllocation: 25).
func (c *Counter) UnmarshalBinary(data []byte) error {
	d, version, err := wire.NewDecoder(data, crdt.TagPNCounter, FormatVersion, MaxEncodedSize)
	if err != nil {
		return fmt.Errorf("pncounter: decode: %w", err)
	}
	var out *Counter
	if version == 1 {
		if out, err = decodeBodyV1(d); err == nil && envelopeSize+out.bodySize() > MaxEncodedSize {
			// Written back in version 2 (SPEC.md 5.3), a row per actor with
			// both counts: a state that cannot be is not accepted.
			err = fmt.Errorf("%w: a version 1 state whose version %d encoding is %d bytes, limit %d", crdt.ErrTooLarge, FormatVersion, envelopeSize+out.bodySize(), MaxEncodedSize)
		}
	} else {
		out, err = decodeRows(d)
	}
	if err != nil {
		return fmt.Errorf("pncounter: decode: %w", err)
	}
	if err := d.Finish(); err != nil {
		return fmt.Errorf("pncounter: decode: %w", err)
	}
	*c = *out
	return nil
}

// decodeRows reads a version 2 body.
func decodeRows(d *wire.Decoder) (*Counter, error) {
	n, err := d.ArrayLen(MaxRows)
	if err != nil {
		return nil, err
	}
	out := &Counter{}
	// Pre-size for the rows the remaining bytes can hold, so that a short
	// hostile input cannot make the decoder allocate for rows it lacks.
	grow := min(n, d.Remaining()/minRowSize, gcounter.MaxMergedActors)
	out.Grow(grow, grow)
	var (
		prev       string
		pLen, nLen int
		buf        []byte
		p, m       = adder{g: &out.p}, adder{g: &out.n}
	)
	for i := range n {
		if err := d.Tuple(4, "row"); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		var actor string
		if actor, buf, err = d.FrontCodedID(i, prev, buf); err != nil {
			return nil, err
		}
		prev = actor
		pc, err := d.NonNegInt()
		if err != nil {
			return nil, fmt.Errorf("row %d: P: %w", i, err)
		}
		nc, err := d.NonNegInt()
		if err != nil {
			return nil, fmt.Errorf("row %d: N: %w", i, err)
		}
		if pc == 0 && nc == 0 {
			return nil, fmt.Errorf("%w: row %d: actor %q has no count (not canonical)", crdt.ErrCorruptEncoding, i, actor)
		}
		p.left, m.left = n-i, n-i
		if err := addRow(&p, actor, pc, &pLen, "P"); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		if err := addRow(&m, actor, nc, &nLen, "N"); err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
	}
	if err := p.flush(); err != nil {
		return nil, fmt.Errorf("%w: P: %v", crdt.ErrCorruptEncoding, err)
	}
	if err := m.flush(); err != nil {
		return nil, fmt.Errorf("%w: N: %v", crdt.ErrCorruptEncoding, err)
	}
	return out, nil
}

// addRow adds a decoded row's count in one half, a, which already holds
// *actors actors.
func addRow(a *adder, actor string, count int64, actors *int, half string) error {
	if count == 0 {
		return nil
	}
	if *actors++; *actors > gcounter.MaxMergedActors {
		return fmt.Errorf("%w: %s has more than %d actors", crdt.ErrTooLarge, half, gcounter.MaxMergedActors)
	}
	if err := a.add(crdt.ActorID(actor), count); err != nil {
		return fmt.Errorf("%w: %s: %v", crdt.ErrCorruptEncoding, half, err)
	}
	return nil
}

// adder adds a decoded half's counts, of distinct actors, to g: by
// Increment while g takes them, then, past the half's int64 sum (SPEC.md
// 5.1) or past MaxActors (which a merge's state may pass, 4.2), by merging
// in batches of at most MaxActors, built by Increment: a merge per row
// made the decoder allocate a copy of the half per row (57 bytes per
// input byte at 65,535 rows). flush merges the last batch.
type adder struct {
	g, batch *gcounter.Counter
	left     int // the rows left, the current one included: a batch's size
}

func (a *adder) add(actor crdt.ActorID, count int64) error {
	if a.batch == nil {
		err := a.g.Increment(actor, count)
		if !errors.Is(err, crdt.ErrOverflow) && !errors.Is(err, crdt.ErrTooLarge) {
			return err
		}
		a.batch = gcounter.New()
		a.batch.Grow(min(a.left, gcounter.MaxActors))
	}
	err := a.batch.Increment(actor, count)
	if errors.Is(err, crdt.ErrOverflow) || errors.Is(err, crdt.ErrTooLarge) {
		if err = a.flush(); err == nil {
			err = a.batch.Increment(actor, count) // one count fits an empty batch
		}
	}
	return err
}

// flush merges the batch into g and empties it.
func (a *adder) flush() error {
	if a.batch == nil || a.batch.Len() == 0 {
		return nil
	}
	err := a.g.Merge(a.batch)
	a.batch = gcounter.New()
	return err
}

// decodeBodyV1 reads a version 1 body, [P, N], each half a gcounter version 1 body.
func decodeBodyV1(d *wire.Decoder) (*Counter, error) {
	if err := d.Tuple(2, "body [P, N]"); err != nil {
		return nil, err
	}
	out := &Counter{}
	for i, g := range []*gcounter.Counter{&out.p, &out.n} {
		// Each half is a gcounter version 1 body of sorted [actor, count]
		// pairs, whose actors are distinct and at most MaxMergedActors.
		a := adder{g: g}
		err := d.ActorCounts(gcounter.MaxMergedActors, g.Grow, func(actor crdt.ActorID, count int64) error {
			if err := a.add(actor, count); err != nil {
				return fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, err)
			}
			return nil
		})
		if err == nil {
			if err = a.flush(); err != nil {
				err = fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, err)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", "PN"[i:i+1], err)
		}
	}
	return out, nil
}
