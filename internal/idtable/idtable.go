// Package idtable is the hash table the transactional counters (tpncounter,
// bounded) index their transactions with: open addressing with linear
// probing over uint64 keys, each a transaction's tag (the top 32 bits of
// its hash, which also give its home slot) above a 32-bit reference into
// the counter's own entries (0: an empty slot). A key's home is its tag
// scaled to the length, so a table can be sized exactly; removal shifts the
// run back, so there are no tombstones. The load factor is the caller's.
package idtable

import "hash/maphash"

var seed = maphash.MakeSeed()

// Hash returns id's hash for the process.
func Hash(id string) uint64 { return maphash.String(seed, id) }

// Tag returns hash h's tag, its top 32 bits.
func Tag(h uint64) uint32 { return uint32(h >> 32) }

// Key returns the table key of a transaction with tag and reference ref.
func Key(tag, ref uint32) uint64 { return uint64(tag)<<32 | uint64(ref) }

// Table is the slots of a table; the caller counts its keys.
type Table struct{ Slots []uint64 }

// Home returns the home slot of a hash or key k: its tag scaled to the length.
func (t *Table) Home(k uint64) uint64 { return (k >> 32) * uint64(len(t.Slots)) >> 32 }

// Next returns the slot after i, the last one followed by the first.
func (t *Table) Next(i uint64) uint64 {
	if i++; i == uint64(len(t.Slots)) {
		return 0
	}
	return i
}

// Place puts key k in the first empty slot of its run; the table must have one.
func (t *Table) Place(k uint64) {
	i := t.Home(k)
	for t.Slots[i] != 0 {
		i = t.Next(i)
	}
	t.Slots[i] = k
}

// Resize places every key again in a table of n slots.
func (t *Table) Resize(n int) {
	old := t.Slots
	t.Slots = make([]uint64, n)
	for _, k := range old {
		if k != 0 {
			t.Place(k)
		}
	}
}

// SlotOf returns the slot of a key equal to k; a missing one panics, as the
// counter's entries and its table then disagree.
func (t *Table) SlotOf(k uint64) uint64 {
	i := t.Home(k)
	for t.Slots[i] != k {
		if t.Slots[i] == 0 {
			panic("idtable: a transaction's key is missing from the index")
		}
		i = t.Next(i)
	}
	return i
}

// Remove takes out a key equal to k, which must be present, shifting back
// the later keys of its run whose home does not lie between: no gaps.
func (t *Table) Remove(k uint64) {
	n := uint64(len(t.Slots))
	dist := func(a, b uint64) uint64 { // from a forward to b
		if b < a {
			b += n
		}
		return b - a
	}
	i := t.SlotOf(k)
	for j := t.Next(i); t.Slots[j] != 0; j = t.Next(j) {
		if e := t.Slots[j]; dist(t.Home(e), j) >= dist(i, j) {
			t.Slots[i] = e
			i = j
		}
	}
	t.Slots[i] = 0
}
