package tpncounter

import (
	"hash/maphash"
	"slices"

	"github.com/counterkit/counterkit/crdt"
)

// idxSeed seeds the index hash. It is fixed for the process so that a record
// keeps its hash when Clone copies it; nothing encoded depends on it.
var idxSeed = maphash.MakeSeed()

func hashID(x crdt.TxnID) uint64 { return maphash.String(idxSeed, string(x)) }

// slot numbers a record in index.recs. Slot 0 is never used, so that the
// zero slot means "none". A counter holds at most MaxActorsLimit ×
// MaxEntriesPerActor (2^28) records, so 32 bits suffice.
type slot = uint32

// index maps each known transaction id to its record. Records live in one
// slice, recs, and are named by their slot number; freed slots are chained
// into a free list (through ref.next) and reused, most recently freed
// first. The table tab finds them: an open-addressing hash table with
// linear probing over the ids' 64-bit hashes, each entry the slot number in
// its low 32 bits and the top 32 bits of the hash as a tag (0 is an empty
// entry; slot 0 is never used). An id's home entry is given by the top bits
// of its hash, so the tag alone gives the home of an entry. Ids whose hashes collide simply occupy
// several entries of one probe run; find tells them apart by comparing the
// record's full hash and id. Removal shifts the rest of the run back, so no
// tombstones accumulate. The table is at most half full.
//
// Compared with a Go map from id string to a separately allocated record:
// the table and the records hold no pointers the collector must follow
// except the id strings, Apply allocates nothing in the steady state, a
// lookup of an absent id usually reads one cache line of the table and
// nothing else, removing a record rehashes nothing (the hash is stored), and
// a record is one 64-byte cache line. The record a new transaction gets is
// usually the one its actor has just forgotten, which is already in cache.
//
// A record has one holder inline (ref.one); a record held by two or more
// actors keeps its holders in more instead and ref.one is empty.
//
// A *ref obtained from at is valid only until the next insert, which may
// move recs.
//
// The zero value is not usable; see newIndex.
type index struct {
	tab   []uint64
	shift uint8 // 64 - log2(len(tab)): an entry's home is h >> shift
	recs  []ref
	more  map[slot][]holding
	free  slot // head of the free list, 0 when empty
	n     int
}

// minTabBits is log2 of the smallest table.
const minTabBits = 3

func newIndex(size int) index {
	b := minTabBits
	for 1<<b < 2*size {
		b++
	}
	return index{tab: make([]uint64, 1<<b), shift: uint8(64 - b), recs: make([]ref, 1, size+1), more: map[slot][]holding{}}
}

// tagOf returns the tag of hash h: its top half, in place. The table never
// has more than 2^29 entries (twice the most records), so the tag holds the
// bits that choose an entry's home.
func tagOf(h uint64) uint64 { return h &^ (1<<32 - 1) }

// clone returns a deep copy of ix; slots are unchanged.
func (ix *index) clone() index {
	c := index{tab: slices.Clone(ix.tab), shift: ix.shift, recs: slices.Clone(ix.recs), more: make(map[slot][]holding, len(ix.more)), free: ix.free, n: ix.n}
	for s, hs := range ix.more {
		c.more[s] = slices.Clone(hs)
	}
	return c
}

// at returns the record in slot s.
func (ix *index) at(s slot) *ref { return &ix.recs[s] }

// holders returns the holders of the record in slot s. The slice aliases the
// index: writes to its elements change the record.
func (ix *index) holders(s slot) []holding {
	r := &ix.recs[s]
	if r.one[0].actor != "" {
		return r.one[:]
	}
	return ix.more[s]
}

// single reports whether the record in slot s has exactly one holder.
func (ix *index) single(s slot) bool { return ix.recs[s].one[0].actor != "" }

// addHolder adds h to the holders of the record in slot s.
func (ix *index) addHolder(s slot, h holding) {
	r := &ix.recs[s]
	if r.one[0].actor != "" {
		ix.more[s] = []holding{r.one[0], h}
		r.one[0] = holding{}
		return
	}
	if hs := ix.more[s]; len(hs) > 0 {
		ix.more[s] = append(hs, h)
		return
	}
	r.one[0] = h
}

// dropHolder removes actor from the holders of the record in slot s and
// returns how many remain.
func (ix *index) dropHolder(s slot, actor crdt.ActorID) int {
	r := &ix.recs[s]
	if r.one[0].actor != "" {
		if r.one[0].actor == actor {
			r.one[0] = holding{}
			return 0
		}
		return 1
	}
	hs := ix.more[s]
	if i := slices.IndexFunc(hs, func(h holding) bool { return h.actor == actor }); i >= 0 {
		hs = slices.Delete(hs, i, i+1)
	}
	switch len(hs) {
	case 0:
		delete(ix.more, s)
	case 1:
		r.one[0] = hs[0]
		delete(ix.more, s)
		return 1
	default:
		ix.more[s] = hs
	}
	return len(hs)
}

// get returns the slot of x, or 0.
func (ix *index) get(x crdt.TxnID) slot { return ix.find(x, hashID(x)) }

// find returns the slot of x, whose hash is h, or 0.
func (ix *index) find(x crdt.TxnID, h uint64) slot {
	mask := uint64(len(ix.tab) - 1)
	tag := tagOf(h)
	for i := h >> ix.shift; ; i = (i + 1) & mask {
		e := ix.tab[i]
		if e == 0 {
			return 0
		}
		if e&^(1<<32-1) == tag {
			if s := slot(e); ix.recs[s].h == h && ix.recs[s].id == x {
				return s
			}
		}
	}
}

// insert adds a record for x, whose hash is h, with amount amt and one
// holder h0, and returns its slot; x must be absent. It may move recs.
func (ix *index) insert(x crdt.TxnID, h uint64, amt int64, h0 holding) slot {
	if 2*(ix.n+1) > len(ix.tab) {
		ix.grow()
	}
	s := ix.free
	if s != 0 {
		ix.free = ix.recs[s].next
	} else {
		s = slot(len(ix.recs))
		ix.recs = append(ix.recs, ref{})
	}
	ix.recs[s] = ref{amt: amt, id: x, h: h, one: [1]holding{h0}}
	ix.place(h, s)
	ix.n++
	return s
}

// place puts slot s, whose hash is h, in the first empty entry of its run.
func (ix *index) place(h uint64, s slot) {
	mask := uint64(len(ix.tab) - 1)
	i := h >> ix.shift
	for ix.tab[i] != 0 {
		i = (i + 1) & mask
	}
	ix.tab[i] = tagOf(h) | uint64(s)
}

// grow doubles the table.
func (ix *index) grow() {
	ix.tab, ix.shift = make([]uint64, 2*len(ix.tab)), ix.shift-1
	for s := 1; s < len(ix.recs); s++ {
		if r := &ix.recs[s]; r.id != "" {
			ix.place(r.h, slot(s))
		}
	}
}

// key returns the table entry of the record in slot s.
func (ix *index) key(s slot) uint64 { return tagOf(ix.recs[s].h) | uint64(s) }

// remove takes the record in slot s, which must be in the index, out of it
// and frees the slot.
func (ix *index) remove(s slot) { ix.removeKey(ix.key(s)) }

// removeKey is remove for the record whose table entry is k: it finds the
// entry without reading the record.
func (ix *index) removeKey(k uint64) {
	s := slot(k)
	r := &ix.recs[s]
	mask := uint64(len(ix.tab) - 1)
	i := k >> ix.shift
	for ix.tab[i] != k {
		i = (i + 1) & mask
	}
	// Shift back every later entry of the run that may live at i (its home
	// is not cyclically in (i, j]), so that no lookup meets a gap.
	for j := (i + 1) & mask; ; j = (j + 1) & mask {
		e := ix.tab[j]
		if e == 0 {
			break
		}
		home := e >> ix.shift
		if (j-home)&mask >= (j-i)&mask {
			ix.tab[i] = e
			i = j
		}
	}
	ix.tab[i] = 0
	if len(ix.more) > 0 && r.one[0].actor == "" {
		delete(ix.more, s)
	}
	*r = ref{next: ix.free} // drop the id for the collector
	ix.free = s
	ix.n--
}

// all yields every id and its slot, in no particular order.
func (ix *index) all(yield func(crdt.TxnID, slot) bool) {
	for _, e := range ix.tab {
		if e != 0 {
			if s := slot(e); !yield(ix.recs[s].id, s) {
				return
			}
		}
	}
}

// idx ranges over every known transaction and its record (for the tests).
func (g *GCounter) idx(yield func(crdt.TxnID, *ref) bool) {
	for x, s := range g.ix.all {
		if !yield(x, g.ix.at(s)) {
			return
		}
	}
}
