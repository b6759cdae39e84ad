package ledger_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/obstest"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// obsNoWait turns the backoff off so that retries are immediate.
var obsNoWait = ledger.Backoff{Initial: -1}

// obsLedger returns a ledger of key "acct" whose store, inner wrapped with
// observe.Siblings, and whose Options.Observer both report to tr.
func obsLedger(t *testing.T, inner store.Siblings, tr *obstest.Tracker, o ledger.Options) *ledger.Ledger {
	t.Helper()
	o.Actor, o.Observer, o.Backoff = "a", tr, obsNoWait
	l, err := ledger.New(observe.Siblings(inner, tr), "acct", o)
	require.NoError(t, err)
	return l
}

// The outcomes of Update's main paths, one event each, with the attempts
// and ambiguous and refused counts observe.Event documents, every store
// call nested in the update and every operation ended once.
func TestObserverUpdateOutcomes(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	l := obsLedger(t, fs, tr, ledger.Options{RetryCount: 2})

	check := func(name string, call func() error, outcome string, attempts, ambiguous, refused int) {
		t.Helper()
		tr.Reset()
		err := call()
		evs := tr.Events("ledger")
		require.Len(t, evs, 1, name)
		e := evs[0]
		require.Equal(t, outcome, e.Outcome, "%s: %v", name, err)
		require.Equal(t, err, e.Err, name)
		require.Equal(t, attempts, e.Attempts, name)
		require.Equal(t, ambiguous, e.Ambiguous, name)
		require.Equal(t, refused, e.Refused, name)
		require.Empty(t, tr.Problems(), name)
	}
	upd := func(txn crdt.TxnID, amount int64) func() error {
		return func() error { _, err := l.Update(ctx, txn, amount); return err }
	}
	check("applied", upd("t1", 5), observe.Applied, 1, 0, 0)
	check("duplicate", upd("t1", 5), observe.Duplicate, 1, 0, 0)
	check("conflicting", upd("t1", 6), observe.Invalid, 1, 0, 0)

	fs.SetPolicy(faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodPut))
	check("lost ack, then landed", upd("t2", 1), observe.Applied, 2, 1, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodPut))
	check("refused, then landed", upd("t3", 1), observe.Applied, 2, 0, 1)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Lose, faulty.Lose, faulty.Lose), faulty.MethodPut))
	check("every put lost", upd("t4", 1), observe.Ambiguous, 3, 3, 0)
	fs.SetPolicy(faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse, faulty.Refuse), faulty.MethodPut))
	check("every put refused", upd("t5", 1), observe.Unavailable, 3, 0, 3)
	fs.SetPolicy(nil)
	check("find lands what is pending", func() error { _, err := l.Find(ctx); return err }, observe.OK, 1, 0, 0)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	check("canceled", func() error { _, err := l.Update(canceled, "t6", 1); return err }, observe.Canceled, 1, 0, 0)
	check("canceled read", func() error { _, err := l.Value(canceled); return err }, observe.Canceled, 1, 0, 0)
}

// A refused read is a refused attempt (observe.Event: "Ambiguous and
// Refused count the attempts that ended with crdt.ErrAmbiguousWrite and
// with crdt.ErrUnavailable (a refused read included)"): an Update, a Value
// and a Find whose Fetch the store refuses report Refused 1.
func TestObserverRefusedReadCounted(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Policy: faulty.Only(func(faulty.Call) faulty.Fault { return faulty.Refuse }, faulty.MethodFetch)})
	l := obsLedger(t, fs, tr, ledger.Options{})
	_, err := l.Update(ctx, "t1", 1)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	_, err = l.Value(ctx)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	_, err = l.Find(ctx)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	evs := tr.Events("ledger")
	require.Len(t, evs, 3)
	for _, e := range evs {
		require.Equal(t, observe.Unavailable, e.Outcome, e.Op)
		require.Equal(t, 1, e.Refused, "%s: the refused fetch is not counted", e.Op)
	}
}

// An update refused before it wrote made one attempt
// (observe.Event.Attempts), as a read does.
func TestObserverRefusalMadeOneAttempt(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	l := obsLedger(t, memory.NewSiblings(), tr, ledger.Options{})
	_, err := l.Credit(ctx, "t1", -1)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = l.Update(ctx, "", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	evs := tr.Events("ledger")
	require.Len(t, evs, 2)
	for _, e := range evs {
		require.Equal(t, observe.Invalid, e.Outcome)
		require.Equal(t, 1, e.Attempts, "an update refused before it wrote made one attempt (observe.Event.Attempts)")
	}
}

// A Value that fails with crdt.ErrOverflow (two writers that could not see
// each other each credited math.MaxInt64) reports that error, outcome
// invalid, not ok.
func TestObserverValueOverflowReported(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	obsOverflow(t, st, "acct")
	tr := &obstest.Tracker{}
	l := obsLedger(t, st, tr, ledger.Options{})
	_, err := l.Value(ctx)
	require.ErrorIs(t, err, crdt.ErrOverflow)
	evs := tr.Events("ledger")
	require.Len(t, evs, 1)
	require.Equal(t, observe.Invalid, evs[0].Outcome, "Value failed with %v", err)
	require.ErrorIs(t, evs[0].Err, crdt.ErrOverflow)
}

// obsOverflow stores at key two siblings, each of another writer that
// credited math.MaxInt64 without seeing the other.
func obsOverflow(t *testing.T, st *memory.Siblings, key string) {
	t.Helper()
	ctx := context.Background()
	for _, actor := range []crdt.ActorID{"w1", "w2"} {
		apart := memory.NewSiblings()
		l, err := ledger.New(apart, key, ledger.Options{Actor: actor})
		require.NoError(t, err)
		_, err = l.Credit(ctx, crdt.TxnID("big-"+string(actor)), math.MaxInt64)
		require.NoError(t, err)
		sibs, _, err := apart.Fetch(ctx, key)
		require.NoError(t, err)
		require.Len(t, sibs, 1)
		require.NoError(t, st.Put(ctx, key, actor, sibs[0], nil)) // no token: a sibling
	}
}

// A read refused for its input reports one event, as an update refused
// does (Options.Observer: "one observe.Event per Update, Find, Value and
// HasTransaction"): Ledger.HasTransaction with an invalid id; a Book's
// HasTransaction, Value and Find with an invalid key or id; a Sharded's
// HasTransaction and Find with an invalid id.
func TestObserverInvalidReadReported(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	l := obsLedger(t, memory.NewSiblings(), tr, ledger.Options{})
	b, err := ledger.NewBook(memory.NewSiblings(), ledger.BookOptions{Options: ledger.Options{Actor: "a", Observer: tr}})
	require.NoError(t, err)
	s, err := ledger.NewSharded(memory.NewSiblings(), "acct", 4, ledger.Options{Actor: "a", Observer: tr})
	require.NoError(t, err)
	for _, c := range []struct {
		name, op string
		call     func() error
		want     error
	}{
		{"Ledger.HasTransaction", "read", func() error { _, err := l.HasTransaction(ctx, ""); return err }, crdt.ErrInvalidTxnID},
		{"Book.HasTransaction id", "read", func() error { _, err := b.HasTransaction(ctx, "k", ""); return err }, crdt.ErrInvalidTxnID},
		{"Book.HasTransaction key", "read", func() error { _, err := b.HasTransaction(ctx, "", "t"); return err }, crdt.ErrInvalidKey},
		{"Book.Value", "read", func() error { _, err := b.Value(ctx, "bad\x00key"); return err }, crdt.ErrInvalidKey},
		{"Book.Find", "find", func() error { _, err := b.Find(ctx, ""); return err }, crdt.ErrInvalidKey},
		{"Sharded.HasTransaction", "read", func() error { _, err := s.HasTransaction(ctx, ""); return err }, crdt.ErrInvalidTxnID},
		{"Sharded.Find", "find", func() error { _, err := s.Find(ctx, ""); return err }, crdt.ErrInvalidTxnID},
	} {
		tr.Reset()
		err := c.call()
		require.ErrorIs(t, err, c.want, c.name)
		evs := tr.Events("ledger")
		require.Len(t, evs, 1, "%s reported no event", c.name)
		require.Equal(t, c.op, evs[0].Op, c.name)
		require.Equal(t, observe.Invalid, evs[0].Outcome, c.name)
		require.Equal(t, err, evs[0].Err, c.name)
		require.Equal(t, 1, evs[0].Attempts, c.name)
		require.Empty(t, tr.Problems(), c.name)
	}
}

// A store that panics (the ledger anticipates it: the leader's caller gets
// the panic) does not leave the operation open: an observe.Starter such as
// the OpenTelemetry bridge would leak its span. Update and Find end theirs
// with an error as the panic goes on.
//
// The panicking store is outside observe.Siblings' reach here (faulty's
// hook panics before the wrapped store is called), so only the driver's
// operation is in question.
func TestObserverPanicEndsOperation(t *testing.T) {
	ctx := context.Background()
	for _, method := range []string{faulty.MethodPut, faulty.MethodFetch} {
		t.Run(method, func(t *testing.T) {
			tr := &obstest.Tracker{}
			// faulty is outside the observe wrapper: its hook panics
			// before the wrapped (observed) store is called.
			st := faulty.NewSiblings(observe.Siblings(memory.NewSiblings(), tr), faulty.Options{
				Hook: func(_ context.Context, c faulty.Call, after bool) error {
					if !after && c.Method == method {
						panic("store exploded")
					}
					return nil
				}})
			l, err := ledger.New(st, "acct", ledger.Options{Actor: "a", Observer: tr, Backoff: obsNoWait})
			require.NoError(t, err)
			require.NotNil(t, obstest.Catch(func() { _, _ = l.Update(ctx, "t1", 1) }))
			require.NotNil(t, obstest.Catch(func() { _, _ = l.Find(ctx) }))
			if method == faulty.MethodFetch {
				require.NotNil(t, obstest.Catch(func() { _, _ = l.Value(ctx) }))
				require.NotNil(t, obstest.Catch(func() { _, _ = l.HasTransaction(ctx, "t1") }))
			}
			require.Empty(t, tr.Problems())
			for _, e := range tr.Events("ledger") {
				require.Error(t, e.Err, e.Op)
				require.Equal(t, 1, e.Attempts, e.Op)
			}
		})
	}
}

// Random faults and cancellations: every Update,
// Value, Find and HasTransaction call begins exactly one ledger operation,
// ends it once, and every store call nests in one.
func TestObserverRandomBalanced(t *testing.T) {
	for seed := range int64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			ctx := context.Background()
			tr := &obstest.Tracker{}
			fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: obsRandomFaults(seed)})
			l := obsLedger(t, fs, tr, ledger.Options{RetryCount: 1})
			r := rand.New(rand.NewPCG(uint64(seed), 7))
			calls := 0
			for i := range 40 {
				c := ctx
				if r.IntN(8) == 0 {
					cc, cancel := context.WithCancel(ctx)
					cancel()
					c = cc
				}
				txn := crdt.TxnID(fmt.Sprintf("t%d", r.IntN(10)))
				switch r.IntN(6) {
				case 0:
					_, _ = l.Value(c)
				case 1:
					_, _ = l.Find(c)
				case 2:
					_, _ = l.HasTransaction(c, txn)
				case 3:
					_, _ = l.Credit(c, txn, int64(r.IntN(3)))
				default:
					_, _ = l.Update(c, txn, int64(r.IntN(5)-2))
				}
				calls++
				_ = i
			}
			require.Equal(t, calls, tr.Started("ledger"))
			require.Empty(t, tr.Problems())
		})
	}
}

// A Sharded's layout read (the account's marker: a Fetch, and a Put on
// first use) and its sub-key's calls nest in the one operation of the
// call, so that with the OpenTelemetry bridge they are its children, not
// root spans: Update, Find, HasTransaction, and Value and FindAll, whose
// marker read is in the operation of sub-key 0.
func TestObserverShardedLayoutNested(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	inner := memory.NewSiblings()
	s, err := ledger.NewSharded(observe.Siblings(inner, tr), "acct", 4,
		ledger.Options{Actor: "a", Observer: tr, Backoff: obsNoWait})
	require.NoError(t, err)
	for _, c := range []struct {
		name, op string
		events   int
		call     func() error
	}{
		{"Credit, the marker written", "update", 1, func() error { _, err := s.Credit(ctx, "t1", 1); return err }},
		{"HasTransaction", "read", 1, func() error { _, err := s.HasTransaction(ctx, "t1"); return err }},
		{"Find", "find", 1, func() error { _, err := s.Find(ctx, "t1"); return err }},
		{"Value", "read", 4, func() error { _, err := s.Value(ctx); return err }},
		{"FindAll", "find", 4, func() error { _, err := s.FindAll(ctx); return err }},
	} {
		tr.Reset()
		require.NoError(t, c.call(), c.name)
		require.Empty(t, tr.Problems(), c.name)
		evs := tr.Events("ledger")
		require.Len(t, evs, c.events, c.name)
		for _, e := range evs {
			require.Equal(t, c.op, e.Op, c.name)
		}
		require.NotZero(t, tr.Started("store.siblings"), c.name)
	}

	// Another n is refused after the marker's read: one event per call.
	s2, err := ledger.NewSharded(observe.Siblings(inner, tr), "acct", 2,
		ledger.Options{Actor: "b", Observer: tr, Backoff: obsNoWait})
	require.NoError(t, err)
	for _, call := range []func() error{
		func() error { _, err := s2.Credit(ctx, "t1", 1); return err },
		func() error { _, err := s2.HasTransaction(ctx, "t1"); return err },
		func() error { _, err := s2.Find(ctx, "t1"); return err },
		func() error { _, err := s2.Value(ctx); return err },
		func() error { _, err := s2.FindAll(ctx); return err },
	} {
		tr.Reset()
		err := call()
		require.ErrorIs(t, err, crdt.ErrInvalidConfig)
		require.Empty(t, tr.Problems())
		evs := tr.Events("ledger")
		require.Len(t, evs, 1)
		require.Equal(t, err, evs[0].Err)
		require.Equal(t, observe.Invalid, evs[0].Outcome)
	}
}

// Book and Sharded report one update event per call, with the
// outcome of the call, refusals included.
func TestObserverBookShardedOneEventPerUpdate(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	b, err := ledger.NewBook(memory.NewSiblings(), ledger.BookOptions{Options: ledger.Options{Actor: "a", Observer: tr}})
	require.NoError(t, err)
	s, err := ledger.NewSharded(memory.NewSiblings(), "acct", 4, ledger.Options{Actor: "a", Observer: tr})
	require.NoError(t, err)
	for _, c := range []struct {
		call    func() error
		outcome string
	}{
		{func() error { _, err := b.Credit(ctx, "k", "t1", 1); return err }, observe.Applied},
		{func() error { _, err := b.Credit(ctx, "k", "t1", 1); return err }, observe.Duplicate},
		{func() error { _, err := b.Credit(ctx, "k", "t1", 0); return err }, observe.Invalid},
		{func() error { _, err := b.Update(ctx, "", "t1", 1); return err }, observe.Invalid},
		{func() error { _, err := s.Credit(ctx, "t1", 1); return err }, observe.Applied},
		{func() error { _, err := s.Credit(ctx, "t1", 1); return err }, observe.Duplicate},
		{func() error { _, err := s.Debit(ctx, "t2", -1); return err }, observe.Invalid},
		{func() error { _, err := s.Update(ctx, "t3", math.MinInt64); return err }, observe.Invalid},
	} {
		tr.Reset()
		err := c.call()
		evs := tr.Events("ledger")
		require.Len(t, evs, 1)
		require.Equal(t, c.outcome, evs[0].Outcome, "%v", err)
		require.Equal(t, err, evs[0].Err)
	}
}

// obsRandomFaults draws, from a source seeded with seed, a fault for each
// call: any fault, reads refused and unclassified errors included.
func obsRandomFaults(seed int64) faulty.Policy {
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	faults := []faulty.Fault{faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Stale, faulty.Unclassified}
	return func(faulty.Call) faulty.Fault {
		if r.IntN(3) > 0 {
			return faulty.Pass
		}
		return faults[r.IntN(len(faults))]
	}
}

// Concurrent Updates sharing group-commit cycles, some with
// contexts already done or ending while queued, under store faults:
// each call begins exactly one ledger operation, each operation ends
// once, and every store call nests in one (the cycle's calls run in the
// leader's operation's context).
func TestObserverGroupCommitBalanced(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Policy: faulty.Seeded(5, faulty.Rates{Refuse: 0.1, LoseAck: 0.1, Lose: 0.05})})
	l := obsLedger(t, fs, tr, ledger.Options{MaxGroup: 4})
	const goroutines, each = 8, 15
	done := make(chan struct{})
	for g := range goroutines {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				c, cancel := context.WithCancel(ctx)
				if (g+i)%5 == 0 {
					cancel()
				}
				_, _ = l.Update(c, crdt.TxnID(fmt.Sprintf("g%d-%d", g, i%6)), 1)
				cancel()
			}
		}()
	}
	for range goroutines {
		<-done
	}
	require.Equal(t, goroutines*each, tr.Started("ledger"))
	require.Empty(t, tr.Problems())
}

// A read's event carries the size of the state it read (observe.Event
// Bytes: "the size of the state written or read"), as its store call's
// does; a write's, the size it wrote. Found by a review from the docs:
// Value and HasTransaction reported 0.
func TestObserverReadReportsSize(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	mem := memory.NewSiblings()
	l := obsLedger(t, mem, tr, ledger.Options{})
	_, err := l.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	sibs, _, err := mem.Fetch(ctx, "acct")
	require.NoError(t, err)
	require.Len(t, sibs, 1)
	for name, read := range map[string]func() error{
		"value":          func() error { _, err := l.Value(ctx); return err },
		"hasTransaction": func() error { _, err := l.HasTransaction(ctx, "t1"); return err },
	} {
		tr.Reset()
		require.NoError(t, read(), name)
		evs := tr.Events("ledger")
		require.Len(t, evs, 1, name)
		require.Equal(t, len(sibs[0]), evs[0].Bytes, "%s: the state read", name)
	}
}

// A call whose key's Put landed and whose record's Put then failed ends
// with that failure, and counts it as its last attempt's (observe.Event:
// Ambiguous and Refused count the attempts that ended so): a record Put
// lost is ambiguous, one refused (every resend too) refused. Before, both
// calls reported 0, and an operator counting ambiguous or refused writes
// missed them (review of stop 101).
func TestObserverRecordWriteFailuresCounted(t *testing.T) {
	ctx := context.Background()
	tr := &obstest.Tracker{}
	fault := faulty.Pass
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: func(c faulty.Call) faulty.Fault {
		if c.Method == faulty.MethodPut && ledger.IsRecordKey(c.Key) {
			return fault
		}
		return faulty.Pass
	}})
	l := obsLedger(t, fs, tr, ledger.Options{RetryCount: 1})
	for _, tc := range []struct {
		fault              faulty.Fault
		sentinel           error
		ambiguous, refused int
	}{
		{faulty.Lose, crdt.ErrAmbiguousWrite, 1, 0},
		{faulty.Refuse, crdt.ErrUnavailable, 0, 1},
	} {
		tr.Reset()
		fault = tc.fault
		_, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("t-%v", tc.fault)), 10)
		require.ErrorIs(t, err, tc.sentinel)
		evs := tr.Events("ledger")
		require.Len(t, evs, 1)
		require.Equal(t, 1, evs[0].Attempts, "the key's Put landed at once")
		require.Equal(t, tc.ambiguous, evs[0].Ambiguous, "%v: %v", tc.fault, err)
		require.Equal(t, tc.refused, evs[0].Refused, "%v: %v", tc.fault, err)
	}
}
