package bounded_test

// Accounts on a key near what a store accepts (store.MaxValue, 8 MiB; the
// format allows 16 MiB). From a review of values beyond the stores' limit.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

var sizeCtx = context.Background()

func sizeID(prefix string, i, n int) crdt.TxnID {
	s := fmt.Sprintf("%s-%06d-", prefix, i)
	return crdt.TxnID(s + strings.Repeat("x", n-len(s)))
}

func sizeLen(t *testing.T, c *bounded.Counter) int {
	t.Helper()
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return len(b)
}

// fillTo merges into c filler entries (other incarnations, each with
// the default window of 64 transactions of 255-byte ids) and one pad
// entry, so that c's encoding is exactly target bytes.
func fillTo(t *testing.T, c *bounded.Counter, target int) {
	t.Helper()
	// entry size measured on a small counter holding >= 16 entries
	// (array header of 3 bytes both ways).
	base, _ := bounded.New(bounded.Options{})
	for i := 0; i < 20; i++ {
		base.Apply(crdt.ActorID(fmt.Sprintf("base-%02d~aaaaaaaa", i)), sizeID("base", i, 20), 1)
	}
	contrib := func(e *bounded.Counter) int {
		m := base.Clone()
		if err := m.Merge(e); err != nil {
			t.Fatal(err)
		}
		return sizeLen(t, m) - sizeLen(t, base)
	}
	full := func(k int, ntx int) *bounded.Counter {
		e, _ := bounded.New(bounded.Options{})
		a := crdt.ActorID(fmt.Sprintf("filler-%05d~aaaaaaaa", k))
		for j := 0; j < ntx; j++ {
			if _, err := e.Apply(a, sizeID(fmt.Sprintf("f%05d", k), j, 255), 1); err != nil {
				t.Fatal(err)
			}
		}
		return e
	}
	size := sizeLen(t, c)
	if size < 100 { // make the entries' array header 3 bytes
		for i := 0; i < 20; i++ {
			c.Apply(crdt.ActorID(fmt.Sprintf("small-%02d~aaaaaaaa", i)), sizeID("small", i, 20), 1)
		}
		size = sizeLen(t, c)
	}
	k := 0
	for _, ntx := range []int{64, 4} {
		per := contrib(full(0, ntx))
		for size+per+3000 < target {
			if err := c.Merge(full(k, ntx)); err != nil {
				t.Fatal(err)
			}
			size += per
			k++
		}
	}
	size = sizeLen(t, c)
	gap := target - size
	if gap < 40 {
		t.Fatalf("gap %d too small", gap)
	}
	// pad entry: n txns of 255-byte ids and one of length L.
	for _, amt := range []int64{1, 200} {
		for n := 0; n < 20; n++ {
			for L := 1; L <= 255; L++ {
				e, _ := bounded.New(bounded.Options{})
				a := crdt.ActorID("pad~aaaaaaaa")
				for j := 0; j < n; j++ {
					e.Apply(a, sizeID("pad", j, 255), 1)
				}
				id := crdt.TxnID(strings.Repeat("p", L))
				e.Apply(a, id, amt)
				if contrib(e) == gap {
					if err := c.Merge(e); err != nil {
						t.Fatal(err)
					}
					if got := sizeLen(t, c); got != target {
						t.Fatalf("filled to %d, want %d", got, target)
					}
					return
				}
				if contrib(e) > gap {
					break
				}
			}
		}
	}
	t.Fatalf("no pad for gap %d", gap)
}

// fillKey reads key's single sibling, fills it to leave room bytes
// below store.MaxValue and writes it back with the fetch's token.
func fillKey(t *testing.T, st store.Siblings, key string, room int) {
	t.Helper()
	vals, tok, err := st.Fetch(sizeCtx, key)
	if err != nil || len(vals) > 1 {
		t.Fatal(err, len(vals))
	}
	c, _ := bounded.New(bounded.Options{})
	if len(vals) == 1 {
		if c, err = bounded.Decode(vals[0], 0); err != nil {
			t.Fatal(err)
		}
	}
	fillTo(t, c, store.MaxValue-room)
	b, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(sizeCtx, key, "operator", b, tok); err != nil {
		t.Fatal(err)
	}
}

// fullKey opens the Account svc-g on key, credits it 64 times (a full
// window, 64 rights), and fills the key to room bytes below store.MaxValue.
func fullKey(t *testing.T, st store.Siblings, key string, room int) *bounded.Account {
	t.Helper()
	g := sizeOpen(t, st, key, "svc-g")
	for j := range 64 {
		if _, err := g.Credit(sizeCtx, crdt.TxnID(fmt.Sprintf("g-%03d", j)), 1); err != nil {
			t.Fatal(err)
		}
	}
	fillKey(t, st, key, room)
	return g
}

func sizeOpen(t *testing.T, st store.Siblings, key, actor string) *bounded.Account {
	t.Helper()
	a, err := bounded.Open(st, key, bounded.AccountOptions{Actor: crdt.ActorID(actor), RetryCount: 1})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func sizeSnapshot(t *testing.T, st store.Siblings, key string) [][]byte {
	t.Helper()
	vals, _, err := st.Fetch(sizeCtx, key)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = bytes.Clone(v)
	}
	return out
}

func sameSiblings(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	// order is unspecified: compare as multisets by length+bytes
	used := make([]bool, len(b))
	for _, x := range a {
		ok := false
		for j, y := range b {
			if !used[j] && bytes.Equal(x, y) {
				used[j], ok = true, true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// TestFullKeyRefusesANewAccount: the documented limit (bounded/README.md,
// SPEC.md 13.5): a full key refuses a new Account with crdt.ErrTooLarge,
// changing nothing; an existing Account whose window is full keeps writing.
func TestFullKeyRefusesANewAccount(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a key to 8 MiB: the plain pass runs it (seconds; a minute under -race)")
	}
	st := memory.NewSiblings()
	const key = "acct/full"
	g := fullKey(t, st, key, 20)
	before := sizeSnapshot(t, st, key)

	n := sizeOpen(t, st, key, "svc-n")
	_, err := n.Credit(sizeCtx, "n-001", 5)
	t.Logf("new account credit on a full key: %v", err)
	if !errors.Is(err, crdt.ErrTooLarge) {
		t.Errorf("new account credit: %v, want ErrTooLarge", err)
	}
	if !sameSiblings(before, sizeSnapshot(t, st, key)) {
		t.Errorf("refused credit changed the stored key")
	}
	if v, err := n.Value(sizeCtx); err != nil {
		t.Errorf("Value on a full key: %v", err)
	} else {
		t.Logf("value %d", v)
	}
	// existing account, full window, same-length ids: keeps writing
	for j := 64; j < 70; j++ {
		if _, err := g.Credit(sizeCtx, crdt.TxnID(fmt.Sprintf("g-%03d", j)), 1); err != nil {
			t.Errorf("existing account credit %d: %v", j, err)
		}
	}
	if _, err := g.Debit(sizeCtx, "g-d01", 3); err != nil {
		t.Errorf("existing account debit: %v", err)
	}
}

// TestGrantsThatDoNotFitWait: on a key near store.MaxValue, a new
// Account's refused debit writes a request (a request-only entry is smaller
// than a credit's, so it fits where a credit does not). A holder of spare
// rights grants on its next write, adding a recipient to its entry; where
// that makes the state larger than a store takes, it writes without the
// grant, so that its own calls land (before, each failed
// crdt.ErrTooLarge until the requesting incarnation closed), but for
// Close, which must give its rights to the requests it sees.
func TestGrantsThatDoNotFitWait(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a key to 8 MiB: the plain pass runs it (seconds; a minute under -race)")
	}
	for room := 20; room <= 60; room++ {
		st := memory.NewSiblings()
		const key = "acct/req"
		g := fullKey(t, st, key, room)
		if _, err := g.Credit(sizeCtx, "g-100", 1); err != nil {
			t.Fatalf("room %d: a credit before any request: %v", room, err)
		}
		n := sizeOpen(t, st, key, "svc-n")
		if _, err := n.Credit(sizeCtx, "n-c01", 1); !errors.Is(err, crdt.ErrTooLarge) {
			continue // the new account's credit fits: no room yet where only a request does
		}
		r, err := n.Debit(sizeCtx, "n-001", 5)
		if !errors.Is(err, crdt.ErrInsufficientRights) || r.Requested == 0 || !r.Landed {
			continue
		}
		// A request landed where the holder's grant to it does not fit:
		// the holder's own calls land, granting nothing.
		for i, call := range []func() (bounded.Result, error){
			func() (bounded.Result, error) { return g.Credit(sizeCtx, "g-101", 1) },
			func() (bounded.Result, error) { return g.Debit(sizeCtx, "g-d01", 1) },
			func() (bounded.Result, error) { _, err := g.Sync(sizeCtx); return bounded.Result{}, err },
		} {
			res, err := call()
			if err != nil || res.Granted != 0 {
				t.Errorf("room %d: the holder's call %d (credit, debit, sync) after a request that its grant cannot fit: granted %d, %v", room, i, res.Granted, err)
			}
		}
		for _, v := range sizeSnapshot(t, st, key) {
			if len(v) > store.MaxValue {
				t.Errorf("room %d: a stored value of %d bytes", room, len(v))
			}
		}
		// Close gives every right it may spend to the requests its read
		// shows: it fails rather than close without the grant.
		if res, err := g.Close(sizeCtx, ""); !errors.Is(err, crdt.ErrTooLarge) {
			t.Errorf("room %d: the holder's Close, whose grant does not fit: granted %d, %v; want crdt.ErrTooLarge", room, res.Granted, err)
		}
		// The request waits; once the requester closes, nothing is owed.
		if _, err := n.Close(sizeCtx, ""); err != nil {
			t.Errorf("room %d: the requester's Close: %v", room, err)
		}
		if _, err := g.Credit(sizeCtx, "g-102", 1); err != nil {
			t.Errorf("room %d: the holder's credit after the requester closed: %v", room, err)
		}
		return
	}
	t.Fatal("no room found where a request lands but a credit does not")
}

// staleOnce answers its first Fetch with a snapshot taken earlier: a read
// that does not see another writer's concurrent Put.
type staleOnce struct {
	store.Siblings
	vals [][]byte
	tok  store.Token
	once bool
}

func (s *staleOnce) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if s.once {
		s.once = false
		return s.vals, s.tok, nil
	}
	return s.Siblings.Fetch(ctx, key)
}

// TestLimitSiblingsWhoseUnionPassesTheStoresLimit shows the limit SPEC.md
// 13.5 states: two Accounts that write at once on a key near
// store.MaxValue each put a value a store takes, whose union is above it.
// Then every write on the key fails crdt.ErrTooLarge, of every Account
// (Close included) and changes nothing; the value still reads.
func TestLimitSiblingsWhoseUnionPassesTheStoresLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a key to 8 MiB: the plain pass runs it (seconds; a minute under -race)")
	}
	st := memory.NewSiblings()
	const key = "acct/union"
	g := fullKey(t, st, key, 1700) // room for x's six credits (~1.6 KB) or y's one, not both
	vals, tok, err := st.Fetch(sizeCtx, key)
	if err != nil {
		t.Fatal(err)
	}
	x := sizeOpen(t, st, key, "svc-x")
	y := sizeOpen(t, &staleOnce{Siblings: st, vals: vals, tok: tok, once: true}, key, "svc-y")
	for j := 0; j < 6; j++ {
		if _, err := x.Credit(sizeCtx, sizeID("x", j, 255), 10); err != nil {
			t.Fatalf("x credit %d: %v", j, err)
		}
	}
	if _, err := y.Credit(sizeCtx, sizeID("y", 0, 255), 10); err != nil {
		t.Fatalf("y credit (a read that missed x's): %v", err)
	}
	before := sizeSnapshot(t, st, key)
	merged, _ := bounded.New(bounded.Options{})
	for _, s := range before {
		c, err := bounded.Decode(s, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := merged.Merge(c); err != nil {
			t.Fatal(err)
		}
	}
	if len(before) != 2 || sizeLen(t, merged) <= store.MaxValue {
		t.Fatalf("%d siblings whose union encodes in %d bytes; want 2, above %d", len(before), sizeLen(t, merged), store.MaxValue)
	}
	for _, c := range []struct {
		name string
		f    func() error
	}{
		{"x.Credit", func() error { _, e := x.Credit(sizeCtx, "x-new", 1); return e }},
		{"x.Debit", func() error { _, e := x.Debit(sizeCtx, "x-d", 1); return e }},
		{"x.Sync", func() error { _, e := x.Sync(sizeCtx); return e }},
		{"y.Credit", func() error { _, e := y.Credit(sizeCtx, "y-new", 1); return e }},
		{"g.Credit", func() error { _, e := g.Credit(sizeCtx, "g-100", 1); return e }},
		{"g.Transfer", func() error { _, e := g.Transfer(sizeCtx, x.Writer(), 1); return e }},
		{"g.Close", func() error { _, e := g.Close(sizeCtx, x.Writer()); return e }},
		{"a new Account's Credit", func() error { _, e := sizeOpen(t, st, key, "svc-new").Credit(sizeCtx, "new-1", 1); return e }},
	} {
		if err := c.f(); !errors.Is(err, crdt.ErrTooLarge) {
			t.Errorf("%s on a key whose siblings' union is above store.MaxValue: %v, want crdt.ErrTooLarge", c.name, err)
		}
	}
	if v, err := x.Value(sizeCtx); err != nil || v != merged.Value() {
		t.Errorf("Value: %d, %v; want %d", v, err, merged.Value())
	}
	if !sameSiblings(before, sizeSnapshot(t, st, key)) {
		t.Error("a refused write changed the key")
	}
}

// TestLimitAWriteThatLengthensAnEntryOnAFullKey shows the limit SPEC.md
// 13.5 states: on a key at store.MaxValue an existing Account's credit
// that keeps its entry's length lands, and one that lengthens it (its
// credits' total, 64 to 164, takes one more byte) fails
// crdt.ErrTooLarge.
func TestLimitAWriteThatLengthensAnEntryOnAFullKey(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a key to 8 MiB: the plain pass runs it (seconds; a minute under -race)")
	}
	st := memory.NewSiblings()
	const key = "acct/full0"
	g := fullKey(t, st, key, 0)
	if _, err := g.Credit(sizeCtx, "g-064", 1); err != nil {
		t.Errorf("a credit that keeps the entry's length: %v", err)
	}
	if _, err := g.Credit(sizeCtx, "g-065", 100); !errors.Is(err, crdt.ErrTooLarge) {
		t.Errorf("a credit that lengthens the entry by a byte: %v, want crdt.ErrTooLarge", err)
	}
}
