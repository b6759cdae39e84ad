package embedded_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// keyAfter reports whether k sorts after a in Keys' order (length, then
// bytes), as a page listed after a must start.
func keyAfter(k, a string) bool { return len(k) > len(a) || len(k) == len(a) && k > a }

// TestSiblingsKeys lists keys of every length from 1 to MaxKeyLen (the
// stored length takes two bytes from 128 on), some with two siblings,
// against a sorted model: every prefix, every page size, and paging from
// each key returned.
func TestSiblingsKeys(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, embedded.Options{})
	st := db.Siblings()
	rng := rand.New(rand.NewPCG(1, 2))
	var all []string
	for n := 1; n <= crdt.MaxKeyLen; n += 1 + rng.IntN(9) {
		for _, first := range []string{"a", "b", "ab"} {
			k := first + strings.Repeat("x", max(0, n-len(first)))
			if len(k) != n && n > 1 {
				continue
			}
			all = append(all, k)
			if err := st.Put(ctx, k, "w", []byte("v"), nil); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(2) == 0 { // a second sibling: the key is listed once
				if err := st.Put(ctx, k, "u", []byte("v"), nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	all = slices.Compact(slices.SortedFunc(slices.Values(all), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	}))
	for _, prefix := range []string{"", "a", "ab", "b", "zz"} {
		var want []string
		for _, k := range all {
			if strings.HasPrefix(k, prefix) {
				want = append(want, k)
			}
		}
		for _, limit := range []int{1, 2, 7, 1000} {
			var got []string
			for after := ""; ; {
				page, err := st.Keys(ctx, prefix, after, limit)
				if err != nil {
					t.Fatal(err)
				}
				if len(page) > limit {
					t.Fatalf("prefix %q limit %d: a page of %d", prefix, limit, len(page))
				}
				if len(page) > 0 && !keyAfter(page[0], after) { // paging on would never end
					t.Fatalf("prefix %q limit %d: Keys after %q lists %q again", prefix, limit, after, page[0])
				}
				got = append(got, page...)
				if len(page) < limit {
					break
				}
				after = page[len(page)-1]
			}
			if !slices.Equal(got, want) {
				t.Fatalf("prefix %q, pages of %d: %d keys, want %d\ngot  %q\nwant %q", prefix, limit, len(got), len(want), got, want)
			}
		}
		for i, after := range want {
			page, err := st.Keys(ctx, prefix, after, len(want))
			if err != nil || !slices.Equal(page, want[i+1:]) {
				t.Fatalf("prefix %q after %q: %q %v, want %q", prefix, after, page, err, want[i+1:])
			}
		}
	}
}

func TestSiblingsKeysRefusals(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, embedded.Options{})
	if _, err := db.Siblings().Keys(ctx, "", "", 0); !errors.Is(err, crdt.ErrInvalidConfig) {
		t.Fatalf("limit 0: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.Siblings().Keys(cancelled, "", "", 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("a done context: %v", err)
	}
	db.Close()
	if _, err := db.Siblings().Keys(ctx, "", "", 1); !errors.Is(err, embedded.ErrClosed) {
		t.Fatalf("closed: %v", err)
	}
}

// ExampleSiblings_Keys lists a store's transaction records a page at a
// time and deletes those past every retry window (ledger.ExpireRecords),
// but the newest credit's, which dates its live writer. The sweep of
// ledger.ExpireAllRecords lists the store's keys.
var _ ledger.KeyLister = (*embedded.Siblings)(nil)

func ExampleSiblings_Keys() {
	ctx := context.Background()
	base, err := os.MkdirTemp("", "counterkit-records-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(base)
	db, err := embedded.Open(filepath.Join(base, "data"), embedded.Options{})
	if err != nil {
		panic(err)
	}
	defer db.Close()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	l, _ := ledger.New(db.Siblings(), "acct", ledger.Options{Actor: "svc", Clock: clock})
	for i := range 5 {
		l.Credit(ctx, crdt.TxnID(fmt.Sprint("pay-", i)), 10)
	}

	now = now.Add(ledger.DefaultExpireAfter + time.Minute)
	deleted := 0
	for after := ""; ; {
		keys, err := db.Siblings().Keys(ctx, ledger.RecordKeyPrefix, after, 2)
		if err != nil || len(keys) == 0 {
			break
		}
		res, _ := ledger.ExpireRecords(ctx, db.Siblings(), keys, ledger.ExpireOptions{Clock: clock})
		deleted += res.Deleted
		after = keys[len(keys)-1]
	}
	left, _ := db.Siblings().Keys(ctx, "", "", 100)
	fmt.Println("records deleted:", deleted)
	fmt.Println("keys left:", left)
	// Output:
	// records deleted: 4
	// keys left: [acct counterkit.txn/55TL1A60LEJ5R4I43I2039ANQHO5TQCM]
}

// TestSiblingsKeysFromAnyKey pages from every after, with the prefix or
// not, sorting before, inside or after the prefix's keys of its length,
// against the model: the keys with the prefix that come after it.
func TestSiblingsKeysFromAnyKey(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, embedded.Options{})
	st := db.Siblings()
	rng := rand.New(rand.NewPCG(3, 4))
	var words []string
	var gen func(string)
	gen = func(s string) {
		if s != "" {
			words = append(words, s)
		}
		if len(s) == 3 {
			return
		}
		for _, c := range "abc" {
			gen(s + string(c))
		}
	}
	gen("")
	var all []string
	for _, w := range words {
		if rng.IntN(2) == 0 {
			all = append(all, w)
			if err := st.Put(ctx, w, "w", []byte("v"), nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	storeOrder := func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) }
	slices.SortFunc(all, storeOrder)
	afters := append([]string{"", "0", "d", "`", "a0", "ad", "bz", "c0", "0000", "cccc"}, words...)
	for _, prefix := range []string{"", "a", "b", "ab", "cc", "abc", "0", "d"} {
		for _, after := range afters {
			var want []string
			for _, k := range all {
				if strings.HasPrefix(k, prefix) && (after == "" || storeOrder(k, after) > 0) {
					want = append(want, k)
				}
			}
			got, err := st.Keys(ctx, prefix, after, len(all)+1)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("prefix %q after %q: %q %v, want %q", prefix, after, got, err, want)
			}
		}
	}
}

// TestSiblingsKeysBetweenWrites pages while keys are written and deleted
// between pages: a key stored throughout is listed, and no key twice.
func TestSiblingsKeysBetweenWrites(t *testing.T) {
	ctx := context.Background()
	db, _ := openTemp(t, embedded.Options{})
	st := db.Siblings()
	rng := rand.New(rand.NewPCG(5, 6))
	var universe []string
	for range 40 {
		universe = append(universe, "r"+strings.Repeat("x", rng.IntN(4))+fmt.Sprint(rng.IntN(30)))
	}
	universe = slices.Compact(slices.Sorted(slices.Values(universe)))
	present := map[string]bool{}
	flip := func(k string) {
		if !present[k] {
			if err := st.Put(ctx, k, "w", []byte("v"), nil); err != nil {
				t.Fatal(err)
			}
			present[k] = true
			return
		}
		_, tok, err := st.Fetch(ctx, k)
		if err == nil {
			err = st.Delete(ctx, k, tok)
		}
		if err != nil {
			t.Fatal(err)
		}
		delete(present, k)
	}
	for range 20 {
		for _, k := range universe {
			if rng.IntN(2) == 0 {
				flip(k)
			}
		}
		throughout := maps.Clone(present)
		seen := map[string]bool{}
		limit := 1 + rng.IntN(5)
		for after := ""; ; {
			page, err := st.Keys(ctx, "r", after, limit)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range page {
				if seen[k] {
					t.Fatalf("%q listed twice", k)
				}
				seen[k] = true
			}
			if len(page) < limit {
				break
			}
			after = page[len(page)-1]
			for range 4 {
				k := universe[rng.IntN(len(universe))]
				delete(throughout, k)
				flip(k)
			}
		}
		for k := range throughout {
			if !seen[k] {
				t.Fatalf("%q, stored throughout, not listed", k)
			}
		}
	}
}
