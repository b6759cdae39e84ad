package tpncounter

import (
	"encoding/binary"
	"iter"
	"slices"
	"sort"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

// dormant holds the retired entries read from an encoding as their
// encodings alone, one block and one offset array however many, outside
// what the garbage collector walks. Records ([actor, seq, total, forgot,
// retired_at?], canonical) are in ascending actor order; an actor has an
// entry or a record, not both. The arrays are never changed in place, so
// a Clone shares them. A record wakes into an entry (GCounter.wakeActor)
// when its actor writes again or a merge replaces it.
type dormant struct {
	enc []byte   // the records, back to back
	off []uint32 // off[i] is where record i starts in enc
}

func (d *dormant) n() int { return len(d.off) }

// span returns the encodings of records [i, j), i < j, as one slice.
func (d *dormant) span(i, j int) []byte {
	end := len(d.enc)
	if j < len(d.off) {
		end = int(d.off[j])
	}
	return d.enc[d.off[i]:end]
}

func (d *dormant) rec(i int) []byte { return d.span(i, i+1) }

// actor returns record i's actor (a fixstr or str8), aliasing the block.
func (d *dormant) actor(i int) []byte {
	b := d.enc[d.off[i]+1:]
	if b[0] == 0xd9 {
		return b[2 : 2+b[1]]
	}
	return b[1 : 1+b[0]&0x1f]
}

// fields returns record i's seq, total, forgot and retirement time (0: none).
func (d *dormant) fields(i int) (seq uint64, total, forgot, retiredAt int64) {
	a := d.actor(i)
	b := d.rec(i)[2+b2i(len(a) >= 32)+len(a):]
	var v [timedRetiredFields - 1]uint64
	for k := range int(d.enc[d.off[i]]&0x0f) - 1 { // non-negative integers in smallest form
		if x, n := wire.SmallUint(b); n > 0 {
			v[k], b = uint64(x), b[n:]
		} else {
			v[k], b = binary.BigEndian.Uint64(b[1:]), b[9:] // uint64
		}
	}
	return v[0], int64(v[1]), int64(v[2]), int64(v[3])
}

// timed reports whether one of records [i, j) has a retirement time.
func (d *dormant) timed(i, j int) bool {
	return slices.ContainsFunc(d.off[i:j], func(o uint32) bool { return d.enc[o] == 0x90|timedRetiredFields })
}

// filter returns d without the records drop selects (d itself if none).
func (d *dormant) filter(drop func(i int) bool) dormant {
	var n dormant
	from := 0
	for i := range d.off {
		if !drop(i) {
			continue
		}
		if n.off == nil { // the first drop
			n = dormant{enc: make([]byte, 0, len(d.enc)), off: make([]uint32, 0, len(d.off))}
		}
		n.appendRecs(d, from, i)
		from = i + 1
	}
	if n.off == nil {
		return *d
	}
	n.appendRecs(d, from, len(d.off))
	return n
}

// search returns the index of the first record whose actor is not below a.
func (d *dormant) search(a string) int {
	return sort.Search(len(d.off), func(i int) bool { return string(d.actor(i)) >= a })
}

// entry returns record i as an uninstalled retired entry.
func (d *dormant) entry(i int) *entry {
	e := newEntry(crdt.ActorID(d.actor(i)), 0, 0)
	e.seq, e.total, e.forgot, e.retiredAt = d.fields(i)
	e.retired = true
	e.enc = append([]byte(nil), d.rec(i)...)
	return e
}

// add appends a record (decoding: its actor follows every other).
func (d *dormant) add(rec []byte) {
	d.off = append(d.off, uint32(len(d.enc)))
	d.enc = append(d.enc, rec...)
}

// appendRecs appends o's records [i, j) to d.
func (d *dormant) appendRecs(o *dormant, i, j int) {
	if i >= j {
		return
	}
	shift := uint32(len(d.enc)) - o.off[i]
	for k := i; k < j; k++ {
		d.off = append(d.off, o.off[k]+shift)
	}
	d.enc = append(d.enc, o.span(i, j)...)
}

// with returns d plus o's records picks (ascending, actors d lacks).
func (d *dormant) with(o *dormant, picks []int) dormant {
	size := len(d.enc)
	for _, k := range picks {
		size += len(o.rec(k))
	}
	n := dormant{enc: make([]byte, 0, size), off: make([]uint32, 0, len(d.off)+len(picks))}
	i := 0
	for _, k := range picks {
		j := d.search(string(o.actor(k)))
		n.appendRecs(d, i, j)
		n.appendRecs(o, k, k+1)
		i = j
	}
	n.appendRecs(d, i, len(d.off))
	return n
}

// count returns the number of entries, dormant records included.
func (g *GCounter) count() int { return len(g.entries) + g.dorm.n() }

func (g *GCounter) setDorm(d dormant) {
	g.dorm = d
	g.order = nil // the encoding's segments change
}

// wakeActor installs and returns actor's dormant record as a retired entry.
func (g *GCounter) wakeActor(actor crdt.ActorID) *entry {
	e, i, ok := g.locate(string(actor))
	if e != nil || !ok {
		return nil
	}
	e = g.dorm.entry(i)
	g.setDorm(g.dorm.filter(func(k int) bool { return k == i }))
	g.attach(e)
	return e
}

// locate finds actor's entry e, or its record i (e nil); ok if either.
func (g *GCounter) locate(actor string) (e *entry, i int, ok bool) {
	if e := g.entries[crdt.ActorID(actor)]; e != nil {
		return e, 0, true
	}
	if g.dorm.n() == 0 {
		return nil, 0, false
	}
	i = g.dorm.search(actor)
	return nil, i, i < g.dorm.n() && string(g.dorm.actor(i)) == actor
}

// peek returns actor's entry, or an uninstalled one from its record, or nil.
func (g *GCounter) peek(actor crdt.ActorID) *entry {
	e, i, ok := g.locate(string(actor))
	if e == nil && ok {
		return g.dorm.entry(i)
	}
	return e
}

// eachActor calls f with every held actor.
func (g *GCounter) eachActor(f func(a string)) {
	for a := range g.entries {
		f(string(a))
	}
	for i := range g.dorm.n() {
		f(string(g.dorm.actor(i)))
	}
}

// all yields every entry, and an uninstalled one per dormant record.
func (g *GCounter) all() iter.Seq[*entry] {
	return func(yield func(*entry) bool) {
		for _, e := range g.entries {
			if !yield(e) {
				return
			}
		}
		for i := range g.dorm.n() {
			if !yield(g.dorm.entry(i)) {
				return
			}
		}
	}
}
