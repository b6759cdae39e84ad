package ledgertest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// churn is what a run of credits from ever new writers left after each
// credit: the account's entries (live and retired), the bytes of its
// stored siblings (what the next credit reads and writes), and the store
// calls the credit made.
type churn struct {
	entries, size, calls []int
	value                int64
}

// testRestartsStayBounded: with the defaults, one account credited once by
// each of n process restarts (a new Ledger, so a new incarnation; 200 ×
// COUNTERKIT_CASES), then once after each of n evictions from a Book
// (MaxOpen 1, alternating with another account), stays writable, counts
// every credit once, holds at most the entries of the writers within
// RetireAfter + RetiredGrace (and a pass's slack), and its credits stop
// growing: the stored bytes and store calls of the second half's credits
// are at most those of the second quarter's, with a little slack. The same
// restarts without folding (RetiredGrace < 0) must fail the check, so the
// check can tell entries piling up on this store. Restarts are 1/25 of
// RetireAfter + RetiredGrace apart: folding starts after about 27.
func testRestartsStayBounded(t *testing.T, st store.Siblings, key string) {
	n := proptest.Scale(200)
	window := ledger.DefaultRetireAfter + ledger.DefaultRetiredGrace
	step := window / 25
	bound := int(window/step) + 2 + ledger.MaxRetirePerWrite

	var calls atomic.Int64
	counted := faulty.NewSiblings(st, faulty.Options{History: -1, Hook: func(_ context.Context, _ faulty.Call, after bool) error {
		if !after {
			calls.Add(1)
		}
		return nil
	}}).Store()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var ns atomic.Int64
	clock := func() time.Time { return time.Unix(0, ns.Load()) }

	// run makes n credits of key, the i-th at t0 + i·step through
	// credit(i), and measures each.
	run := func(key string, n int, credit func(i int) error) (churn, error) {
		var c churn
		for i := 0; i < n; i++ {
			ns.Store(t0.Add(time.Duration(i) * step).UnixNano())
			before := calls.Load()
			if err := credit(i); err != nil {
				return c, fmt.Errorf("credit %d: %w", i, err)
			}
			c.calls = append(c.calls, int(calls.Load()-before))
			entries, size, value, err := stored(st, key)
			if err != nil {
				return c, fmt.Errorf("after credit %d: %w", i, err)
			}
			c.entries, c.size, c.value = append(c.entries, entries), append(c.size, size), value
		}
		return c, nil
	}
	restart := func(key string, grace time.Duration) func(i int) error {
		return func(i int) error {
			l, err := ledger.New(counted, key, ledger.Options{Actor: "svc", Clock: clock, RetiredGrace: grace})
			if err != nil {
				return err
			}
			_, err = l.Credit(context.Background(), crdt.TxnID(fmt.Sprintf("r%08d", i)), 1)
			return err
		}
	}

	c, err := run(key, n, restart(key, 0))
	if err == nil {
		err = c.check(n, bound)
	}
	if err != nil {
		t.Fatalf("%d restarts %v apart: %v", n, step, err)
	}
	t.Logf("%d restarts %v apart: %d entries, %d bytes and %d calls at the last (at most %d entries)", n, step, c.entries[n-1], c.size[n-1], c.calls[n-1], bound)

	book, err := ledger.NewBook(counted, ledger.BookOptions{Options: ledger.Options{Actor: "booker", Clock: clock}, MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	evicted, other := key+"-evicted", key+"-other"
	c, err = run(evicted, n, func(i int) error {
		if _, err := book.Credit(context.Background(), other, crdt.TxnID(fmt.Sprintf("o%08d", i)), 1); err != nil {
			return err // evicts evicted's ledger
		}
		_, err := book.Credit(context.Background(), evicted, crdt.TxnID(fmt.Sprintf("e%08d", i)), 1)
		return err
	})
	if err == nil {
		err = c.check(n, bound)
	}
	if err != nil {
		t.Fatalf("%d evictions %v apart: %v", n, step, err)
	}
	t.Logf("%d evictions %v apart: %d entries, %d bytes at the last; book %+v", n, step, c.entries[n-1], c.size[n-1], book.Stats())

	m := bound + 12 // past the bound, and on into the second half
	unfolded := key + "-unfolded"
	c, err = run(unfolded, m, restart(unfolded, -1))
	if err == nil {
		err = c.check(m, bound)
	}
	if err == nil {
		t.Fatalf("%d restarts without folding passed the check: it cannot tell entries piling up", m)
	}
	t.Logf("without folding, as expected: %v", err)
}

// stored reads key's siblings from st: the merged counter's entries (live
// and retired) and value, and the siblings' total bytes.
func stored(st store.Siblings, key string) (entries, size int, value int64, err error) {
	sibs, _, err := st.Fetch(context.Background(), key)
	if err != nil {
		return 0, 0, 0, err
	}
	merged, err := tpncounter.New(tpncounter.Options{})
	if err != nil {
		return 0, 0, 0, err
	}
	for _, b := range sibs {
		c, err := tpncounter.New(tpncounter.Options{})
		if err != nil {
			return 0, 0, 0, err
		}
		if err := c.UnmarshalBinary(b); err != nil {
			return 0, 0, 0, err
		}
		if err := merged.Merge(c); err != nil {
			return 0, 0, 0, err
		}
		size += len(b)
	}
	s := merged.Stats()
	return s.Actors + s.Retired, size, merged.Value(), nil
}

// check reports whether n credits were counted once, left at most bound
// entries after each, and stopped growing: no credit of the second half
// stored more bytes, or made more store calls, than the largest of the
// second quarter plus 2% or 16 bytes, or 2 calls. (The ids have one
// width, so that they do not grow.)
func (c churn) check(n, bound int) error {
	if c.value != int64(n) {
		return fmt.Errorf("value %d after %d credits", c.value, n)
	}
	for i, e := range c.entries {
		if e > bound {
			return fmt.Errorf("credit %d: %d entries, more than %d", i, e, bound)
		}
	}
	size, calls := peak(c.size[n/4:n/2]), peak(c.calls[n/4:n/2])
	for i := n / 2; i < n; i++ {
		if c.size[i] > size+max(size/50, 16) {
			return fmt.Errorf("credit %d: %d stored bytes, more than 2%% (or 16 bytes) over any of credits %d..%d (%d): not flat", i, c.size[i], n/4, n/2-1, size)
		}
		if c.calls[i] > calls+2 {
			return fmt.Errorf("credit %d: %d store calls, more than 2 over any of credits %d..%d (%d): not flat", i, c.calls[i], n/4, n/2-1, calls)
		}
	}
	return nil
}

func peak(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
