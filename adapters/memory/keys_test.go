package memory_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
)

// TestSiblingsKeysPages: every key of up to three of "a", "b" and "é" is
// stored, or not, by a fixed pattern; from every after (stored or not),
// with every prefix of up to two bytes and pages of 1 to 4, paging lists
// exactly the stored keys with the prefix that come after it, shorter
// first, each once; a key deleted between pages is not listed after.
func TestSiblingsKeysPages(t *testing.T) {
	ctx := context.Background()
	var words []string
	var gen func(string)
	gen = func(s string) {
		if s != "" {
			words = append(words, s)
		}
		if len(s) < 3 {
			for _, c := range []string{"a", "b", "é"} {
				gen(s + c)
			}
		}
	}
	gen("")
	st := memory.NewSiblings()
	var stored []string // in the model's order: shorter first, then bytewise
	for i, w := range words {
		if i%3 != 1 {
			if err := st.Put(ctx, w, "w", []byte("v"), nil); err != nil {
				t.Fatal(err)
			}
			stored = append(stored, w)
		}
	}
	slices.SortFunc(stored, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	after := func(k, a string) bool { return len(k) > len(a) || len(k) == len(a) && k > a }
	for _, prefix := range append([]string{""}, words[:12]...) {
		for _, from := range append([]string{""}, words...) {
			var want []string
			for _, k := range stored {
				if strings.HasPrefix(k, prefix) && after(k, from) {
					want = append(want, k)
				}
			}
			for limit := 1; limit <= 4; limit++ {
				var got []string
				for a := from; ; {
					page, err := st.Keys(ctx, prefix, a, limit)
					if err != nil || len(page) > limit {
						t.Fatalf("Keys(%q, %q, %d): %q %v", prefix, a, limit, page, err)
					}
					if len(page) == 0 {
						break
					}
					if !after(page[0], a) {
						t.Fatalf("Keys(%q, %q, %d) lists %q again", prefix, a, limit, page[0])
					}
					got = append(got, page...)
					a = page[len(page)-1]
				}
				if !slices.Equal(got, want) {
					t.Fatalf("prefix %q after %q in pages of %d: %q, want %q", prefix, from, limit, got, want)
				}
			}
		}
	}
	// Deleted between pages: the listing goes on past it.
	first, _ := st.Keys(ctx, "", "", 2)
	vals, token, _ := st.Fetch(ctx, stored[2])
	if len(vals) != 1 || st.Delete(ctx, stored[2], token) != nil {
		t.Fatal("delete")
	}
	next, _ := st.Keys(ctx, "", first[1], 2)
	if !slices.Equal(first, stored[:2]) || !slices.Equal(next, stored[3:5]) {
		t.Fatalf("pages %q, %q around the deleted %q", first, next, stored[2])
	}
}

// TestSiblingsKeysRefuses: a limit below 1, and a done context.
func TestSiblingsKeysRefuses(t *testing.T) {
	st := memory.NewSiblings()
	if _, err := st.Keys(context.Background(), "", "", 0); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Fatalf("limit 0: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.Keys(ctx, "", "", 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("done context: %v", err)
	}
}
