package ledger_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	now := time.Now() // the transactions' times are the wall clock's
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

func (f observeFunc) Observe(_ context.Context, e observe.Event) { f(e.Retired) }

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

// retireDelayRun is what retireDelayCheck saw: for each actor that
// stopped writing, when it stopped and when the ledger retired it.
type retireDelayRun struct {
	stopped, retired map[crdt.ActorID]time.Time
	writes           int
}

// retireDelayCheck runs, on a fake clock, an account whose ledger under
// test (opts, with Clock set to the fake clock) credits every minute for
// four hours, while other writers stop at chosen times: 24 together at the
// start (more than MaxRetirePerWrite), 12 each at its own time, every 11
// minutes, between the ledger's passes over the actors, and 2 that write
// every 55 minutes throughout. It returns an error unless every stopped
// actor is retired no earlier than RetireAfter (1 hour) after it stopped
// and no later than RetireAfter + RetireAfter/RetirePassDivisor + 3 minutes
// (the first write after it stopped, and two gaps between writes), and the
// 2 are never retired.
func retireDelayCheck(t *testing.T, variant func(opts *ledger.Options, clock func() time.Time)) (retireDelayRun, error) {
	t.Helper()
	const retireAfter = time.Hour
	const gap = time.Minute
	ctx := context.Background()
	st := memory.NewSiblings()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	run := retireDelayRun{stopped: map[crdt.ActorID]time.Time{}, retired: map[crdt.ActorID]time.Time{}}
	type other struct {
		l     *ledger.Ledger
		stop  time.Time // writes every 10 minutes until then
		every time.Duration
		next  time.Time
	}
	var others []*other
	txn := 0
	credit := func(l *ledger.Ledger) {
		t.Helper()
		txn++
		if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("t-%06d", txn)), 1); err != nil {
			t.Fatal(err)
		}
	}
	newOther := func(name string, stop time.Time, every time.Duration) {
		// The others never retire (RetireAfter negative), so that every
		// retirement is the ledger under test's.
		l, err := ledger.New(st, "acct", ledger.Options{Actor: crdt.ActorID(name), RetireAfter: -1, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		others = append(others, &other{l: l, stop: stop, every: every, next: now})
	}
	start := now
	end := start.Add(4 * time.Hour)
	for i := range 24 {
		newOther(fmt.Sprintf("batch-%02d", i), start, 10*time.Minute)
	}
	for i := range 12 {
		newOther(fmt.Sprintf("staggered-%02d", i), start.Add(time.Duration(i+1)*11*time.Minute), 10*time.Minute)
	}
	for i := range 2 {
		newOther(fmt.Sprintf("keeper-%d", i), end, 55*time.Minute)
	}
	opts := ledger.Options{Actor: "under-test", RetireAfter: retireAfter, Clock: clock}
	if variant != nil {
		variant(&opts, clock)
	}
	cur, err := ledger.New(st, "acct", opts)
	if err != nil {
		t.Fatal(err)
	}
	for ; now.Before(end); now = now.Add(gap) {
		for _, o := range others {
			if !now.After(o.stop) && !now.Before(o.next) {
				credit(o.l)
				o.next = now.Add(o.every)
				if o.stop != end {
					run.stopped[o.l.Writer()] = now // its latest write so far
				}
			}
		}
		credit(cur)
		run.writes++
		// Which actors are live in the stored state now?
		sibs, _, err := st.Fetch(ctx, "acct")
		if err != nil {
			t.Fatal(err)
		}
		c, err := tpncounter.New(tpncounter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range sibs {
			if err := c.MergeBinary(b); err != nil {
				t.Fatal(err)
			}
		}
		live := map[crdt.ActorID]bool{}
		for a := range c.LiveActors() {
			live[a] = true
		}
		for _, o := range others {
			a := o.l.Writer()
			if _, done := run.retired[a]; !done && !live[a] {
				run.retired[a] = now
			}
		}
	}
	late := retireAfter + retireAfter/ledger.RetirePassDivisor + 3*gap
	var errs []error
	for _, o := range others {
		a := o.l.Writer()
		r, retired := run.retired[a]
		s, stops := run.stopped[a]
		switch {
		case !stops && retired:
			errs = append(errs, fmt.Errorf("%s, which wrote every %v, was retired at %v", a, o.every, r.Sub(start)))
		case stops && !retired:
			errs = append(errs, fmt.Errorf("%s, which stopped at %v, was never retired (run ends at %v)", a, s.Sub(start), end.Sub(start)))
		case stops && r.Sub(s) < retireAfter:
			errs = append(errs, fmt.Errorf("%s, which stopped at %v, was retired early, at %v", a, s.Sub(start), r.Sub(start)))
		case stops && r.Sub(s) > late:
			errs = append(errs, fmt.Errorf("%s, which stopped at %v, was retired at %v: %v after, more than %v", a, s.Sub(start), r.Sub(start), r.Sub(s), late))
		}
	}
	return run, errors.Join(errs...)
}

// TestRetireDelayBound checks the bound of Options.RetireAfter: a ledger
// that writes every minute retires each actor that stopped writing
// between RetireAfter and RetireAfter + RetireAfter/RetirePassDivisor
// (plus the gaps between its writes) after it stopped, 24 that stopped
// together included, and never one that writes within every RetireAfter.
// The check must fail for a ledger that retires late (RetireAfter 75
// minutes against the 1 hour checked) and for one that retires early (45
// minutes).
func TestRetireDelayBound(t *testing.T) {
	run, err := retireDelayCheck(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	var worst time.Duration
	for a, s := range run.stopped {
		worst = max(worst, run.retired[a].Sub(s))
	}
	t.Logf("%d actors stopped, %d retired, the latest %v after it stopped, over %d writes", len(run.stopped), len(run.retired), worst, run.writes)
	if len(run.stopped) != 36 {
		t.Fatalf("%d actors stopped, want 36", len(run.stopped))
	}
	broken := map[string]func(*ledger.Options, func() time.Time){
		"late":  func(o *ledger.Options, _ func() time.Time) { o.RetireAfter = 75 * time.Minute },
		"early": func(o *ledger.Options, _ func() time.Time) { o.RetireAfter = 45 * time.Minute },
	}
	for name, v := range broken {
		t.Run("catches/"+name, func(t *testing.T) {
			if _, err := retireDelayCheck(t, v); err == nil {
				t.Fatalf("the check passed a ledger that retires %s", name)
			} else {
				t.Logf("caught: %v", err)
			}
		})
	}
}

// A full account (MaxActors live entries, every one a restarted process's)
// makes room for a new incarnation at its first credit: the retirement
// pass runs though the credit does not fit, retires the entries idle for
// RetireAfter, and the credit is applied in that write. Before RetireAfter
// the credit is refused (crdt.ErrTooLarge) and nothing is written.
func TestFullAccountMakesRoom(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	opts := ledger.Options{Actor: "svc", Counter: tpncounter.Options{MaxActors: 32}, Clock: func() time.Time { return now }}
	restart := func() *ledger.Ledger {
		l, err := ledger.New(st, "acct", opts)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for i := range 32 { // each process credits once, then crashes
		if _, err := restart().Credit(ctx, crdt.TxnID(fmt.Sprint("old-", i)), 1); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	stored := func() []byte {
		vals, _, err := st.Fetch(ctx, "acct")
		if err != nil || len(vals) != 1 {
			t.Fatalf("%d siblings, %v", len(vals), err)
		}
		return vals[0]
	}
	before := stored()
	now = now.Add(59 * time.Minute) // the newest entry idle for less than RetireAfter
	if _, err := restart().Credit(ctx, "early", 1); !errors.Is(err, crdt.ErrTooLarge) {
		t.Fatalf("credit to a full account before RetireAfter: %v, want ErrTooLarge", err)
	}
	if !bytes.Equal(stored(), before) {
		t.Fatal("a refused credit changed the stored state")
	}
	now = now.Add(time.Minute)
	l := restart()
	r, err := l.Credit(ctx, "late", 1)
	if err != nil || r.Outcome != tpncounter.Applied || r.Value != 33 {
		t.Fatalf("credit after RetireAfter: %+v, %v; want applied, value 33", r, err)
	}
	vals, _, err := st.Fetch(ctx, "acct")
	if err != nil || len(vals) != 1 {
		t.Fatalf("%d siblings, %v", len(vals), err)
	}
	var c tpncounter.Counter
	if err := c.UnmarshalBinary(vals[0]); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Actors != 32-16+1 || s.Retired != 16 {
		t.Fatalf("the credit's write: %+v, want 16 retired (a pass's most) and 17 live", s)
	}
}
