package tpncounter

import (
	"hash/maphash"

	"github.com/counterkit/counterkit/crdt"
)

// idxSeed seeds the index hash. It is fixed for the process so that a record
// keeps its hash when Clone copies it; nothing encoded depends on it.
var idxSeed = maphash.MakeSeed()

func hashID(x crdt.TxnID) uint64 { return maphash.String(idxSeed, string(x)) }

// index maps each known transaction id to its record. It is a map keyed by
// the id's 64-bit hash, with the rare colliding records chained through
// ref.next/ref.prev; a record stores its id and hash. Compared with a map
// keyed by the id string, finding a slot never reads the string of another
// id, removing a record rehashes nothing (the hash is stored) and the slots
// are smaller: at 100,000s of ids, fewer cache misses per Apply.
//
// The zero value is not usable; see newIndex.
type index struct {
	m map[uint64]*ref
	n int
}

func newIndex(size int) index { return index{m: make(map[uint64]*ref, size)} }

// get returns the record of x, or nil.
func (ix *index) get(x crdt.TxnID) *ref { return ix.getH(x, hashID(x)) }

// getH is get for an id whose hash h is known.
func (ix *index) getH(x crdt.TxnID, h uint64) *ref {
	r, _ := ix.find(x, h)
	return r
}

// find returns the record of x, whose hash is h, or nil; and whether no
// record at all has hash h, in which case insertFree may add x until
// another record is inserted (removing records keeps it true).
func (ix *index) find(x crdt.TxnID, h uint64) (r *ref, free bool) {
	head := ix.m[h]
	for r := head; r != nil; r = r.next {
		if r.id == x {
			return r, false
		}
	}
	return nil, head == nil
}

// insert adds r as the record of x, whose hash is h; x must be absent.
func (ix *index) insert(x crdt.TxnID, h uint64, r *ref) {
	ix.insertAfter(x, h, r, ix.m[h])
}

// insertFree is insert when find reported that no record has hash h: it
// saves the map lookup of insert.
func (ix *index) insertFree(x crdt.TxnID, h uint64, r *ref) {
	ix.insertAfter(x, h, r, nil)
}

// insertAfter inserts r as the head of the chain of hash h, whose current
// head is next.
func (ix *index) insertAfter(x crdt.TxnID, h uint64, r, next *ref) {
	r.id, r.h, r.prev = x, h, nil
	r.next = next
	if r.next != nil {
		r.next.prev = r
	}
	ix.m[h] = r
	ix.n++
}

// remove takes r, which must be in the index, out of it.
func (ix *index) remove(r *ref) {
	switch {
	case r.prev != nil:
		r.prev.next = r.next
		if r.next != nil {
			r.next.prev = r.prev
		}
	case r.next != nil:
		r.next.prev = nil
		ix.m[r.h] = r.next
	default:
		delete(ix.m, r.h)
	}
	r.next, r.prev = nil, nil
	ix.n--
}

// all yields every id and its record, in no particular order.
func (ix *index) all(yield func(crdt.TxnID, *ref) bool) {
	for _, head := range ix.m {
		for r := head; r != nil; r = r.next {
			if !yield(r.id, r) {
				return
			}
		}
	}
}

// idx ranges over every known transaction and its record (for the tests).
func (g *GCounter) idx(yield func(crdt.TxnID, *ref) bool) { g.ix.all(yield) }
