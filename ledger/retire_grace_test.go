package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// restartRun is what restarts of one account left after each restart:
// the entries (live and retired) and the encoded size of the stored state.
type restartRun struct {
	entries, size []int
	err           error // the first credit that failed
	value         int64
}

// restarts makes n process restarts of one account: each a new Ledger
// on the memory store whose clock is step later than the previous one's,
// making one credit.
func restarts(t *testing.T, n int, step time.Duration, grace time.Duration) restartRun {
	t.Helper()
	ctx := context.Background()
	st := memory.NewSiblings()
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var run restartRun
	for i := 0; i < n; i++ {
		l, err := ledger.New(st, "acct", ledger.Options{Actor: "svc", Clock: clock, RetiredGrace: grace, Backoff: ledger.Backoff{Initial: -1}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprint("t", i)), 1); err != nil {
			run.err = fmt.Errorf("restart %d: %w", i, err)
			return run
		}
		if i%10000 == 9999 {
			t.Logf("restart %d", i+1)
		}
		sibs, _, err := st.Fetch(ctx, "acct")
		if err != nil || len(sibs) != 1 {
			t.Fatalf("restart %d: %d siblings, %v", i, len(sibs), err)
		}
		c, err := tpncounter.New(tpncounter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.UnmarshalBinary(sibs[0]); err != nil {
			t.Fatal(err)
		}
		s := c.Stats()
		run.entries = append(run.entries, s.Actors+s.Retired)
		run.size = append(run.size, len(sibs[0]))
		run.value = c.Value()
		now = now.Add(step)
	}
	return run
}

// check reports whether a run kept the account writable, counted every
// credit once, held at most bound entries after each restart, and ended
// with an encoding at most 2% larger than the largest of its second
// quarter (flat: the state stopped growing once retirements began to
// fold; the slack is for numbers that take more digits).
func (r restartRun) check(n, bound int) error {
	if r.err != nil {
		return r.err
	}
	if r.value != int64(n) {
		return fmt.Errorf("value %d after %d credits", r.value, n)
	}
	for i, e := range r.entries {
		if e > bound {
			return fmt.Errorf("restart %d: %d entries, more than %d (the restarts within RetireAfter + RetiredGrace, and a pass's slack)", i, e, bound)
		}
	}
	q := r.size[n/4 : n/2]
	largest := 0
	for _, s := range q {
		largest = max(largest, s)
	}
	largest += largest / 50
	for i := n / 2; i < n; i++ {
		if r.size[i] > largest {
			return fmt.Errorf("restart %d: encoding of %d bytes, over 2%% larger than any of restarts %d..%d (%d with the slack): not flat", i, r.size[i], n/4, n/2, largest)
		}
	}
	return nil
}

// TestRestartsStayBounded: process restarts of one account, each a new
// incarnation making one credit, leave it writable, every credit counted
// once, at most the entries of the restarts within RetireAfter +
// RetiredGrace, and an encoding that stops growing, by default. The same
// restarts without folding (RetiredGrace < 0; the first bound + 100 of
// them) fail the check: their retired entries pile up (and, past 65,536,
// would make the account refuse writes). At CI size, 1,500 restarts 1/100
// of RetireAfter + RetiredGrace apart; with COUNTERKIT_CASES set, 100,000
// restarts 1/1000 of it apart (about 6 minutes here; a minute apart, with
// 14,460 restarts within the window, each restart reads and writes about
// 400 KB, flat, and the run did not finish within 40 minutes on a shared
// 2-core machine).
func TestRestartsStayBounded(t *testing.T) {
	testsize.SkipSequential(t)
	n := 1500
	window := ledger.DefaultRetireAfter + ledger.DefaultRetiredGrace
	step := window / 100
	if os.Getenv("COUNTERKIT_CASES") != "" {
		// A restart every 14.5 minutes: 1,000 restarts within RetireAfter +
		// RetiredGrace, so 100,000 restarts fold about 100 times over.
		n, step = 100_000, window/1000
	}
	// Live: the restarts within RetireAfter plus a pass; retired: those
	// within RetiredGrace; plus what one write may leave unretired.
	bound := int(window/step) + 2 + ledger.MaxRetirePerWrite
	t.Logf("%d restarts %v apart, at most %d entries", n, step, bound)

	run := restarts(t, n, step, 0)
	if err := run.check(n, bound); err != nil {
		t.Fatal(err)
	}
	t.Logf("with folding: %d entries and %d bytes after the last restart (largest %d entries)", run.entries[n-1], run.size[n-1], maxOf(run.entries))

	m := min(n, bound+100) // enough to pass the bound, without the quadratic cost of all n
	off := restarts(t, m, step, -1)
	err := off.check(m, bound)
	if err == nil {
		t.Fatal("without folding the check passed: it cannot tell entries piling up")
	}
	t.Logf("without folding, as expected: %v", err)
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// TestStaleIncarnationWritesAsNew: a ledger whose entry last changed more
// than RetireAfter + RetiredGrace/2 ago (its clock) writes as a new
// incarnation; within that time it continues its own. The new one's first
// write retires the old, which its records date as idle that long.
func TestStaleIncarnationWritesAsNew(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	opts := ledger.Options{Actor: "svc", Clock: func() time.Time { return now }}
	l, err := ledger.New(st, "acct", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Credit(ctx, "t1", 1); err != nil {
		t.Fatal(err)
	}
	first := l.Writer()
	limit := ledger.DefaultRetireAfter + ledger.DefaultRetiredGrace/2
	now = now.Add(limit)
	if _, err := l.Credit(ctx, "t2", 1); err != nil {
		t.Fatal(err)
	}
	if l.Writer() != first {
		t.Fatalf("at exactly RetireAfter + RetiredGrace/2 the ledger took a new incarnation")
	}
	now = now.Add(limit + time.Second) // from t2's write
	if _, err := l.Credit(ctx, "t3", 1); err != nil {
		t.Fatal(err)
	}
	if l.Writer() == first {
		t.Fatalf("past RetireAfter + RetiredGrace/2 the ledger still writes as %s", first)
	}
	c, err := l.Find(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := c.Positive().Entry(first); e.Seq != 2 || e.Total+int64(len(e.History)) != 2 || !e.Retired {
		t.Fatalf("the stale incarnation's entry took a write, or was not retired: %+v", e)
	}
	if c.Value() != 3 {
		t.Fatalf("value %d, want 3", c.Value())
	}
}

// TestStaleIncarnationNotCountedTwice: ledger a credits and goes quiet;
// ledger b retires a's entry after RetireAfter and folds it RetiredGrace
// later. When a writes again it must neither write under its folded entry
// nor merge its own state from before the fold: either would count a's
// first credit a second time. A ledger a whose grace is far longer than
// b's (so it keeps both) shows what the check catches. The state is
// dropped before the fetch, so a refused fetch does not keep it for the
// next attempt.
func TestStaleIncarnationNotCountedTwice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		grace  time.Duration // a's
		refuse bool          // a's first fetch of its second credit fails
		ok     bool
	}{
		{"the same grace", 0, false, true},
		{"the same grace, a fetch refused", 0, true, true},
		{"a's grace far longer than b's (broken)", 1000 * ledger.DefaultRetiredGrace, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st := memory.NewSiblings()
			now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			ast := &refuseFetches{Siblings: st}
			a, err := ledger.New(ast, "acct", ledger.Options{Actor: "a", Clock: clock, RetiredGrace: tc.grace, Backoff: ledger.Backoff{Initial: -1}})
			if err != nil {
				t.Fatal(err)
			}
			b, err := ledger.New(st, "acct", ledger.Options{Actor: "b", Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			credit := func(l *ledger.Ledger, x crdt.TxnID, n int64) int64 {
				t.Helper()
				r, err := l.Credit(ctx, x, n)
				if err != nil {
					t.Fatal(err)
				}
				return r.Value
			}
			credit(a, "a1", 10)
			credit(b, "b1", 1) // b sees a's entry
			now = now.Add(ledger.DefaultRetireAfter + time.Minute)
			credit(b, "b2", 1) // retires a's entry
			now = now.Add(ledger.DefaultRetiredGrace + time.Minute)
			credit(b, "b3", 1) // folds it
			c, err := b.Find(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if p, _ := c.Bases(); p.Total != 10 {
				t.Fatalf("the test needs a's entry folded: base %+v", p)
			}
			if tc.refuse {
				ast.n = 1
				if _, err := a.Credit(ctx, "a2", 5); !errors.Is(err, crdt.ErrUnavailable) {
					t.Fatalf("a's credit with its fetch refused: %v", err)
				}
			}
			got := credit(a, "a2", 5)
			v, err := b.Value(ctx)
			if err != nil {
				t.Fatal(err)
			}
			const want = 10 + 3 + 5
			if ok := got == want && v == want; ok != tc.ok {
				t.Fatalf("a's write saw %d, b reads %d, want %d (expected to hold: %v)", got, v, want, tc.ok)
			}
		})
	}
}

// TestObserverReportsRetiredAndFolded: the Observer's event of the write
// that retires an idle entry counts it in Retired, and of the write that
// folds it, RetiredGrace later, in Folded.
func TestObserverReportsRetiredAndFolded(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var retired, folded int
	obs := eventFunc(func(e observe.Event) { retired, folded = retired+e.Retired, folded+e.Folded })
	a, err := ledger.New(st, "acct", ledger.Options{Actor: "a", Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ledger.New(st, "acct", ledger.Options{Actor: "b", Clock: clock, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	credit := func(l *ledger.Ledger, txn crdt.TxnID) {
		t.Helper()
		if _, err := l.Credit(ctx, txn, 1); err != nil {
			t.Fatal(err)
		}
	}
	credit(a, "a1")
	credit(b, "b1")
	for i := range 3 { // a stays idle past RetireAfter: b's passes retire it
		now = now.Add(ledger.DefaultRetireAfter)
		credit(b, crdt.TxnID(fmt.Sprint("b-retire-", i)))
	}
	if retired != 1 || folded != 0 {
		t.Fatalf("after a's retirement: retired %d, folded %d; want 1, 0", retired, folded)
	}
	now = now.Add(ledger.DefaultRetiredGrace + time.Hour)
	credit(b, "b-fold")
	// b's entry changed longer ago than RetireAfter + RetiredGrace/2, so
	// b writes as a new incarnation, and retires its old one, dated by
	// its records.
	if retired != 2 || folded != 1 {
		t.Fatalf("after the grace: retired %d, folded %d; want 2, 1", retired, folded)
	}
}

type eventFunc func(observe.Event)

func (f eventFunc) Observe(_ context.Context, e observe.Event) { f(e) }

// refuseFetches refuses the next n fetches (crdt.ErrUnavailable).
type refuseFetches struct {
	store.Siblings
	n int
}

func (r *refuseFetches) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if r.n > 0 {
		r.n--
		return nil, nil, fmt.Errorf("refused: %w", crdt.ErrUnavailable)
	}
	return r.Siblings.Fetch(ctx, key)
}

// A ledger whose write was in doubt and which then stays idle past the
// grace period forgets that write instead of sending it again: a's credit
// of 10 lands with its answer lost and its retry's read refused; b retires
// a's entry (after RetireAfter) and folds it into the base (RetiredGrace
// later); a's next operation, eleven days on, takes a new incarnation and
// writes its own credit alone. Sending its old state again would make a's
// folded entry live beside the base and count a's 1010 twice.
func TestWriteInDoubtForgottenPastTheGrace(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	open := func(actor crdt.ActorID) *ledger.Ledger {
		l, err := ledger.New(fs, "k", ledger.Options{Actor: actor, Clock: clock.Now, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}})
		require.NoError(t, err)
		return l
	}
	a, b := open("a"), open("b")
	_, err := a.Credit(ctx, "a1", 1000)
	require.NoError(t, err)
	fs.SetPolicy(faulty.Keys(faulty.Script(faulty.Pass, faulty.LoseAck, faulty.Refuse), func(k string) bool { return k == "k" }))
	_, err = a.Credit(ctx, "a2", 10)
	fs.SetPolicy(nil)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, a.Pending())
	for _, at := range []time.Duration{0, 2 * time.Hour, 10*24*time.Hour + 3*time.Hour} {
		clock.Set(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Add(at))
		_, err := b.Credit(ctx, crdt.TxnID(fmt.Sprint("b", at)), 1)
		require.NoError(t, err)
	}
	clock.Set(time.Date(2030, 1, 12, 0, 0, 0, 0, time.UTC))
	w := a.Writer()
	_, err = a.Credit(ctx, "a3", 5)
	require.NoError(t, err)
	require.NotEqual(t, w, a.Writer(), "a new incarnation")
	require.False(t, a.Pending())
	v, err := open("reader").Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1000+10+3+5), v)
}

// A write in doubt that a ledger forgets past RetiredGrace/2 may still land
// within the grace: the ledger takes a new incarnation, whatever the age of
// its entry, so that its next write does not fork that entry. Here the
// write is held in flight and delivered after the next credit, 5 days
// later; writing that credit under the old entry, at the held write's
// version, lost it (1010).
func TestDroppedWriteInDoubtTakesNewIncarnation(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := newFakeClock(t0)
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	open := func(actor crdt.ActorID) *ledger.Ledger {
		l, err := ledger.New(fs, "k", ledger.Options{Actor: actor, Clock: clock.Now, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}})
		require.NoError(t, err)
		return l
	}
	a := open("a")
	_, err := a.Credit(ctx, "a1", 1000)
	require.NoError(t, err)
	clock.Add(time.Minute)
	fs.SetPolicy(faulty.Keys(faulty.Script(faulty.Pass, faulty.Hold, faulty.Refuse), func(k string) bool { return k == "k" }))
	_, err = a.Credit(ctx, "z2", 10) // held in flight
	fs.SetPolicy(nil)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, a.Pending())
	w := a.Writer()

	clock.Add(5*24*time.Hour + time.Minute) // past RetiredGrace/2 since the read, within RetireAfter+RetiredGrace/2 of the write
	res, err := a.Credit(ctx, "a3", 5)
	require.NoError(t, err, "a3 is acknowledged")
	require.Equal(t, tpncounter.Applied, res.Outcome)
	require.NotEqual(t, w, a.Writer(), "a new incarnation")

	clock.Add(time.Minute)
	require.NoError(t, fs.DeliverAll()) // the write in doubt lands, well within the grace

	v, err := open("reader").Value(ctx)
	require.NoError(t, err)
	// Acknowledged: a1 1000, a3 5. In doubt: z2 10 (may count or not).
	require.Contains(t, []int64{1005, 1015}, v, "value %d: an acknowledged credit lost", v)
}

// TestFoldPastInt64: an account whose processes each credit 2^61 and
// debit it back keeps folding its retired incarnations although their
// lifetime credits and debits, the bases' totals, pass int64. Of 12 such
// processes, one every three days (each reads the account again before it
// stops), a reader 30 days after the last finds 11 folded (bases of 11 ×
// 2^61 each); the last, retired by the reader's first visit (its records
// date it), is folded RetiredGrace (10 days) later: bases of 12 × 2^61 = 3 × 2^63,
// balance 0 throughout. Fold used to stop at the base that would pass
// int64, so 8 retired entries stayed for ever, and every later process
// added one.
func TestFoldPastInt64(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	const amount = int64(1) << 61
	for i := range 12 {
		l, err := ledger.New(st, advKey, ledger.Options{Actor: "svc", Clock: clock})
		require.NoError(t, err)
		_, err = l.Credit(ctx, crdt.TxnID(fmt.Sprint("in-", i)), amount)
		require.NoError(t, err, "process %d", i)
		_, err = l.Debit(ctx, crdt.TxnID(fmt.Sprint("out-", i)), amount)
		require.NoError(t, err, "process %d", i)
		now = now.Add(3 * 24 * time.Hour)
		c, err := l.Find(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(0), c.Value())
		require.LessOrEqual(t, c.Stats().Retired, 4, "process %d: only the last 10 days' incarnations stay retired", i)
	}
	reader, err := ledger.New(st, advKey, ledger.Options{Actor: "reader", Clock: clock})
	require.NoError(t, err)
	for _, visit := range []struct {
		after         time.Duration
		live, retired int
		folded        int64 // processes in each base
	}{
		{30 * 24 * time.Hour, 0, 1, 11}, // the reader retires the last
		{24 * time.Hour, 0, 1, 11},
		{10 * 24 * time.Hour, 0, 0, 12},
	} {
		now = now.Add(visit.after)
		_, err := reader.Find(ctx)
		require.NoError(t, err)
		c := stored(t, st)
		s := c.Stats()
		require.Equal(t, [2]int{visit.live, visit.retired}, [2]int{s.Actors, s.Retired}, "live and retired entries")
		require.Equal(t, int64(0), c.Value())
		want := new(big.Int).Mul(big.NewInt(visit.folded), big.NewInt(amount))
		p, n := c.Bases()
		require.Equal(t, want, p.BigTotal())
		require.Equal(t, want, n.BigTotal())
		require.Equal(t, int64(math.MaxInt64), p.Total, "clamped")
	}
}
