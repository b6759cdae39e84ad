package tpncounter

import (
	"cmp"
	"slices"

	"github.com/counterkit/counterkit/crdt"
)

// item is one transaction in an actor's ring: its amount and tag. Its id
// lives at the same position of entry.ids, which Apply reads only when the
// table finds the tag (a duplicate check) and which the encoder and the
// housekeeping of contested transactions read.
type item struct {
	amt int64
	tag uint32 // tagOf(hashID(id))
	// multi is the multi record of the transaction when two or more actors
	// hold it, and 0 when this actor is its only holder (the table entry
	// then points at this item).
	multi uint32
}

// entry is one actor's part of a GCounter. Its folded record and its
// history sit one after the other in a ring: the counters head, mid and
// tail (modulo 2^32) number the items, the folded record is [head, mid)
// and the history [mid, tail), oldest first, and item c lives at
// ring[c & (len(ring)-1)]. Folding moves mid, forgetting the oldest folded
// items moves head and appending moves tail, so the steady state copies and
// allocates nothing, and an item stays at the position the index points at
// until a rare compaction (a transaction dropped or unfolded, or forgotten
// out of order) or a growth of the ring moves it.
//
// Offsets (off) count from head: the folded record is offsets [0, nf) and
// the history [nf, size), where nf = mid - head.
type entry struct {
	actor crdt.ActorID
	aix   uint32 // index in GCounter.ents while installed
	seq   uint64
	total int64
	// forgot is Entry.Forgot in Unix nanoseconds; 0 for none.
	forgot int64
	ring   []item
	ids    []crdt.TxnID // parallel to ring
	// times, parallel to ring once a timed transaction has been applied
	// here (nil before), caches the items' Options.TxnTime in Unix
	// nanoseconds (0: not cached), so that forgetting one does not parse
	// its id again. Only times from this counter's own Apply are cached.
	times           []int64
	head, mid, tail uint32
}

// newEntry returns an empty entry whose ring holds n items without growing.
func newEntry(actor crdt.ActorID, n int) *entry {
	c := 2
	for c < n {
		c *= 2
	}
	return &entry{actor: actor, ring: make([]item, c), ids: make([]crdt.TxnID, c)}
}

// entryFrom builds an uninstalled entry from its parts (decoding).
func entryFrom(actor crdt.ActorID, seq uint64, total, forgot int64, hist, folded []Txn) *entry {
	e := newEntry(actor, len(hist)+len(folded))
	e.seq, e.total, e.forgot = seq, total, forgot
	for _, list := range [2][]Txn{folded, hist} {
		for _, t := range list {
			e.ring[e.tail] = item{amt: t.Amount, tag: tagOf(hashID(t.ID))}
			e.ids[e.tail] = t.ID
			e.tail++
		}
	}
	e.mid = uint32(len(folded))
	return e
}

func (e *entry) mask() uint32          { return uint32(len(e.ring) - 1) }
func (e *entry) size() int             { return int(e.tail - e.head) }
func (e *entry) nf() uint32            { return e.mid - e.head }
func (e *entry) pos(off uint32) uint32 { return (e.head + off) & e.mask() }

// offOf returns the offset of ring position p.
func (e *entry) offOf(p uint32) uint32 { return (p - e.head) & e.mask() }

// foldedAt reports whether the item at ring position p is folded.
func (e *entry) foldedAt(p uint32) bool { return e.offOf(p) < e.nf() }

// locAt returns the location of ring position p.
func (e *entry) locAt(p uint32) loc { return e.aix<<posBits | p }

// clone copies e. Its positions are unchanged, so a clone is valid in a
// clone of the counter (GCounter.Clone); swap installs clones from another
// counter afresh.
func (e *entry) clone() *entry {
	c := *e
	c.ring, c.ids, c.times = slices.Clone(e.ring), slices.Clone(e.ids), slices.Clone(e.times)
	return &c
}

// txns returns the transactions at offsets [from, to).
func (e *entry) txns(from, to uint32) []Txn {
	out := make([]Txn, 0, to-from)
	for off := from; off < to; off++ {
		p := e.pos(off)
		out = append(out, Txn{ID: e.ids[p], Amount: e.ring[p].amt})
	}
	return out
}

// compareEntries orders two entries of one actor: by seq, then (only when an
// actor has forked, see the package documentation) by content, so that Merge
// picks the same winner in every order.
func compareEntries(a, b *entry) int {
	if c := cmp.Compare(a.seq, b.seq); c != 0 {
		return c
	}
	if c := cmp.Compare(a.total, b.total); c != 0 {
		return c
	}
	if c := cmp.Compare(a.forgot, b.forgot); c != 0 {
		return c
	}
	if c := compareRuns(a, a.nf(), uint32(a.size()), b, b.nf(), uint32(b.size())); c != 0 {
		return c
	}
	return compareRuns(a, 0, a.nf(), b, 0, b.nf())
}

// compareRuns compares a's offsets [af, at) with b's [bf, bt) as sequences
// of (id, amount), like slices.Compare.
func compareRuns(a *entry, af, at uint32, b *entry, bf, bt uint32) int {
	n := min(at-af, bt-bf)
	for i := uint32(0); i < n; i++ {
		ap, bp := a.pos(af+i), b.pos(bf+i)
		if c := cmp.Compare(a.ids[ap], b.ids[bp]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.ring[ap].amt, b.ring[bp].amt); c != 0 {
			return c
		}
	}
	return cmp.Compare(at-af, bt-bf)
}
