package embedded_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
)

// TestSiblingsKeysAsMemory: the embedded store and the memory store
// holding the same keys (of one to MaxKeyLen bytes, some multi-byte
// UTF-8, some sharing a prefix) list the same keys in the same order for
// every prefix (empty, stored, not stored, longer than any key), after
// (empty, stored, not stored, between two keys, longer than every key)
// and limit, paging alike from each.
func TestSiblingsKeysAsMemory(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	db, _ := openTemp(t, embedded.Options{})
	emb, mem := db.Siblings(), memory.NewSiblings()
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "b", "é", "€", "z", "\u00ff", "0"}
	word := func(n int) string { // n bytes
		var b strings.Builder
		for b.Len() < n {
			if r := alphabet[rng.IntN(len(alphabet))]; b.Len()+len(r) <= n {
				b.WriteString(r)
			}
		}
		return b.String()
	}
	var stored []string
	for _, n := range []int{1, 1, 2, 2, 2, 3, 3, 4, 5, 8, 127, 128, 129, 200, crdt.MaxKeyLen - 3, crdt.MaxKeyLen - 1, crdt.MaxKeyLen, crdt.MaxKeyLen} {
		k := word(n)
		stored = append(stored, k, strings.ToValidUTF8(k[:n/2], "")+"a") // and a neighbour
	}
	stored = append(stored, strings.Repeat("z", crdt.MaxKeyLen), "é", "éa", "€", "a€")
	for _, k := range stored {
		if err := crdt.ValidateKey("key", k); err != nil {
			t.Fatal(err)
		}
		for _, st := range []store.Siblings{emb, mem} {
			if err := st.Put(ctx, k, "w", []byte("v"), nil); err != nil {
				t.Fatalf("%q: %v", k, err)
			}
		}
	}
	all, err := mem.Keys(ctx, "", "", 1<<20)
	if err != nil || len(all) < 30 {
		t.Fatalf("%d keys: %v", len(all), err)
	}
	prefixes := []string{"", "a", "é", "\xc3", "b", "zz", "q", strings.Repeat("z", crdt.MaxKeyLen), strings.Repeat("z", crdt.MaxKeyLen+1)}
	afters := []string{"", "\x00", "a", "é", "\xc3", "\xff", "q", "zzzz", strings.Repeat("z", crdt.MaxKeyLen), strings.Repeat("\xff", crdt.MaxKeyLen+1)}
	for _, k := range all {
		prefixes = append(prefixes, k[:min(len(k), 3)])
		afters = append(afters, k, k+"\x00", k[:len(k)-1]+"\x01")
	}
	for _, prefix := range slices.Compact(prefixes) {
		for _, after := range afters {
			for _, limit := range []int{1, 2, 3, 1000} {
				var pages [2][]string
				for i, st := range []ledger.KeyLister{emb, mem} {
					for a := after; ; {
						page, err := st.Keys(ctx, prefix, a, limit)
						if err != nil {
							t.Fatal(err)
						}
						if len(page) > 0 && !keyAfter(page[0], a) { // paging on would never end
							t.Fatalf("store %d, prefix %q limit %d: Keys after %q lists %q again", i, prefix, limit, a, page[0])
						}
						pages[i] = append(pages[i], page...)
						if len(page) < limit {
							break
						}
						a = page[len(page)-1]
					}
				}
				if !slices.Equal(pages[0], pages[1]) {
					t.Fatalf("prefix %q after %q limit %d:\nembedded %q\nmemory   %q", prefix, after, limit, pages[0], pages[1])
				}
			}
		}
	}
}
