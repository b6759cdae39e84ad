package memory

import (
	"bytes"
	"flag"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

var orderSeed = flag.Uint64("order.seed", 0, "seed of TestOrderAgainstSortedSlice (0: from the clock)")

// TestOrderAgainstSortedSlice applies random inserts and deletes to an
// order and to a sorted slice of the same keys, and after each compares
// Len and a scan from a random key (every key from it on, in order).
// The keys are drawn from a small alphabet, so that many share their
// first 8 bytes (ties the heads cannot order), some are prefixes of
// others, some are shorter than 8 bytes and some longer than inlineKey;
// the order goes through splits, joins and empty blocks. Replay a failure
// with -order.seed=N (the seed is printed).
func TestOrderAgainstSortedSlice(t *testing.T) {
	seed := *orderSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay: go test ./adapters/memory -run '^TestOrderAgainstSortedSlice$' -order.seed=%d)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 0))
	key := func() []byte {
		var k []byte
		switch r.IntN(4) {
		case 0: // short
			k = make([]byte, r.IntN(9))
		case 1: // past inlineKey
			k = make([]byte, inlineKey+1+r.IntN(8))
		default:
			k = make([]byte, 8+r.IntN(6))
		}
		for i := range k {
			k[i] = byte(r.IntN(3))
		}
		return k
	}
	for round := range 20 {
		var o order
		var ref [][]byte
		cells := map[string]int64{} // the reference's cells: a ts per key
		ops := 200 + r.IntN(3000)
		insertBias := 40 + r.IntN(50) // percent of ops that insert
		for op := range ops {
			k := key()
			i, found := slices.BinarySearchFunc(ref, k, bytes.Compare)
			if r.IntN(100) < insertBias {
				ts := int64(op + 1)
				rk := makeRowKey(k)
				old, replaced := o.Set(&rk, cell{ts: ts})
				if replaced != found || (found && old.ts != cells[string(k)]) {
					t.Fatalf("round %d op %d: Set %x replaced %v (cell %d), want %v (%d)", round, op, k, replaced, old.ts, found, cells[string(k)])
				}
				cells[string(k)] = ts
				if !found {
					ref = slices.Insert(ref, i, k)
				}
			} else {
				if found && r.IntN(2) == 0 { // often delete a present key
					k = ref[i]
				} else if len(ref) > 0 {
					k = ref[r.IntN(len(ref))]
					i, found = slices.BinarySearchFunc(ref, k, bytes.Compare)
				}
				rk := makeRowKey(k)
				c, deleted := o.Delete(&rk)
				if deleted != found || (found && c.ts != cells[string(k)]) {
					t.Fatalf("round %d op %d: Delete %x: %v (cell %d), want %v (%d)", round, op, k, deleted, c.ts, found, cells[string(k)])
				}
				if found {
					ref = slices.Delete(ref, i, i+1)
					delete(cells, string(k))
				}
			}
			if o.Len() != len(ref) {
				t.Fatalf("round %d op %d: Len %d, want %d", round, op, o.Len(), len(ref))
			}
			from := key()
			if len(ref) > 0 && r.IntN(2) == 0 {
				from = ref[r.IntN(len(ref))] // a key that is there
			}
			rk0 := makeRowKey(from)
			j, _ := slices.BinarySearchFunc(ref, from, bytes.Compare)
			var got [][]byte
			stop := r.IntN(len(ref) + 2)
			o.AscendFrom(makeRowKey(from), func(k *rowKey, c *cell) bool {
				got = append(got, k.appendTo(nil))
				if want := cells[string(got[len(got)-1])]; c.ts != want {
					t.Fatalf("round %d op %d: %x has cell %d, want %d", round, op, got[len(got)-1], c.ts, want)
				}
				return len(got) < stop
			})
			if c, ok := o.Get(&rk0); ok != (cells[string(from)] != 0) || c.ts != cells[string(from)] {
				t.Fatalf("round %d op %d: Get %x: %v %d, want %d", round, op, from, ok, c.ts, cells[string(from)])
			}
			want := ref[j:min(len(ref), j+max(stop, 1))]
			if stop == 0 {
				want = ref[j:min(len(ref), j+1)]
			}
			if !slices.EqualFunc(got, want, bytes.Equal) {
				t.Fatalf("round %d op %d: scan from %x gave %x, want %x", round, op, from, got, want)
			}
		}
		// Every block but a lone one holds keys, and firsts match.
		for bi, b := range o.blocks {
			if len(b.rows) == 0 || len(b.rows) > blockMax || o.firsts[bi] != b.heads[0] {
				t.Fatalf("round %d: block %d of %d holds %d keys, first head %x against %x", round, bi, len(o.blocks), len(b.rows), b.heads[0], o.firsts[bi])
			}
		}
	}
}

// TestOrderSplitsAndJoins fills an order past several blocks in ascending,
// descending and random order, then empties it, checking the order after
// each step, and that an emptied order keeps no block list.
func TestOrderSplitsAndJoins(t *testing.T) {
	const n = 5 * blockMax
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = []byte{byte(i >> 8), byte(i), 'k'}
	}
	perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
	for _, way := range []string{"ascending", "descending", "shuffled"} {
		var o order
		at := func(i int) []byte {
			switch way {
			case "descending":
				return keys[n-1-i]
			case "shuffled":
				return keys[perm[i]]
			}
			return keys[i]
		}
		check := func(step string, want [][]byte) {
			t.Helper()
			var got [][]byte
			o.AscendFrom(rowKey{}, func(k *rowKey, _ *cell) bool { got = append(got, k.appendTo(nil)); return true })
			if !slices.EqualFunc(got, want, bytes.Equal) || o.Len() != len(want) {
				t.Fatalf("%s, %s: %d keys in order %v, want %d", way, step, len(got), slices.EqualFunc(got, want, bytes.Equal), len(want))
			}
		}
		for i := range n {
			k := makeRowKey(at(i))
			o.Set(&k, cell{ts: 1})
		}
		if len(o.blocks) < 5 {
			t.Fatalf("%s: %d keys in %d blocks", way, n, len(o.blocks))
		}
		check("filled", keys)
		left := slices.Clone(keys)
		for i := range n {
			k := at(i)
			rk := makeRowKey(k)
			o.Delete(&rk)
			j, _ := slices.BinarySearchFunc(left, k, bytes.Compare)
			left = slices.Delete(left, j, j+1)
			if i%37 == 0 || len(left) < 3 {
				check("emptying", left)
			}
		}
		if cap(o.blocks) != 0 || cap(o.firsts) != 0 || len(o.tails) != 0 {
			t.Fatalf("%s: emptied, %d blocks left (capacity %d), %d tails", way, len(o.blocks), cap(o.blocks), len(o.tails))
		}
	}
}
