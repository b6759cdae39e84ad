package tpncounter

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// FormatVersion is the encoding version written by MarshalBinary.
//
// Layout (msgpack), inside the crdt envelope [tag, version, body]:
//
//	GCounter body: [ entry... ]                 sorted by actor id, strictly ascending
//	entry:         [ actor, seq, total, forgot, [ [txn, amount]... ], [ [txn, amount]... ] ]
//	                                               history, oldest first   folded record, oldest first
//	Counter body:  [ P GCounter body, N GCounter body ]
//
// forgot is Entry.Forgot in Unix nanoseconds (0 for none). Version 1, still
// read, has no forgot field (entries of five fields, forgot 0); version 2
// added it for Options.TxnTime.
//
// Decoding caps: the input is at most crdt.DefaultMaxEncodedSize bytes; a
// half holds at most Options.MaxActors actors (crdt.ErrTooLarge); an entry
// holds at most MaxEntriesPerActor transactions (crdt.ErrTooLarge); ids obey
// crdt.MaxIDLen. Decoded states are checked like merged ones: seq >= 1,
// total >= 0, amounts > 0, a transaction at most once per actor, the same
// amount wherever it appears, never in both halves, and a value that fits in
// an int64 (otherwise crdt.ErrCorruptEncoding).
const FormatVersion = 2

// MarshalBinary returns the deterministic encoding of g (tag
// crdt.TagTGCounter). Encodings above crdt.DefaultMaxEncodedSize are refused
// with crdt.ErrTooLarge so that every stored state can be decoded again.
func (g *GCounter) MarshalBinary() ([]byte, error) {
	e := wire.NewEncoder(crdt.TagTGCounter, FormatVersion)
	g.encodeBody(e)
	return finish(e, crdt.TagTGCounter)
}

// MarshalBinary returns the deterministic encoding of c (tag
// crdt.TagTPNCounter), with the same size bound as GCounter.MarshalBinary.
func (c *Counter) MarshalBinary() ([]byte, error) {
	e := wire.NewEncoder(crdt.TagTPNCounter, FormatVersion)
	e.ArrayLen(2)
	c.p.encodeBody(e)
	c.n.encodeBody(e)
	return finish(e, crdt.TagTPNCounter)
}

func finish(e *wire.Encoder, tag crdt.TypeTag) ([]byte, error) {
	b, err := e.Bytes()
	if err != nil {
		return nil, err
	}
	if len(b) > crdt.DefaultMaxEncodedSize {
		return nil, fmt.Errorf("%w: %s encoding is %d bytes, limit %d", crdt.ErrTooLarge, tag, len(b), crdt.DefaultMaxEncodedSize)
	}
	return b, nil
}

func (g *GCounter) encodeBody(e *wire.Encoder) {
	actors := g.Actors()
	e.ArrayLen(len(actors))
	for _, a := range actors {
		en := g.entries[a]
		e.ArrayLen(6)
		e.String(string(a))
		e.Uint(en.seq)
		e.Int(en.total)
		e.Int(en.forgot)
		nf, n := en.nf(), uint32(en.size())
		for _, part := range [2][2]uint32{{nf, n}, {0, nf}} { // history, then folded record
			e.ArrayLen(int(part[1] - part[0]))
			for off := part[0]; off < part[1]; off++ {
				p := en.pos(off)
				e.ArrayLen(2)
				e.String(string(en.ids[p]))
				e.Int(en.ring[p].amt)
			}
		}
	}
}

// UnmarshalBinary replaces g with the decoded state, keeping g's Options
// (which set the actor cap). On error g is unchanged and the error wraps
// crdt.ErrCorruptEncoding, crdt.ErrTooLarge, crdt.ErrTypeMismatch or
// crdt.ErrUnsupportedVersion.
func (g *GCounter) UnmarshalBinary(data []byte) error {
	g.init()
	d, version, err := wire.NewDecoder(data, crdt.TagTGCounter, FormatVersion, crdt.DefaultMaxEncodedSize)
	if err != nil {
		return err
	}
	n := &GCounter{o: g.o}
	n.init()
	if err := n.decodeBody(d, version); err != nil {
		return err
	}
	if err := d.Finish(); err != nil {
		return err
	}
	*g = *n
	return nil
}

// UnmarshalBinary replaces c with the decoded state, keeping c's Options. On
// error c is unchanged; errors wrap the same sentinels as
// GCounter.UnmarshalBinary.
func (c *Counter) UnmarshalBinary(data []byte) error {
	c.p.init()
	d, version, err := wire.NewDecoder(data, crdt.TagTPNCounter, FormatVersion, crdt.DefaultMaxEncodedSize)
	if err != nil {
		return err
	}
	k, err := d.ArrayLen(maxFields)
	if err != nil {
		return err
	}
	if k != 2 {
		return fmt.Errorf("%w: counter body has %d halves, want 2", crdt.ErrCorruptEncoding, k)
	}
	n := &Counter{}
	n.p.o, n.n.o = c.p.o, c.p.o
	n.p.init()
	n.n.init()
	if err := n.p.decodeBody(d, version); err != nil {
		return err
	}
	if err := n.n.decodeBody(d, version); err != nil {
		return err
	}
	if err := d.Finish(); err != nil {
		return err
	}
	*c = *n
	c.cross = nil
	c.link()
	c.findCross(c.p.ents, nil)
	return nil
}

// decodeBody reads a GCounter body of the given format version into the
// empty receiver. One id held with different amounts by two actors (or in
// both halves of a Counter) is a conflict Merge can produce, not corruption.
func (g *GCounter) decodeBody(d *wire.Decoder, version uint64) error {
	fields := 6
	if version == 1 {
		fields = 5
	}
	n, err := d.ArrayLen(g.o.MaxActors)
	if err != nil {
		return err
	}
	var prev crdt.ActorID
	for i := 0; i < n; i++ {
		k, err := d.ArrayLen(maxFields)
		if err != nil {
			return err
		}
		if k != fields {
			return fmt.Errorf("%w: entry has %d fields, want %d", crdt.ErrCorruptEncoding, k, fields)
		}
		a, err := d.Actor()
		if err != nil {
			return err
		}
		if i > 0 && a <= prev {
			return fmt.Errorf("%w: actor %q not in strictly ascending order", crdt.ErrCorruptEncoding, a)
		}
		prev = a
		var seq uint64
		var total, forgot int64
		if seq, err = d.Uint(); err != nil {
			return err
		}
		if seq == 0 {
			return fmt.Errorf("%w: actor %q has sequence number 0", crdt.ErrCorruptEncoding, a)
		}
		if total, err = d.NonNegInt(); err != nil {
			return err
		}
		if fields == 6 {
			if forgot, err = d.NonNegInt(); err != nil {
				return err
			}
		}
		seen := map[crdt.TxnID]struct{}{}
		var lists [2][]Txn // history, folded record
		for part := 0; part < 2; part++ {
			m, err := d.ArrayLen(MaxEntriesPerActor - len(seen))
			if err != nil {
				return err
			}
			list := make([]Txn, 0, m)
			for j := 0; j < m; j++ {
				t, err := decodeTxn(d)
				if err != nil {
					return err
				}
				if _, dup := seen[t.ID]; dup {
					return fmt.Errorf("%w: actor %q holds transaction %q twice", crdt.ErrCorruptEncoding, a, t.ID)
				}
				seen[t.ID] = struct{}{}
				list = append(list, t)
			}
			lists[part] = list
		}
		g.swap(a, nil, entryFrom(a, seq, total, forgot, lists[0], lists[1]))
	}
	if v, ok := g.val.Int64(); !ok || v < 0 {
		return fmt.Errorf("%w: value does not fit in int64", crdt.ErrCorruptEncoding)
	}
	return nil
}

func decodeTxn(d *wire.Decoder) (Txn, error) {
	k, err := d.ArrayLen(maxFields)
	if err != nil {
		return Txn{}, err
	}
	if k != 2 {
		return Txn{}, fmt.Errorf("%w: transaction has %d fields, want 2", crdt.ErrCorruptEncoding, k)
	}
	id, err := d.Txn()
	if err != nil {
		return Txn{}, err
	}
	amt, err := d.Int()
	if err != nil {
		return Txn{}, err
	}
	if amt <= 0 {
		return Txn{}, fmt.Errorf("%w: transaction %q has amount %d, want > 0", crdt.ErrCorruptEncoding, id, amt)
	}
	return Txn{ID: id, Amount: amt}, nil
}

var _ crdt.Codec = (*GCounter)(nil)
var _ crdt.Codec = (*Counter)(nil)

// maxFields caps the header of a fixed-shape array before its exact arity is
// checked, so a shape with extra fields is reported as corrupt (not as too
// large) like every other malformed shape.
const maxFields = 1 << 16
