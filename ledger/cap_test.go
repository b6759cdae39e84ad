package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// capClock is a clock the test moves.
type capClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *capClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *capClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Two ledgers that could not see each other (one reads stale) each add a
// live actor to an account at MaxActors-1: each sibling is within the cap,
// their union is past it. MaxActors caps Apply only (SPEC.md 6.1), so the
// key stays readable and writable by its existing actors; a new actor is
// refused while it is past the cap, and retirement brings it back under.
// (A reviewer's test: before, every read and write failed "merge would
// hold 5 live actors, limit 4" for good.)
func TestSiblingsPastMaxActorsStayReadable(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	clk := &capClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	opts := ledger.Options{Actor: "svc", Clock: clk.Now, Counter: tpncounter.Options{MaxActors: 4}}
	for i := 0; i < 3; i++ { // three processes credit the account
		l, _ := ledger.New(mem, "acct", opts)
		clk.Add(time.Minute)
		if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("p%d", i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	stale := true
	fy := faulty.NewSiblings(mem, faulty.Options{Policy: func(c faulty.Call) faulty.Fault {
		if c.Key == "acct" && c.Method == faulty.MethodFetch && stale && c.N > 1 {
			stale = false
			return faulty.Stale
		}
		return faulty.Pass
	}})
	x, _ := ledger.New(mem, "acct", opts)
	y, _ := ledger.New(fy, "acct", opts)
	if _, err := y.Value(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Credit(ctx, "x1", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := y.Credit(ctx, "y1", 1); err != nil {
		t.Fatal(err)
	}
	live := func() int {
		t.Helper()
		l, _ := ledger.New(mem, "acct", opts)
		c, err := l.Find(ctx)
		if err != nil {
			t.Fatal("unreadable:", err)
		}
		return c.Stats().Actors
	}
	if n := live(); n != 5 {
		t.Fatalf("%d live actors, want 5 (past MaxActors 4)", n)
	}
	w, _ := ledger.New(mem, "acct", opts)
	if _, err := w.Credit(ctx, "w1", 1); !errors.Is(err, crdt.ErrTooLarge) {
		t.Fatalf("a new actor past MaxActors: %v, want too_large", err)
	}
	want := int64(5)
	for _, d := range []time.Duration{0, 2 * time.Hour, 11 * 24 * time.Hour} {
		clk.Add(d)
		z, _ := ledger.New(mem, "acct", opts)
		if v, err := z.Value(ctx); err != nil || v != want {
			t.Fatalf("+%v: read %d %v, want %d", d, v, err, want)
		}
		if _, err := x.Credit(ctx, crdt.TxnID("x-"+d.String()), 1); err != nil {
			t.Fatalf("+%v: an existing actor's write: %v", d, err)
		}
		want++
	}
	if n := live(); n >= 4 {
		t.Fatalf("%d live actors after the retirement passes, want under MaxActors 4", n)
	}
	w, _ = ledger.New(mem, "acct", opts)
	if _, err := w.Credit(ctx, "w2", 1); err != nil {
		t.Fatal("a new actor once retirement made room:", err)
	}
	if v, err := w.Value(ctx); err != nil || v != want+1 {
		t.Fatalf("value %d %v, want %d", v, err, want+1)
	}
}

// A state of 65536 retired entries (short-lived incarnations of "svc",
// retired within RetiredGrace) and two more processes: the second's pass
// retires the first, the state holds 65537 retired entries, and it stays
// readable and writable (SPEC.md 6.1: retirement keeps the number of
// entries; before, the decoder refused more than 65536 retired ones).
func TestRetiredPast65536StaysReadable(t *testing.T) {
	testsize.SkipSequential(t)
	ctx := context.Background()
	st := memory.NewSiblings()
	t0 := time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC)
	c, _ := tpncounter.New(tpncounter.Options{})
	const alpha = "234567abcdefghijklmnopqrstuvwxyz"
	for i := 0; i < tpncounter.MaxRetired; i++ {
		id := []byte("svc~aaa")
		for j, n := 0, i; j < 5; j, n = j+1, n/32 {
			id = append(id, alpha[n%32])
		}
		a := crdt.ActorID(id)
		if _, err := c.Apply(a, crdt.TxnID(fmt.Sprintf("old-%d", i)), 1); err != nil {
			t.Fatal(err)
		}
		// retired over the 9 days before t0-3h: inside the 10-day grace
		at := t0.Add(-9*24*time.Hour + (9*24*time.Hour-3*time.Hour)/tpncounter.MaxRetired*time.Duration(i))
		if ok, err := c.RetireAllAt(at, a); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	b, _ := c.MarshalBinary()
	if err := st.Put(ctx, "acct", "svc", b, nil); err != nil {
		t.Fatal(err)
	}
	clk := &capClock{t: t0.Add(-2 * time.Hour)}
	opts := ledger.Options{Actor: "svc", Clock: clk.Now}
	l1, _ := ledger.New(st, "acct", opts)
	if _, err := l1.Credit(ctx, "x1", 5); err != nil {
		t.Fatal("l1:", err)
	}
	clk.Add(2 * time.Hour) // l1's process is gone; a new one starts
	l2, _ := ledger.New(st, "acct", opts)
	if _, err := l2.Credit(ctx, "x2", 7); err != nil { // its pass retires l1
		t.Fatal("l2:", err)
	}
	want := int64(tpncounter.MaxRetired + 12)
	for _, d := range []time.Duration{0, 24 * time.Hour, 30 * 24 * time.Hour} {
		clk.Add(d)
		l3, _ := ledger.New(st, "acct", opts)
		if v, err := l3.Value(ctx); err != nil || v != want {
			t.Fatalf("+%v: read %d %v, want %d", d, v, err, want)
		}
		if d == 0 {
			if s, _ := l3.Find(ctx); s.Stats().Retired <= tpncounter.MaxRetired {
				t.Fatalf("%d retired entries: the case is not reached", s.Stats().Retired)
			}
		}
		if _, err := l2.Credit(ctx, crdt.TxnID("x3-"+d.String()), 1); err != nil {
			t.Fatalf("+%v: the writer that wrote it: %v", d, err)
		}
		want++
	}
}
