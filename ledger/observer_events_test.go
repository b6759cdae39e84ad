package ledger_test

import (
	"context"
	"fmt"
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
