package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// callCounter is a store.Siblings that counts the calls made on it and
// the bytes they move. With scan set it also charges every Fetch of a
// transaction record one read per record the store holds, as an index
// that finds a transaction by scanning the account's records would cost:
// a broken variant that shows the cost checks fail when the cost of a
// credit grows with the window.
type callCounter struct {
	store.Siblings
	scan bool

	fetches, puts  atomic.Int64 // calls
	scanned        atomic.Int64 // rows charged by scan
	read, written  atomic.Int64 // bytes fetched, bytes put
	recordFetches  atomic.Int64 // of the calls, those on transaction records
	recordPuts     atomic.Int64
	recordsWritten atomic.Int64 // record keys put with no token (new records)
}

func newCallCounter() *callCounter { return &callCounter{Siblings: memory.NewSiblings()} }

func (s *callCounter) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	vals, token, err := s.Siblings.Fetch(ctx, key)
	s.fetches.Add(1)
	if ledger.IsRecordKey(key) {
		s.recordFetches.Add(1)
		if s.scan {
			s.scanned.Add(s.recordsWritten.Load())
		}
	}
	for _, v := range vals {
		s.read.Add(int64(len(v)))
	}
	return vals, token, err
}

func (s *callCounter) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	s.puts.Add(1)
	s.written.Add(int64(len(value)))
	if ledger.IsRecordKey(key) {
		s.recordPuts.Add(1)
		if token == nil {
			s.recordsWritten.Add(1)
		}
	}
	return s.Siblings.Put(ctx, key, actor, value, token)
}

// cost is what a run of operations cost in store calls and bytes.
type cost struct {
	Fetches, Puts, Scanned    int64
	RecordFetches, RecordPuts int64
	Read, Written             int64
	Ops                       int64
}

// Calls is the store calls, scanned rows included.
func (c cost) Calls() int64 { return c.Fetches + c.Puts + c.Scanned }

func (s *callCounter) snapshot() cost {
	return cost{Fetches: s.fetches.Load(), Puts: s.puts.Load(), Scanned: s.scanned.Load(),
		RecordFetches: s.recordFetches.Load(), RecordPuts: s.recordPuts.Load(),
		Read: s.read.Load(), Written: s.written.Load()}
}

// since is the cost from before to s's counters now, over ops operations.
func (s *callCounter) since(before cost, ops int) cost {
	now := s.snapshot()
	return cost{Fetches: now.Fetches - before.Fetches, Puts: now.Puts - before.Puts, Scanned: now.Scanned - before.Scanned,
		RecordFetches: now.RecordFetches - before.RecordFetches, RecordPuts: now.RecordPuts - before.RecordPuts,
		Read: now.Read - before.Read, Written: now.Written - before.Written, Ops: int64(ops)}
}

func (c cost) String() string {
	n := float64(max(c.Ops, 1))
	return fmt.Sprintf("%.2f calls (%.2f fetches, %.2f puts, %.2f scanned; records: %.2f fetches, %.2f puts), %.1f B written, %.1f B read per op over %d ops",
		float64(c.Calls())/n, float64(c.Fetches)/n, float64(c.Puts)/n, float64(c.Scanned)/n,
		float64(c.RecordFetches)/n, float64(c.RecordPuts)/n, float64(c.Written)/n, float64(c.Read)/n, c.Ops)
}

// encodingSlack is how many more bytes per operation the larger account
// may write: the counter's sequence numbers, total and value are varints,
// a byte or two wider after more credits. Anything that grows with the
// window, the retries or the history is far larger.
const encodingSlack = 16

// flat returns an error unless after costs, per operation, exactly the
// store calls of before and at most encodingSlack more bytes written.
func flat(what string, before, after cost) error {
	if after.Ops != before.Ops {
		return fmt.Errorf("%s: %d ops measured against %d", what, after.Ops, before.Ops)
	}
	if after.Calls() != before.Calls() || after.Puts != before.Puts {
		return fmt.Errorf("%s: store calls grew: %v, then %v", what, before, after)
	}
	if after.Written > before.Written+encodingSlack*before.Ops {
		return fmt.Errorf("%s: bytes written grew: %v, then %v", what, before, after)
	}
	return nil
}

// costDesign is a way of running a ledger whose cost the checks measure:
// the ledger's options, and how a retry is delivered. The real design is
// the default ledger; the others are broken variants whose cost grows,
// which the checks must catch.
type costDesign struct {
	name  string
	opts  ledger.Options
	scan  bool // charge record lookups a scan (callCounter.scan)
	retry func(ctx context.Context, l *ledger.Ledger, txn crdt.TxnID, k int) (ledger.Result, error)
}

// plainRetry delivers a retry as a caller does: the same credit again.
func plainRetry(ctx context.Context, l *ledger.Ledger, txn crdt.TxnID, _ int) (ledger.Result, error) {
	return l.Credit(ctx, txn, 1)
}

var (
	realDesign = costDesign{name: "default ledger", retry: plainRetry}
	// Broken: the window kept by count in the counter's own value (a
	// history long enough for it), which every credit reads and rewrites.
	historyDesign = costDesign{name: "history as window", opts: ledger.Options{Counter: tpncounter.Options{HistoryLength: 256}}, retry: plainRetry}
	// Broken: a transaction found by scanning the account's records.
	scanDesign = costDesign{name: "index by scan", scan: true, retry: plainRetry}
	// Broken: every delivery of a retry is written into the counter (a
	// credit and a debit that cancel), with a history that holds them.
	deliveryLogDesign = costDesign{name: "deliveries in the counter", opts: ledger.Options{Counter: tpncounter.Options{HistoryLength: 256}},
		retry: func(ctx context.Context, l *ledger.Ledger, txn crdt.TxnID, k int) (ledger.Result, error) {
			res, err := l.Credit(ctx, txn, 1)
			if err != nil {
				return res, err
			}
			if _, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("%s#in%d", txn, k)), 1); err != nil {
				return res, err
			}
			_, err = l.Debit(ctx, crdt.TxnID(fmt.Sprintf("%s#out%d", txn, k)), 1)
			return res, err
		}}
)

// windowID is the i-th transaction id of an account's window: fixed width,
// so that every credit writes ids of one length.
func windowID(i int) crdt.TxnID { return crdt.TxnID(fmt.Sprintf("win-%08d", i)) }

// costAccount builds an account "acct" holding n transactions inside the
// retry window and returns its store, ledger and ids. The latest n/50 are
// credited through the ledger (which fills its counter, and any history
// the design keeps there); the others are written as the transaction
// records the ledger writes, by an earlier writer, as a busy account's
// would be.
func costAccount(t testing.TB, d costDesign, n int) (*callCounter, *ledger.Ledger, []crdt.TxnID) {
	t.Helper()
	ctx := context.Background()
	st := newCallCounter()
	opts := d.opts
	opts.Actor = "acct-writer"
	l, err := ledger.New(st, "acct", opts)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]crdt.TxnID, n)
	direct := n - n/50
	now := time.Now()
	for i := range ids {
		ids[i] = windowID(i)
		if i >= direct {
			if _, err := l.Credit(ctx, ids[i], 1); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := ledger.Record{Txn: ids[i], Amount: 1, Writer: "earlier~abcdefgh", At: now, Version: 1}.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, ledger.RecordKey("acct", ids[i]), "earlier~abcdefgh", b, nil); err != nil {
			t.Fatal(err)
		}
	}
	st.scan = d.scan
	return st, l, ids
}

// creditCost credits ops new transactions, after a few unmeasured ones,
// and returns what the measured ones cost. Every id has the width of
// windowID's.
func creditCost(t testing.TB, st *callCounter, l *ledger.Ledger, ops int) cost {
	t.Helper()
	ctx := context.Background()
	const warm = 4
	var before cost
	for i := range warm + ops {
		if i == warm {
			before = st.snapshot()
		}
		res, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("new-%08d", i)), 1)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != tpncounter.Applied {
			t.Fatalf("new transaction %d: %v", i, res.Outcome)
		}
	}
	return st.since(before, ops)
}

// costOps is the number of measured operations.
const costOps = 16

// windowCostCheck returns the cost of a credit on accounts of small and
// large transactions inside the window, under design d, and an error
// unless the two are flat.
func windowCostCheck(t testing.TB, d costDesign, small, large int) error {
	var costs [2]cost
	for i, n := range []int{small, large} {
		st, l, _ := costAccount(t, d, n)
		costs[i] = creditCost(t, st, l, costOps)
		t.Logf("%s, %d ids in the window: credit %v", d.name, n, costs[i])
	}
	return flat(fmt.Sprintf("%s: a credit with %d, then %d ids in the window", d.name, small, large), costs[0], costs[1])
}

// retryCostCheck returns an error unless, under design d, a credit costs
// as much on an account of n transactions after retries retries of them
// as after none, and the last retries cost as much as the first.
func retryCostCheck(t testing.TB, d costDesign, n, retries int) error {
	ctx := context.Background()
	var credits [2]cost
	var first, last cost
	for i, r := range []int{0, retries} {
		st, l, ids := costAccount(t, d, n)
		var before cost
		for k := range r {
			if k == 0 || k == r-costOps {
				before = st.snapshot()
			}
			txn := ids[(k*7919)%n] // spread over the window: records and counter alike
			res, err := d.retry(ctx, l, txn, k)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tpncounter.Duplicate && res.Outcome != tpncounter.DuplicateFolded {
				t.Fatalf("%s: retry %d of %q: %v, want a duplicate", d.name, k, txn, res.Outcome)
			}
			switch k + 1 {
			case costOps:
				first = st.since(before, costOps)
			case r:
				last = st.since(before, costOps)
			}
		}
		credits[i] = creditCost(t, st, l, costOps)
		t.Logf("%s, %d ids, after %d retries: credit %v", d.name, n, r, credits[i])
	}
	t.Logf("%s: first retries %v; last %v", d.name, first, last)
	return errors.Join(
		flat(fmt.Sprintf("%s: a retry, the first %d of %d, then the last", d.name, costOps, retries), first, last),
		flat(fmt.Sprintf("%s: a credit after no retry, then after %d", d.name, retries), credits[0], credits[1]))
}

// TestCreditCostFlat checks that a credit's cost, counted in store calls
// and bytes written, does not grow with the transactions inside the retry
// window (1,000 against 100,000) or with the retries made before (2,000),
// and that a retry's does not grow with them either.
func TestCreditCostFlat(t *testing.T) {
	testsize.SkipSequential(t)
	t.Run("window", func(t *testing.T) {
		if err := windowCostCheck(t, realDesign, 1_000, 100_000); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("retries", func(t *testing.T) {
		if err := retryCostCheck(t, realDesign, 1_000, 2_000); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCreditCostFlatCatchesGrowth runs the checks of TestCreditCostFlat on
// designs whose cost grows, and requires each to fail. The window pair is
// 1,000 against 10,000 (100,000 with COUNTERKIT_CASES set), the retries
// 200 (the check's code is the same as TestCreditCostFlat's).
func TestCreditCostFlatCatchesGrowth(t *testing.T) {
	large := 10_000
	if os.Getenv("COUNTERKIT_CASES") != "" {
		large = 100_000
	}
	for _, d := range []costDesign{historyDesign, scanDesign} {
		t.Run("window/"+d.name, func(t *testing.T) {
			err := windowCostCheck(t, d, 1_000, large)
			if err == nil {
				t.Fatalf("%s: the window check passed a credit whose cost grows with the window", d.name)
			}
			t.Logf("caught: %v", err)
		})
	}
	t.Run("retries/"+deliveryLogDesign.name, func(t *testing.T) {
		err := retryCostCheck(t, deliveryLogDesign, 1_000, 200)
		if err == nil {
			t.Fatal("the retry check passed a credit whose cost grows with the retries")
		}
		t.Logf("caught: %v", err)
	})
}
