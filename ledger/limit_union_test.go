package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestLimitAUnionAboveTheStoresLimit shows the limit SPEC.md 6.11 states
// under "Size": two ledgers that could not see each other (a partition),
// HistoryLength 1000, on a key near store.MaxValue each write a state
// within the ledger's cap, and their union is above what a store takes.
// Every Update of the key then fails crdt.ErrTooLarge, of every ledger,
// and changes nothing; Value still reads. Find, run once per pass,
// retires the idle writers (here the writers that filled the key) and
// writes the key once it fits. The two states are built with
// tpncounter's Counter.Apply, as the ledgers' Updates would build them, and put
// with the same token.
func TestLimitAUnionAboveTheStoresLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a key to 8 MiB: the plain pass runs it (seconds; a minute under -race)")
	}
	ctx := context.Background()
	st := memory.NewSiblings()
	const key = "acct/m"
	copts := tpncounter.Options{HistoryLength: 1000}
	ledgerCap := store.MaxValue - (36*(tpncounter.DefaultMaxActors+1) + 64) // SPEC.md 6.9
	txn := func(p string, i int) crdt.TxnID {
		s := fmt.Sprintf("%s-%06d-", p, i)
		return crdt.TxnID(s + strings.Repeat("x", crdt.MaxIDLen-len(s)))
	}
	c, err := tpncounter.New(copts)
	if err != nil {
		t.Fatal(err)
	}
	size := func(c *tpncounter.Counter) int {
		b, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	k := 0
	fill := func(n int) { // n writers of 10 credits each, about 2.6 KB
		for range n {
			a := crdt.ActorID(fmt.Sprintf("filler-%05d~aaaaaaaa", k))
			for j := range 10 {
				if _, err := c.Apply(a, txn(string(a[:12]), j), 1); err != nil {
					t.Fatal(err)
				}
			}
			k++
		}
	}
	fill(1)
	one := size(c)
	fill(1)
	per := size(c) - one
	fill((ledgerCap - 168_000 - size(c)) / per)
	base, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, key, "operator", base, nil); err != nil {
		t.Fatal(err)
	}
	_, tok, err := st.Fetch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	union := c.Clone()
	for i, w := range []crdt.ActorID{"svc-1~aaaaaaaa", "svc-2~bbbbbbbb"} {
		s := c.Clone()
		for j := range 640 { // about 165 KB on each side
			if _, err := s.Apply(w, txn(fmt.Sprintf("w%d", i), j), 1); err != nil {
				t.Fatal(err)
			}
		}
		b, err := s.MarshalBinary()
		if err != nil || len(b) > ledgerCap {
			t.Fatalf("side %d: %d bytes, %v; want within the ledger's cap, %d", i, len(b), err, ledgerCap)
		}
		if err := st.Put(ctx, key, w, b, tok); err != nil {
			t.Fatal(err)
		}
		if err := union.Merge(s); err != nil {
			t.Fatal(err)
		}
	}
	if n := size(union); n <= store.MaxValue {
		t.Fatalf("the union encodes in %d bytes, within store.MaxValue", n)
	}
	t.Logf("base %d bytes, the ledger's cap %d, the union %d, store.MaxValue %d", len(base), ledgerCap, size(union), store.MaxValue)
	before, _, err := st.Fetch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	open := func(actor crdt.ActorID) *ledger.Ledger {
		l, err := ledger.New(st, key, ledger.Options{Actor: actor, Counter: copts, Clock: clock.Now, RetryCount: 1})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	l1, l3 := open("svc-1"), open("svc-3")
	for _, c := range []struct {
		name string
		err  error
	}{
		{"a writer's credit", func() error { _, err := l1.Credit(ctx, "r1", 1); return err }()},
		{"a new ledger's credit", func() error { _, err := l3.Credit(ctx, "u1", 1); return err }()},
	} {
		if !errors.Is(c.err, crdt.ErrTooLarge) {
			t.Errorf("%s: %v, want crdt.ErrTooLarge", c.name, c.err)
		}
	}
	if v, err := l1.Value(ctx); err != nil || v != union.Value() {
		t.Errorf("Value %d, %v; want %d", v, err, union.Value())
	}
	after, _, err := st.Fetch(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(before, func(a, b []byte) int { return len(a) - len(b) })
	slices.SortFunc(after, func(a, b []byte) int { return len(a) - len(b) })
	if !slices.EqualFunc(before, after, func(a, b []byte) bool { return string(a) == string(b) }) {
		t.Error("a refused write changed the key")
	}
	// Find, once per pass (RetireAfter/RetirePassDivisor), retires idle
	// writers (their transactions recorded first) until the state fits,
	// and then writes it.
	for pass := 0; ; pass++ {
		_, err := l1.Find(ctx)
		if err == nil {
			t.Logf("Find wrote the key at pass %d, %v after the first", pass, time.Duration(pass)*time.Hour/ledger.RetirePassDivisor)
			break
		}
		if !errors.Is(err, crdt.ErrTooLarge) || pass == 50 {
			t.Fatalf("Find at pass %d: %v; want crdt.ErrTooLarge until it writes the key", pass, err)
		}
		clock.Add(time.Hour / ledger.RetirePassDivisor)
	}
	after, _, err = st.Fetch(ctx, key)
	if err != nil || len(after) != 1 || len(after[0]) > store.MaxValue {
		t.Fatalf("after Find: %d siblings, %v", len(after), err)
	}
	if v, err := l1.Value(ctx); err != nil || v != union.Value() {
		t.Errorf("Value after Find %d, %v; want %d", v, err, union.Value())
	}
}
