package gcounter

import (
	"hash/maphash"
)

// seed keys the hash of actor ids for the index.
var seed = maphash.MakeSeed()

// index maps an actor to the position of its entry: an open-addressing
// table of slots tag<<32 | position+1 (0: empty), where tag is the high
// half of the actor's hash and its low bits the home slot. It holds no
// pointers (nothing for the garbage collector to scan or to guard with
// write barriers) and grows from the tags, without hashing an id again; a
// lookup hashes the id once, and an insertion after a failed lookup reuses
// that hash. At most half full.
type index struct {
	slots []uint64
	n     int
}

func tagOf(actor string) uint32 { return uint32(maphash.String(seed, actor) >> 32) }

// find returns the position of actor's entry in es and whether it has one,
// with actor's tag.
func (t *index) find(es []entry, actor string) (pos int, ok bool, tag uint32) {
	tag = tagOf(actor)
	if t.n == 0 {
		return 0, false, tag
	}
	mask := uint32(len(t.slots) - 1)
	for i := tag & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return 0, false, tag
		}
		if uint32(s>>32) == tag {
			if p := int(uint32(s)) - 1; string(es[p].actor) == actor {
				return p, true, tag
			}
		}
	}
}

// insert records that the actor of tag tag has its entry at pos; the
// caller knows it is absent.
func (t *index) insert(tag uint32, pos int) {
	if 2*(t.n+1) > len(t.slots) {
		t.resize(2 * (t.n + 1))
	}
	t.place(uint64(tag)<<32 | uint64(pos+1))
	t.n++
}

func (t *index) place(s uint64) {
	mask := uint32(len(t.slots) - 1)
	i := uint32(s>>32) & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// resize makes room for at least n entries at most half full.
func (t *index) resize(n int) {
	size := 8
	for size < 2*n {
		size *= 2
	}
	if size <= len(t.slots) {
		return
	}
	old := t.slots
	t.slots = make([]uint64, size)
	for _, s := range old {
		if s != 0 {
			t.place(s)
		}
	}
}
