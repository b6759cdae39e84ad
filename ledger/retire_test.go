package ledger_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/tpncounter"
)

// A ledger with RetireAfter retires the entries of incarnations it has
// seen unchanged that long: the state keeps every amount and loses their
// histories; an incarnation retired while still alive writes again and is
// counted once; with timed transactions a retry of a retired transaction
// is refused.
func TestRetireAfter(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	counter := tpncounter.Options{TxnTime: tpncounter.TimeUUID}
	newTxn := func() crdt.TxnID {
		u, err := uuid.NewUUID()
		if err != nil {
			t.Fatal(err)
		}
		return crdt.TxnID(u.String())
	}
	var old []*ledger.Ledger
	var oldTxns []crdt.TxnID
	want := int64(0)
	for i := 0; i < 3; i++ { // three incarnations: restarts of one service
		l, err := ledger.New(st, "acct", ledger.Options{Actor: "svc", Counter: counter})
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 3; j++ {
			x := newTxn()
			if _, err := l.Credit(ctx, x, 10); err != nil {
				t.Fatal(err)
			}
			oldTxns = append(oldTxns, x)
			want += 10
		}
		old = append(old, l)
	}
	var retired int
	cur, err := ledger.New(st, "acct", ledger.Options{Actor: "svc", Counter: counter, RetireAfter: time.Hour, Clock: clock,
		Observer: observeFunc(func(e int) { retired += e })})
	if err != nil {
		t.Fatal(err)
	}
	credit := func(amount int64) {
		t.Helper()
		if _, err := cur.Credit(ctx, newTxn(), amount); err != nil {
			t.Fatal(err)
		}
		want += amount
	}
	credit(1) // first sighting of the three
	now = now.Add(59 * time.Minute)
	credit(1)
	if c := stats(t, cur); c.Actors != 4 || c.Retired != 0 {
		t.Fatalf("before RetireAfter: %+v", c)
	}
	now = now.Add(time.Minute)
	credit(1)
	if c := stats(t, cur); c.Actors != 1 || c.Retired != 3 {
		t.Fatalf("after RetireAfter: %+v, want 1 live actor and 3 retired", c)
	}
	if retired != 3 {
		t.Fatalf("observer saw %d retirements, want 3", retired)
	}
	checkValue(t, cur, want)
	// A retry of a retired transaction, on the current ledger, inside
	// the retry window: recognised through its record, counted once.
	if r, err := cur.Credit(ctx, oldTxns[0], 10); err != nil || r.Outcome != tpncounter.Duplicate {
		t.Fatalf("retry of a retired transaction: %v, %v; want Duplicate", r.Outcome, err)
	}
	checkValue(t, cur, want)
	// The second incarnation was alive after all: it writes again, on top
	// of its retirement, and everything is counted once.
	if _, err := old[1].Credit(ctx, newTxn(), 100); err != nil {
		t.Fatal(err)
	}
	want += 100
	checkValue(t, cur, want)
	checkValue(t, old[1], want)
	if c := stats(t, cur); c.Actors != 2 || c.Retired != 2 {
		t.Fatalf("after the retired incarnation wrote again: %+v", c)
	}
	// An actor seen changing within every RetireAfter is never retired.
	for i := 0; i < 8; i++ {
		now = now.Add(40 * time.Minute)
		if i%2 == 0 {
			if _, err := old[1].Credit(ctx, newTxn(), 1); err != nil {
				t.Fatal(err)
			}
			want++
		}
		credit(1)
	}
	if c := stats(t, cur); c.Actors != 2 {
		t.Fatalf("an actor seen changing within every hour was retired: %+v", c)
	}
	checkValue(t, cur, want)
}

type observeFunc func(retired int)

func (f observeFunc) Observe(_ context.Context, e observe.Event) { f(e.Folded) }

func stats(t *testing.T, l *ledger.Ledger) tpncounter.Stats {
	t.Helper()
	c, err := l.Find(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c.Stats()
}

func checkValue(t *testing.T, l *ledger.Ledger, want int64) {
	t.Helper()
	v, err := l.Value(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v != want {
		t.Fatalf("%s: value %d, want %d", l.Writer(), v, want)
	}
}
