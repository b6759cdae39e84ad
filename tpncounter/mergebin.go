package tpncounter

import (
	"bytes"
	"errors"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// MergeBinary merges the state encoded in data into c. The result, and the
// errors, are those of decoding data into a Counter with c's Options and
// merging it into c (on error c is unchanged), but an entry whose encoding
// is byte for byte the encoding of c's entry for that actor is skipped
// without being decoded: merging a state that differs from c in a few
// entries costs those entries, not the whole state. A reader that keeps
// one Counter and merges every state it fetches into it (as the ledger
// does) thus decodes only what other writers changed since its last read.
//
// What is not decoded is still read: data must be a well-formed encoding
// whose actors are in order (the checks of UnmarshalBinary that involve
// only skipped entries, such as the value of data on its own, are those of
// c's entries, which c already passed; among them, that data's base holds
// no retired entry that c holds too: Merge drops such an entry).
func (c *Counter) MergeBinary(data []byte) error {
	c.link()
	var changed [2][][]byte // the entries c does not hold as they are
	var actors [2][]crdt.ActorID
	var bases [2][]byte
	halves := [2]*GCounter{&c.p, &c.n}
	// An entry whose bytes begin with the encoding of c's entry for its
	// actor is that encoding (an encoding is one complete value): it is
	// passed over unread.
	known := func(h int, actor, rest []byte) int {
		g := halves[h]
		if e := g.entries[crdt.ActorID(actor)]; e != nil { // no copy of actor: the common case
			if bytes.HasPrefix(rest, e.encoded()) {
				return len(e.enc)
			}
		} else if _, i, ok := g.locate(string(actor)); ok && bytes.HasPrefix(rest, g.dorm.rec(i)) {
			return len(g.dorm.rec(i))
		}
		return 0
	}
	r, err := openBodies(data, crdt.TagTPNCounter, 2)
	if err == nil && r.version < 2 {
		err = errOldFormat
	}
	var e rawEntry
	for h := 0; h < 2 && err == nil; h++ {
		if _, err = r.body(MaxActorsLimit); err != nil {
			break
		}
		for r.more() && err == nil {
			if err = r.next(&e); err != nil {
				break
			}
			if e.shape == baseShape {
				// A base differing from c's takes part in the merge (it
				// may win, and drop entries, see Fold).
				if enc := data[e.start:r.d.Offset()]; !bytes.Equal(enc, halves[h].base.encoded()) {
					bases[h] = enc
				}
				continue
			}
			if n := known(h, e.actor, data[e.start:]); n > 0 {
				r.pass(&e, n)
				continue
			}
			if _, err = r.rest(&e); err == nil {
				changed[h] = append(changed[h], data[e.start:r.d.Offset()])
				actors[h] = append(actors[h], crdt.ActorID(e.actor))
			}
		}
	}
	if err == nil {
		err = r.d.Finish()
	}
	if err != nil {
		// An older format, or an input the decoder will refuse: decode it
		// whole, which reports the error.
		o, err := New(c.p.o)
		if err != nil {
			return err
		}
		if err := o.UnmarshalBinary(data); err != nil {
			return err
		}
		return c.Merge(o)
	}
	version := r.version
	if len(changed[0])+len(changed[1]) == 0 && bases[0] == nil && bases[1] == nil {
		return nil
	}
	enc := wire.NewEncoder(crdt.TagTPNCounter, version) // the segments' own form
	enc.ArrayLen(2)
	for h, segs := range changed {
		if bases[h] != nil {
			enc.ArrayLen(len(segs) + 1)
			enc.Raw(bases[h])
		} else {
			enc.ArrayLen(len(segs))
		}
		for _, seg := range segs {
			enc.Raw(seg)
		}
	}
	part, err := enc.Bytes()
	if err != nil {
		return err
	}
	o, err := New(c.p.o)
	if err != nil {
		return err
	}
	if err := o.UnmarshalBinary(part); err != nil {
		return err
	}
	// The decoded entries are encoded as they were read: keep that, so that
	// the next MarshalBinary need not encode them again. The encodings are
	// copied into one block in order, so that MarshalBinary copies runs of
	// them at once (appendBody); nothing ever appends to an entry's enc.
	total := 0
	for _, segs := range changed {
		for _, seg := range segs {
			total += len(seg)
		}
	}
	block := make([]byte, 0, total)
	for h, g := range [2]*GCounter{&o.p, &o.n} {
		for i, seg := range changed[h] {
			start := len(block)
			block = append(block, seg...)
			if en := g.entries[actors[h][i]]; en != nil {
				en.enc, en.encBin = block[start:], version >= 3 && en.hasUUID()
				en.enc = en.enc[:len(seg)]
			}
		}
	}
	return c.Merge(o)
}

// errOldFormat sends a version 1 input, whose entries MergeBinary does not
// compare with c's (which are written in version 2 and later), to the
// decoder.
var errOldFormat = errors.New("tpncounter: version 1 encoding")
