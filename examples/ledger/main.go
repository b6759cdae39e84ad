// Command ledger is counterkit's main runnable example: several concurrent
// actors credit and debit three accounts kept in the durable embedded store
// (adapters/embedded), while a fault wrapper makes the store lose
// acknowledgements of writes that landed, refuse writes and serve stale
// reads, and the application delivers some transactions twice, to two
// different actors at once. Every transaction is retried until it is known
// to have landed. At the end the program checks each balance against the
// balance it started from plus the sum of this run's distinct transactions,
// and exits non-zero if any differs.
//
// The balances live in a data directory: a new temporary one by default, or
// the one -data names, so a second run with the same -data continues where
// the first stopped.
//
//	go -C examples/ledger run . -data /tmp/counterkit-demo
//	go -C examples/ledger run . -data /tmp/counterkit-demo -seed 7 -txns 2000 -actors 8
//	go -C examples/ledger run . -memory   # the in-memory store instead
package main

import (
	"context"
	crand "crypto/rand"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

type txn struct {
	id      crdt.TxnID
	account string
	amount  int64 // signed: credit > 0, debit < 0
}

type stats struct {
	submitted, applied, duplicates, retries, ambiguous atomic.Int64

	mu sync.Mutex
	// appliedBy lists, per transaction, the actors that were told Applied:
	// two when it was delivered to two actors that did not see each other.
	appliedBy map[crdt.TxnID][]crdt.ActorID
}

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	seed := flag.Int64("seed", 1, "seed for the workload and the injected faults")
	nTxns := flag.Int("txns", 600, "number of distinct transactions")
	nActors := flag.Int("actors", 5, "number of concurrent actors")
	dupRate := flag.Float64("dup", 0.3, "fraction of transactions delivered to two actors at once")
	data := flag.String("data", "", "data directory of the embedded store (default: a new temporary directory)")
	inMemory := flag.Bool("memory", false, "use the in-memory store instead of the embedded one")
	flag.Parse()
	if *inMemory {
		fmt.Println("store: in memory")
		_, err := run(memory.NewSiblings(), *seed, *nTxns, *nActors, *dupRate)
		return err
	}
	dir := *data
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "counterkit-ledger-"); err != nil {
			return err
		}
	}
	db, err := embedded.Open(dir, embedded.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Printf("store: embedded, data directory %s\n", dir)
	if _, err := run(db.Siblings(), *seed, *nTxns, *nActors, *dupRate); err != nil {
		return err
	}
	fmt.Printf("run again with -data %s to continue from these balances\n", dir)
	return nil
}

// run plays the workload on inner and checks every balance.
func run(inner store.Siblings, seed int64, nTxns, nActors int, dupRate float64) (map[string]int64, error) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	accounts := []string{"alice", "bob", "carol"}

	// Where the balances start: empty in a new store, the last run's in a
	// store that already holds some.
	before := map[string]int64{}
	for _, acct := range accounts {
		reader, err := ledger.New(inner, "account/"+acct, ledger.Options{Actor: "auditor"})
		if err != nil {
			return nil, err
		}
		if before[acct], err = reader.Value(ctx); err != nil {
			return nil, fmt.Errorf("read %s: %w", acct, err)
		}
	}
	// Transaction ids are unique to this run, so a second run adds to the
	// balances instead of repeating the first run's transactions.
	var runID [4]byte
	_, _ = crand.Read(runID[:])

	// The workload and its expected balances: each distinct transaction once.
	txns := make([]txn, nTxns)
	want := map[string]int64{}
	for i := range txns {
		amount := int64(rng.Intn(100) + 1)
		if rng.Intn(3) == 0 {
			amount = -amount
		}
		t := txn{id: crdt.TxnID(fmt.Sprintf("run-%x-txn-%05d", runID, i)), account: accounts[rng.Intn(len(accounts))], amount: amount}
		txns[i] = t
		want[t.account] += t.amount
	}

	// Deliveries: a dispatcher hands each transaction to one actor; some go
	// to two actors at once, as when an application times out on one server
	// and resubmits to another while the first is still working. Channels are
	// unbuffered, so a duplicate reaches its second actor while the first is
	// still on it: well inside the history window (see package tpncounter).
	store := faulty.NewSiblings(inner, faulty.Options{
		Policy:       faulty.Seeded(seed, faulty.Rates{Refuse: 0.05, LoseAck: 0.10, Lose: 0.05, Stale: 0.10, MaxStaleness: 2}),
		RecordWrites: true,
	})

	st := stats{appliedBy: map[crdt.TxnID][]crdt.ActorID{}}
	var wg sync.WaitGroup
	errs := make(chan error, nActors)
	inboxes := make([]chan txn, nActors)
	for a := range inboxes {
		inboxes[a] = make(chan txn)
		wg.Add(1)
		go func(a int) {
			defer wg.Done()
			if err := actor(ctx, store, crdt.ActorID(fmt.Sprintf("server-%d", a)), accounts, inboxes[a], &st); err != nil {
				errs <- err
			}
		}(a)
	}
	deliveries := 0
	for _, t := range txns {
		a := rng.Intn(nActors)
		inboxes[a] <- t
		deliveries++
		if nActors > 1 && rng.Float64() < dupRate {
			b := (a + 1 + rng.Intn(nActors-1)) % nActors
			inboxes[b] <- t
			deliveries++
		}
	}
	for _, in := range inboxes {
		close(in)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return nil, err
	}

	// Settle: one clean reader per account collapses the siblings (Find).
	fmt.Printf("%d transactions, %d deliveries to %d actors\n", nTxns, deliveries, nActors)
	fmt.Printf("absorbed: %d duplicate deliveries, %d retried cycles, %d ambiguous writes re-submitted\n",
		st.duplicates.Load(), st.retries.Load(), st.ambiguous.Load())
	fmt.Printf("injected: %d lost acks (write landed), %d lost writes, %d refused writes\n",
		store.Counts()[faulty.LoseAck], store.Counts()[faulty.Lose], store.Counts()[faulty.Refuse])
	ok := true
	after := map[string]int64{}
	owners, known := 0, 0 // transactions still known, and those whose owner was told Applied
	for _, acct := range accounts {
		reader, err := ledger.New(inner, "account/"+acct, ledger.Options{Actor: "auditor"})
		if err != nil {
			return nil, err
		}
		c, err := reader.Find(ctx)
		if err != nil {
			return nil, fmt.Errorf("find %s: %w", acct, err)
		}
		for x, by := range st.appliedBy {
			if o, ok := c.Owner(x); ok {
				known++
				if slices.Contains(by, o.Actor) {
					owners++
				}
			}
		}
		got := c.Value()
		after[acct] = got
		status := "ok"
		if got != before[acct]+want[acct] {
			status = "WRONG"
			ok = false
		}
		sibs, _, err := inner.Fetch(ctx, "account/"+acct)
		if err != nil {
			return nil, err
		}
		fmt.Printf("%-6s balance %6d = %6d before this run %+6d this run  siblings after find %d  %s\n",
			acct, got, before[acct], want[acct], len(sibs), status)
	}
	fmt.Printf("%d Applied answers for %d distinct transactions: both actors of a concurrent delivery are told Applied;\n"+
		"the owner (Result.Owner, Counter.Owner) names the one whose copy counts: an Applied actor for %d of the %d still known\n",
		st.applied.Load(), nTxns, owners, known)
	if !ok {
		return nil, errors.New("a balance differs from the sum of its distinct transactions")
	}
	fmt.Println("verified: every transaction counted exactly once")
	return after, nil
}

// actor plays one server: one Ledger per account, transactions applied
// serially, each retried until it is known to have landed.
func actor(ctx context.Context, store store.Siblings, id crdt.ActorID, accounts []string, inbox <-chan txn, st *stats) error {
	ledgers := map[string]*ledger.Ledger{}
	for _, acct := range accounts {
		l, err := ledger.New(store, "account/"+acct, ledger.Options{Actor: id, RetryCount: 3})
		if err != nil {
			return err
		}
		ledgers[acct] = l
	}
	for t := range inbox {
		st.submitted.Add(1)
		for {
			res, err := ledgers[t.account].Update(ctx, t.id, t.amount)
			if res.Attempts > 1 {
				st.retries.Add(int64(res.Attempts - 1))
			}
			if err == nil {
				switch res.Outcome {
				case tpncounter.Applied:
					st.applied.Add(1)
					st.mu.Lock()
					st.appliedBy[t.id] = append(st.appliedBy[t.id], ledgers[t.account].Writer())
					st.mu.Unlock()
				case tpncounter.Duplicate, tpncounter.DuplicateFolded:
					st.duplicates.Add(1)
				}
				break
			}
			if errors.Is(err, crdt.ErrAmbiguousWrite) || errors.Is(err, crdt.ErrUnavailable) {
				// Safe to re-submit: the operation is idempotent.
				st.ambiguous.Add(1)
				continue
			}
			return fmt.Errorf("%s: %s %s: %w", id, t.account, t.id, err)
		}
	}
	return nil
}
