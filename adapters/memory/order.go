package memory

import (
	"encoding/binary"
	"slices"
)

// blockMax is the most keys a block of an order holds; a full block splits
// in two, and a block below blockMax/4 joins a neighbour when both fit in
// one.
const blockMax = 128

// order is a partition's live rows, keys and cells, in key order: a list
// of sorted blocks, each holding the first 8 bytes of its keys as
// integers (heads) beside the keys and cells. A lookup searches the
// blocks' first heads, then one block's heads, and reads a key only where
// heads are equal: about log2(n) integer compares in two arrays of a few
// kilobytes, then one key and its cell. A B-tree of 64-byte keys, in nodes
// of separate allocations, with the cells in a map beside it, touched
// several times as many cache lines, which on a partition of tens of
// thousands of rows were most of a point read's cost.
type order struct {
	firsts []uint64 // firsts[i] is blocks[i].heads[0]
	blocks []block
	n      int
	// tails holds the tails of keys longer than inlineKey (a row names
	// its tail by index + 1, 0 for none), free the indexes not in use:
	// so the rows hold no pointer, and the collector does not scan them.
	tails []string
	free  []int32
	// cur is the key AscendFrom and DeleteFunc pass their callbacks (one
	// for the order, so that passing it allocates nothing).
	cur rowKey
}

type block struct {
	heads []uint64
	rows  []row
}

// row is a live row's key and cell, side by side: the key's first
// inlineKey bytes, and its tail's index in order.tails plus one (0: none).
type row struct {
	key  shortKey
	tail int32
	cell cell
}

// key returns r's key.
func (o *order) key(r *row) rowKey {
	k := rowKey{shortKey: r.key}
	if r.tail != 0 {
		k.tail = o.tails[r.tail-1]
	}
	return k
}

// current sets o.cur to r's key and returns it.
func (o *order) current(r *row) *rowKey {
	o.cur = o.key(r)
	return &o.cur
}

// row returns a row of key k and cell c, keeping k's tail, if any.
func (o *order) row(k *rowKey, c cell) row {
	r := row{key: k.shortKey, cell: c}
	if k.tail != "" {
		if n := len(o.free); n > 0 {
			r.tail, o.free = o.free[n-1], o.free[:n-1]
			o.tails[r.tail-1] = k.tail
		} else {
			o.tails = append(o.tails, k.tail)
			r.tail = int32(len(o.tails))
		}
	}
	return r
}

// drop frees r's tail.
func (o *order) drop(r *row) {
	if r.tail != 0 {
		o.tails[r.tail-1] = ""
		o.free = append(o.free, r.tail)
	}
}

// compare compares r's key with k.
func (o *order) compare(r *row, k *rowKey) int { return compareRowKeys(o.key(r), *k) }

// head is the first 8 bytes of k as a big-endian integer, zero-padded: a ≤
// b implies head(a) ≤ head(b), so keys with different heads are ordered by
// them.
func head(k *rowKey) uint64 { return binary.BigEndian.Uint64(k.b[:8]) }

// compareAt compares the key of b's row i with k, whose head is h: -1 if
// it is before k, 0 if it is k, +1 if after.
func (o *order) compareAt(b *block, i int, h uint64, k *rowKey) int {
	switch {
	case b.heads[i] < h:
		return -1
	case b.heads[i] > h:
		return 1
	}
	return o.compare(&b.rows[i], k)
}

// lowerBound returns the first row of b whose key is ≥ k (len(b.rows) if
// none).
func (o *order) lowerBound(b *block, h uint64, k *rowKey) int {
	lo, hi := 0, len(b.heads)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if o.compareAt(b, m, h, k) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// block returns the index of the block k belongs in: the last whose first
// key is ≤ k, or 0 when k is before every block (or there are none).
func (o *order) block(h uint64, k *rowKey) int {
	lo, hi := 0, len(o.blocks)
	for lo < hi { // the first block whose first key is > k
		m := int(uint(lo+hi) >> 1)
		c := 0
		switch {
		case o.firsts[m] < h:
			c = -1
		case o.firsts[m] > h:
			c = 1
		default:
			c = o.compare(&o.blocks[m].rows[0], k)
		}
		if c <= 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return max(lo-1, 0)
}

// Len returns the number of keys.
func (o *order) Len() int { return o.n }

// find returns the block k belongs in, the position of the first key ≥ k
// in it, and whether that key is k.
func (o *order) find(h uint64, k *rowKey) (bi, i int, found bool) {
	bi = o.block(h, k)
	b := &o.blocks[bi]
	i = o.lowerBound(b, h, k)
	return bi, i, i < len(b.rows) && o.compareAt(b, i, h, k) == 0
}

// Get returns k's cell.
func (o *order) Get(k *rowKey) (cell, bool) {
	if len(o.blocks) == 0 {
		return cell{}, false
	}
	bi, i, found := o.find(head(k), k)
	if !found {
		return cell{}, false
	}
	return o.blocks[bi].rows[i].cell, true
}

// Set makes c the cell of k, and returns the cell it replaces, if any.
func (o *order) Set(k *rowKey, c cell) (old cell, replaced bool) {
	h := head(k)
	if len(o.blocks) == 0 {
		b := block{heads: make([]uint64, 1, blockMax+1), rows: make([]row, 1, blockMax+1)}
		b.heads[0], b.rows[0] = h, o.row(k, c)
		o.blocks, o.firsts, o.n = []block{b}, []uint64{h}, 1
		return cell{}, false
	}
	bi, i, found := o.find(h, k)
	b := &o.blocks[bi]
	if found {
		old, b.rows[i].cell = b.rows[i].cell, c
		return old, true
	}
	b.heads = slices.Insert(b.heads, i, h)
	b.rows = slices.Insert(b.rows, i, o.row(k, c))
	o.firsts[bi] = b.heads[0]
	o.n++
	if len(b.rows) <= blockMax {
		return cell{}, false
	}
	half := len(b.rows) / 2
	nb := block{
		heads: append(make([]uint64, 0, blockMax+1), b.heads[half:]...),
		rows:  append(make([]row, 0, blockMax+1), b.rows[half:]...),
	}
	b.heads, b.rows = b.heads[:half], b.rows[:half]
	o.blocks = slices.Insert(o.blocks, bi+1, nb)
	o.firsts = slices.Insert(o.firsts, bi+1, nb.heads[0])
	return cell{}, false
}

// Delete removes k, and returns its cell, if it is there.
func (o *order) Delete(k *rowKey) (cell, bool) {
	if len(o.blocks) == 0 {
		return cell{}, false
	}
	bi, i, found := o.find(head(k), k)
	if !found {
		return cell{}, false
	}
	b := &o.blocks[bi]
	c := b.rows[i].cell
	o.drop(&b.rows[i])
	b.heads = slices.Delete(b.heads, i, i+1)
	b.rows = slices.Delete(b.rows, i, i+1)
	o.n--
	switch {
	case o.n == 0:
		*o = order{} // and the capacity a large partition grew
		return c, true
	case len(b.rows) == 0:
		o.blocks = slices.Delete(o.blocks, bi, bi+1)
		o.firsts = slices.Delete(o.firsts, bi, bi+1)
		return c, true
	case len(b.rows) >= blockMax/4:
		o.firsts[bi] = b.heads[0]
		return c, true
	}
	// Join a small block with the next one (or the one before it) when
	// both fit in one.
	if bi+1 < len(o.blocks) && len(b.rows)+len(o.blocks[bi+1].rows) <= blockMax {
		o.join(bi)
	} else if bi > 0 && len(b.rows)+len(o.blocks[bi-1].rows) <= blockMax {
		o.join(bi - 1)
	} else {
		o.firsts[bi] = b.heads[0]
	}
	return c, true
}

// join moves block i+1's keys to the end of block i and drops block i+1.
func (o *order) join(i int) {
	a, b := &o.blocks[i], &o.blocks[i+1]
	a.heads = append(a.heads, b.heads...)
	a.rows = append(a.rows, b.rows...)
	o.blocks = slices.Delete(o.blocks, i+1, i+2)
	o.firsts = slices.Delete(o.firsts, i+1, i+2)
	o.firsts[i] = a.heads[0]
}

// AscendFrom calls fn with each key ≥ from and its cell, in order, until
// fn returns false. fn must not change o but may change the cell.
func (o *order) AscendFrom(from rowKey, fn func(*rowKey, *cell) bool) {
	if len(o.blocks) == 0 {
		return
	}
	h := head(&from)
	bi := o.block(h, &from)
	i := o.lowerBound(&o.blocks[bi], h, &from)
	for ; bi < len(o.blocks); bi, i = bi+1, 0 {
		b := &o.blocks[bi]
		for ; i < len(b.rows); i++ {
			if !fn(o.current(&b.rows[i]), &b.rows[i].cell) {
				return
			}
		}
	}
}

// DeleteFunc removes, among the rows from from on while in(key) holds,
// those for which drop returns true, in one pass over them and one over
// the blocks (a row at a time, each removal would move the rows and
// blocks after it).
func (o *order) DeleteFunc(from rowKey, in func(*rowKey) bool, drop func(*rowKey, *cell) bool) {
	if len(o.blocks) == 0 {
		return
	}
	h := head(&from)
	bi := o.block(h, &from)
	i := o.lowerBound(&o.blocks[bi], h, &from)
	removed := false
	for end := false; bi < len(o.blocks) && !end; bi, i = bi+1, 0 {
		b := &o.blocks[bi]
		w := i
		for j := i; j < len(b.rows); j++ {
			if !end {
				if k := o.current(&b.rows[j]); !in(k) {
					end = true
				} else if drop(k, &b.rows[j].cell) {
					o.drop(&b.rows[j])
					continue
				}
			}
			b.heads[w], b.rows[w] = b.heads[j], b.rows[j]
			w++
		}
		if w < len(b.rows) {
			o.n -= len(b.rows) - w
			b.heads, b.rows = b.heads[:w], b.rows[:w]
			removed = true
		}
	}
	if !removed {
		return
	}
	if o.n == 0 {
		*o = order{} // and the capacity a large partition grew
		return
	}
	// Drop the emptied blocks and join small neighbours, as Delete does.
	kept := o.blocks[:0]
	for _, b := range o.blocks {
		if len(b.rows) == 0 {
			continue
		}
		if k := len(kept); k > 0 && (len(b.rows) < blockMax/4 || len(kept[k-1].rows) < blockMax/4) && len(kept[k-1].rows)+len(b.rows) <= blockMax {
			kept[k-1].heads = append(kept[k-1].heads, b.heads...)
			kept[k-1].rows = append(kept[k-1].rows, b.rows...)
			continue
		}
		kept = append(kept, b)
	}
	clear(o.blocks[len(kept):])
	o.blocks = kept
	o.firsts = o.firsts[:0]
	for _, b := range o.blocks {
		o.firsts = append(o.firsts, b.heads[0])
	}
}
