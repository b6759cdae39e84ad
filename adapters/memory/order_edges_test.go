package memory

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/store"
)

var blocksSeed = flag.Uint64("blocks.seed", 0, "seed of the blocks randomized tests (0: from the clock)")

func blocksSeedFor(t *testing.T) uint64 {
	t.Helper()
	seed := *blocksSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: -run '^%s$' -blocks.seed=%d)", seed, t.Name(), seed)
	return seed
}

// blocksCheckOrder checks every structural invariant of o against want
// (sorted, distinct): firsts mirror heads[0], heads mirror keys, blocks hold
// 1..blockMax rows, n is the count, keys ascend within and across blocks,
// the tails in use are the rows' (a freed one holds nothing), and no two neighbouring blocks both under blockMax/4 could have been joined.
func blocksCheckOrder(t *testing.T, o *order, want [][]byte, cells map[string]int64) {
	t.Helper()
	if len(o.firsts) != len(o.blocks) {
		t.Fatalf("%d firsts for %d blocks", len(o.firsts), len(o.blocks))
	}
	total := 0
	var prev []byte
	for bi := range o.blocks {
		b := &o.blocks[bi]
		if len(b.rows) == 0 || len(b.rows) > blockMax || len(b.heads) != len(b.rows) {
			t.Fatalf("block %d of %d: %d rows, %d heads", bi, len(o.blocks), len(b.rows), len(b.heads))
		}
		if o.firsts[bi] != b.heads[0] {
			t.Fatalf("block %d: firsts %x, heads[0] %x", bi, o.firsts[bi], b.heads[0])
		}
		for i := range b.rows {
			if h := func() uint64 { k := o.key(&b.rows[i]); return head(&k) }(); h != b.heads[i] {
				t.Fatalf("block %d row %d: head %x, heads %x", bi, i, h, b.heads[i])
			}
			k := keyBytes(o, &b.rows[i])
			if prev != nil && bytes.Compare(prev, k) >= 0 {
				t.Fatalf("block %d row %d: %x after %x", bi, i, k, prev)
			}
			if total < len(want) && !bytes.Equal(k, want[total]) {
				t.Fatalf("key %d (block %d row %d) is %x, want %x", total, bi, i, k, want[total])
			}
			if cells != nil && b.rows[i].cell.ts != cells[string(k)] {
				t.Fatalf("key %x: cell %d, want %d", k, b.rows[i].cell.ts, cells[string(k)])
			}
			prev = k
			total++
		}
		if bi > 0 && len(b.rows) < blockMax/4 && len(o.blocks[bi-1].rows) < blockMax/4 {
			t.Errorf("blocks %d and %d hold %d and %d rows: two small neighbours", bi-1, bi, len(o.blocks[bi-1].rows), len(b.rows))
		}
	}
	for i, b := range o.blocks[len(o.blocks):cap(o.blocks)] {
		if b.rows != nil || b.heads != nil {
			t.Fatalf("blocks slot %d past len still references a block", len(o.blocks)+i)
		}
	}
	if (want != nil && total != len(want)) || o.n != total {
		t.Fatalf("%d keys in blocks, n %d, want %d", total, o.n, len(want))
	}
	used := 0
	for bi := range o.blocks {
		for _, r := range o.blocks[bi].rows {
			if r.tail != 0 {
				used++
				if int(r.tail) > len(o.tails) || o.tails[r.tail-1] == "" {
					t.Fatalf("block %d: a row names tail %d of %d, empty", bi, r.tail, len(o.tails))
				}
			}
		}
	}
	for _, f := range o.free {
		if o.tails[f-1] != "" {
			t.Fatalf("free tail %d still holds %q", f, o.tails[f-1])
		}
	}
	if used != len(o.tails)-len(o.free) {
		t.Fatalf("%d rows have tails; %d tails, %d free", used, len(o.tails), len(o.free))
	}
}

// blocksEdgeKeys are keys that the heads cannot order: ties in the first 8
// bytes, short keys ending in zero bytes, the empty key, keys of inlineKey
// − 1, inlineKey and inlineKey + 1 bytes, keys past inlineKey sharing their
// first inlineKey bytes.
func blocksEdgeKeys() [][]byte {
	ks := []string{
		"", "\x00", "\x00\x00", "\x00\x00\x00\x00\x00\x00\x00", "\x00\x00\x00\x00\x00\x00\x00\x00", "\x00\x00\x00\x00\x00\x00\x00\x00\x00",
		"a", "a\x00", "a\x00\x00", "a\x00\x00\x00\x00\x00\x00\x00", "a\x00\x00\x00\x00\x00\x00\x00\x00", "a\x01", "a\xff",
		"abcdefgh", "abcdefgh\x00", "abcdefgha", "abcdefghb", "abcdefg", "abcdefg\x00", "abcdefg\xff", "abcdefg\xff\x00",
		"\xff", "\xff\xff\xff\xff\xff\xff\xff\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\x00",
	}
	base := strings.Repeat("k", inlineKey)
	for _, n := range []int{inlineKey - 1, inlineKey, inlineKey + 1} {
		ks = append(ks, strings.Repeat("k", n), strings.Repeat("k", n-1)+"\x00", strings.Repeat("\x00", n))
	}
	for _, tail := range []string{"\x00", "\x00\x00", "\x01", "a", "a\x00", "b", "\xff", strings.Repeat("z", 900), strings.Repeat("z", 900) + "\x00", strings.Repeat("z", store.MaxRowKey-inlineKey-3)} {
		ks = append(ks, base+tail, strings.Repeat("\x00", inlineKey)+tail)
	}
	var out [][]byte
	for _, k := range ks {
		out = append(out, []byte(k))
	}
	slices.SortFunc(out, bytes.Compare)
	return slices.CompactFunc(out, bytes.Equal)
}

// TestBlocksEdgeKeysEveryBlockLayout inserts the edge keys mixed with
// filler keys that share their heads, so that edge keys land at the first,
// last and middle slots of blocks and on block boundaries, and checks
// Get, AscendFrom from every edge key and from keys between them, and
// the invariants, then deletes them one by one.
func TestBlocksEdgeKeysEveryBlockLayout(t *testing.T) {
	testsize.SkipSequential(t)
	edge := blocksEdgeKeys()
	for _, fill := range []int{0, 1, 63, 64, 100, 127, 128, 129, 300, 1000} {
		for _, way := range []string{"ascending", "descending", "shuffled"} {
			var keys [][]byte
			keys = append(keys, edge...)
			for i := range fill {
				// fillers tie with edge keys in their first 8 bytes
				pfx := edge[i%len(edge)]
				keys = append(keys, append(slices.Clone(pfx), fmt.Sprintf("\x00f%05d", i)...))
			}
			slices.SortFunc(keys, bytes.Compare)
			keys = slices.CompactFunc(keys, bytes.Equal)
			ins := slices.Clone(keys)
			switch way {
			case "descending":
				slices.Reverse(ins)
			case "shuffled":
				r := rand.New(rand.NewPCG(uint64(fill), 7))
				r.Shuffle(len(ins), func(i, j int) { ins[i], ins[j] = ins[j], ins[i] })
			}
			var o order
			cells := map[string]int64{}
			for i, k := range ins {
				rk := makeRowKey(k)
				if _, rep := o.Set(&rk, cell{ts: int64(i + 1)}); rep {
					t.Fatalf("fill %d %s: %x replaced", fill, way, k)
				}
				cells[string(k)] = int64(i + 1)
			}
			blocksCheckOrder(t, &o, keys, cells)
			probe := func(from []byte) {
				t.Helper()
				j, found := slices.BinarySearchFunc(keys, from, bytes.Compare)
				rk := makeRowKey(from)
				c, ok := o.Get(&rk)
				if ok != found || (found && c.ts != cells[string(from)]) {
					t.Fatalf("fill %d %s: Get %x = %v %d, want %v", fill, way, from, ok, c.ts, found)
				}
				var got [][]byte
				o.AscendFrom(makeRowKey(from), func(k *rowKey, _ *cell) bool {
					got = append(got, k.appendTo(nil))
					return len(got) < 3
				})
				want := keys[j:min(len(keys), j+3)]
				if !slices.EqualFunc(got, want, bytes.Equal) {
					t.Fatalf("fill %d %s: AscendFrom %x = %x, want %x", fill, way, from, got, want)
				}
			}
			for _, k := range keys {
				probe(k)
				probe(append(slices.Clone(k), 0))
				probe(append(slices.Clone(k), 0, 0))
				if len(k) > 0 {
					probe(k[:len(k)-1])
					if k[len(k)-1] > 0 {
						p := slices.Clone(k)
						p[len(p)-1]--
						probe(p)
						probe(append(p, 0xff))
					}
				}
			}
			// Overwrites find the row, wherever it sits.
			for i, k := range keys {
				rk := makeRowKey(k)
				old, rep := o.Set(&rk, cell{ts: int64(100000 + i)})
				if !rep || old.ts != cells[string(k)] {
					t.Fatalf("fill %d %s: overwrite %x: %v %d, want %d", fill, way, k, rep, old.ts, cells[string(k)])
				}
				cells[string(k)] = int64(100000 + i)
			}
			blocksCheckOrder(t, &o, keys, cells)
			// Delete the edge keys first (in ins order), then the rest.
			left := slices.Clone(keys)
			del := func(k []byte) {
				t.Helper()
				rk := makeRowKey(k)
				c, ok := o.Delete(&rk)
				if !ok || c.ts != cells[string(k)] {
					t.Fatalf("fill %d %s: Delete %x: %v %d", fill, way, k, ok, c.ts)
				}
				if _, ok := o.Delete(&rk); ok {
					t.Fatalf("fill %d %s: second Delete %x found it", fill, way, k)
				}
				j, _ := slices.BinarySearchFunc(left, k, bytes.Compare)
				left = slices.Delete(left, j, j+1)
				blocksCheckOrder(t, &o, left, cells)
			}
			for _, k := range ins {
				if slices.ContainsFunc(edge, func(e []byte) bool { return bytes.Equal(e, k) }) {
					del(k)
				}
			}
			for _, k := range slices.Clone(left) {
				del(k)
			}
			if len(o.blocks) != 0 {
				t.Fatalf("emptied: %d blocks", len(o.blocks))
			}
		}
	}
}

// TestBlocksDeleteFirstOfEveryBlock deletes the first key of each block
// repeatedly (firsts must follow), then empties the first, a middle and
// the last block wholesale, with keys whose heads all tie.
func TestBlocksDeleteFirstOfEveryBlock(t *testing.T) {
	testsize.SkipSequential(t)
	for _, pfx := range []string{"", "abcdefgh", strings.Repeat("p", inlineKey), strings.Repeat("p", inlineKey-3)} {
		var o order
		var keys [][]byte
		for i := range 40 * blockMax {
			keys = append(keys, []byte(fmt.Sprintf("%s%06d", pfx, i)))
		}
		for _, k := range keys {
			rk := makeRowKey(k)
			o.Set(&rk, cell{ts: 1})
		}
		blocksCheckOrder(t, &o, keys, nil)
		left := slices.Clone(keys)
		remove := func(k []byte) {
			t.Helper()
			rk := makeRowKey(k)
			if _, ok := o.Delete(&rk); !ok {
				t.Fatalf("%q: Delete %q not found", pfx, k)
			}
			j, _ := slices.BinarySearchFunc(left, k, bytes.Compare)
			left = slices.Delete(left, j, j+1)
		}
		for round := range 20 {
			var firsts [][]byte
			for bi := range o.blocks {
				firsts = append(firsts, keyBytes(&o, &o.blocks[bi].rows[0]))
			}
			for _, k := range firsts {
				remove(k)
				blocksCheckOrder(t, &o, left, nil)
			}
			_ = round
		}
		// empty the first, a middle and the last block, key by key from the back
		for _, which := range []string{"first", "middle", "last"} {
			bi := map[string]int{"first": 0, "middle": len(o.blocks) / 2, "last": len(o.blocks) - 1}[which]
			var ks [][]byte
			for i := range o.blocks[bi].rows {
				ks = append(ks, keyBytes(&o, &o.blocks[bi].rows[i]))
			}
			nb := len(o.blocks)
			for i := len(ks) - 1; i >= 0; i-- {
				remove(ks[i])
				blocksCheckOrder(t, &o, left, nil)
			}
			if len(o.blocks) >= nb && len(ks) > 0 {
				t.Logf("%q: emptying %s block of %d rows left %d blocks from %d", pfx, which, len(ks), len(o.blocks), nb)
			}
		}
	}
}

// TestBlocksFlipFlop inserts and deletes around block boundaries so that
// splits and joins alternate, and checks the invariants each step and that
// the number of blocks stays bounded by the rows.
func TestBlocksFlipFlop(t *testing.T) {
	testsize.SkipSequential(t)
	seed := blocksSeedFor(t)
	r := rand.New(rand.NewPCG(seed, 1))
	var o order
	var ref [][]byte
	cells := map[string]int64{}
	key := func(i int) []byte { return []byte(fmt.Sprintf("%08d", i)) }
	// 128 rows: one full block; then alternate around the split point
	for i := range blockMax {
		k := key(i * 10)
		rk := makeRowKey(k)
		o.Set(&rk, cell{ts: 1})
		ref = append(ref, k)
		cells[string(k)] = 1
	}
	set := func(k []byte, ts int64) {
		t.Helper()
		rk := makeRowKey(k)
		_, rep := o.Set(&rk, cell{ts: ts})
		j, found := slices.BinarySearchFunc(ref, k, bytes.Compare)
		if rep != found {
			t.Fatalf("Set %s replaced %v, want %v", k, rep, found)
		}
		if !found {
			ref = slices.Insert(ref, j, k)
		}
		cells[string(k)] = ts
	}
	del := func(k []byte) {
		t.Helper()
		rk := makeRowKey(k)
		_, ok := o.Delete(&rk)
		j, found := slices.BinarySearchFunc(ref, k, bytes.Compare)
		if ok != found {
			t.Fatalf("Delete %s: %v, want %v", k, ok, found)
		}
		if found {
			ref = slices.Delete(ref, j, j+1)
			delete(cells, string(k))
		}
	}
	for step := range 3000 {
		ts := int64(step + 2)
		switch step % 4 {
		case 0, 2:
			set(key(r.IntN(blockMax*10)), ts) // around the first split
		case 1:
			if len(ref) > 0 {
				del(ref[r.IntN(len(ref))])
			}
		case 3:
			// delete the first key of a random block
			if len(o.blocks) > 0 {
				bi := r.IntN(len(o.blocks))
				del(keyBytes(&o, &o.blocks[bi].rows[0]))
			}
		}
		blocksCheckOrder(t, &o, ref, cells)
	}
	// Now ping-pong exactly at a split / join threshold.
	for len(ref) > 0 {
		del(ref[0])
	}
	for i := range blockMax {
		set(key(i), 1)
	}
	for i := range 500 {
		set(key(blockMax+i), 2) // splits 129 → 64+65
		blocksCheckOrder(t, &o, ref, cells)
		del(key(blockMax + i)) // 128 rows in two blocks
		blocksCheckOrder(t, &o, ref, cells)
	}
	if len(o.blocks) > 2 {
		t.Errorf("128 rows in %d blocks after ping-pong", len(o.blocks))
	}
}

// TestBlocksStayBounded drives an order with adversarial patterns
// (delete all but one row of each block, then insert between) and checks
// that blocks never outnumber rows/16+2: tiny blocks do not pile up.
func TestBlocksStayBounded(t *testing.T) {
	testsize.SkipSequential(t)
	seed := blocksSeedFor(t)
	r := rand.New(rand.NewPCG(seed, 2))
	var o order
	live := map[int]bool{}
	key := func(i int) []byte { return []byte(fmt.Sprintf("%010d", i)) }
	set := func(i int) {
		rk := makeRowKey(key(i))
		o.Set(&rk, cell{ts: 1})
		live[i] = true
	}
	del := func(i int) {
		rk := makeRowKey(key(i))
		o.Delete(&rk)
		delete(live, i)
	}
	const space = 2_000_000
	worst := 0.0
	for round := range 30 {
		// fill randomly
		for range 5000 {
			set(r.IntN(space))
		}
		// in each block, delete all rows but the first (or last, or a middle)
		var doomed []int
		for bi := range o.blocks {
			b := &o.blocks[bi]
			keep := []int{0, len(b.rows) - 1, len(b.rows) / 2}[r.IntN(3)]
			for i := range b.rows {
				if i != keep && r.IntN(10) != 0 {
					var n int
					fmt.Sscanf(string(keyBytes(&o, &b.rows[i])), "%d", &n)
					doomed = append(doomed, n)
				}
			}
		}
		for _, n := range doomed {
			del(n)
		}
		nb := len(o.blocks)
		ratio := float64(nb) / float64(o.Len()/16+2)
		worst = max(worst, ratio)
		if nb > o.Len()/16+2 {
			t.Errorf("round %d: %d rows in %d blocks", round, o.Len(), nb)
		}
		if o.Len() != len(live) {
			t.Fatalf("round %d: Len %d, want %d", round, o.Len(), len(live))
		}
	}
	var sizes []int
	for bi := range o.blocks {
		sizes = append(sizes, len(o.blocks[bi].rows))
	}
	t.Logf("%d rows in %d blocks (worst blocks/(rows/16+2) %.2f); block sizes head: %v", o.Len(), len(o.blocks), worst, sizes[:min(20, len(sizes))])
}

// keyBytes returns the bytes of r's key.
func keyBytes(o *order, r *row) []byte {
	k := o.key(r)
	return k.appendTo(nil)
}
