// Command ledger is counterkit's main runnable example: concurrent actors
// credit and debit accounts kept in the durable embedded store
// (adapters/embedded) while a fault wrapper loses acknowledgements, refuses
// writes and serves stale reads, and some transactions reach two actors at
// once or come back late (-late). The run checks every balance against the
// sum of this run's distinct transactions, and that no late retry within
// ledger.Options.RetryWindow (SPEC.md 6.11) counted again; it exits
// non-zero otherwise. README.md gives the flags; a second run with the same
// -data continues where the first stopped.
//
//	go -C examples/ledger run . -data /tmp/counterkit-demo
//	go -C examples/ledger run . -memory -accounts 200 -open 16
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
	late    bool  // a delivery after every other transaction's
}

// workload is one run's settings.
type workload struct {
	seed           int64
	txns, actors   int
	dup            float64 // fraction of transactions delivered to two actors at once
	accounts, open int     // open: BookOptions.MaxOpen of each actor's Book
	late           int     // the first late transactions are delivered again after all others
	// backoff spaces an actor's attempts (ledger.Options.Backoff; the
	// zero value is the default). Tests shorten it.
	backoff ledger.Backoff
}

// result is what a run found: the balances after it, and how the late
// deliveries were answered.
type result struct {
	balances map[string]int64
	// lateApplied counts late deliveries answered Applied after a call
	// of their transaction was acknowledged (counted again),
	// lateDuplicate those answered Duplicate or DuplicateFolded, and
	// lateFirst those answered Applied while no call had been: the first
	// delivery was still retrying, and the late one landed it.
	lateApplied, lateDuplicate, lateFirst int64
	// opened and evicted sum the actors' Book statistics.
	opened, evicted uint64
}

type stats struct {
	applied, duplicates, retries, ambiguous atomic.Int64
	lateApplied, lateDuplicate, lateFirst   atomic.Int64

	mu sync.Mutex
	// appliedBy lists, per transaction, the writers (BookResult.Writer)
	// that were told Applied: two when it was delivered to two actors that
	// did not see each other.
	appliedBy map[crdt.TxnID][]crdt.ActorID
	// acked holds the transactions a call acknowledged (no error).
	acked map[crdt.TxnID]bool
	books ledger.BookStats // summed over the actors' Books when they stop
}

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	var w workload
	flag.Int64Var(&w.seed, "seed", 1, "seed for the workload and the injected faults")
	flag.IntVar(&w.txns, "txns", 600, "number of distinct transactions")
	flag.IntVar(&w.actors, "actors", 5, "number of concurrent actors")
	flag.Float64Var(&w.dup, "dup", 0.3, "fraction of transactions delivered to two actors at once")
	flag.IntVar(&w.accounts, "accounts", 3, "number of accounts")
	flag.IntVar(&w.open, "open", 0, "ledgers each actor's Book keeps open (0: ledger.DefaultMaxOpen)")
	flag.IntVar(&w.late, "late", 10, "deliver the first this many transactions again after all others, as late retries")
	data := flag.String("data", "", "data directory of the embedded store (default: a new temporary directory)")
	inMemory := flag.Bool("memory", false, "use the in-memory store instead of the embedded one")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "unexpected arguments: %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if *inMemory {
		fmt.Println("store: in memory")
		_, err := run(memory.NewSiblings(), w)
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
	if _, err := run(db.Siblings(), w); err != nil {
		return err
	}
	fmt.Printf("run again with -data %s to continue from these balances\n", dir)
	return nil
}

// accountNames names n accounts: alice, bob and carol, then acct-0004 on.
// The names depend only on n, so a later run finds the same accounts.
func accountNames(n int) []string {
	names := []string{"alice", "bob", "carol"}
	for i := len(names); i < n; i++ {
		names = append(names, fmt.Sprintf("acct-%04d", i+1))
	}
	return names[:n]
}

// run plays the workload on inner and checks every balance. The result
// is returned also with the error of a check that failed.
func run(inner store.Siblings, w workload) (*result, error) {
	ctx := context.Background()
	if w.txns < 0 || w.actors < 1 || w.accounts < 1 || w.open < 0 || w.late < 0 {
		return nil, fmt.Errorf("need txns >= 0, actors >= 1, accounts >= 1, open >= 0, late >= 0")
	}
	seed, nTxns, nActors, dupRate := w.seed, w.txns, w.actors, w.dup
	rng := rand.New(rand.NewSource(seed))
	accounts := accountNames(w.accounts)

	// The auditor reads and settles every account through a Book of its
	// own, on the store without faults.
	auditor, err := ledger.NewBook(inner, ledger.BookOptions{Options: ledger.Options{Actor: "auditor"}, MaxOpen: w.open})
	if err != nil {
		return nil, err
	}

	// Where the balances start: empty in a new store, the last run's in a
	// store that already holds some.
	before := map[string]int64{}
	for _, acct := range accounts {
		if before[acct], err = auditor.Value(ctx, "account/"+acct); err != nil {
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

	// Deliveries: each transaction goes to one actor, some to two at once
	// (a client that timed out and resubmitted elsewhere; channels are
	// unbuffered, so both work on it together). Then the first w.late are
	// delivered again, after every other: late retries inside the retry
	// window (ledger.Options.RetryWindow), each answered as a duplicate.
	// The ledgers' keys also get stale reads; their records do not: a
	// record read must see every acknowledged write (SPEC.md 6.11).
	counterFaults := faulty.Seeded(seed, faulty.Rates{Refuse: 0.05, LoseAck: 0.10, Lose: 0.05, Stale: 0.10, MaxStaleness: 2})
	recordFaults := faulty.Seeded(seed+1, faulty.Rates{Refuse: 0.05, LoseAck: 0.10, Lose: 0.05})
	store := faulty.NewSiblings(inner, faulty.Options{
		Policy: func(c faulty.Call) faulty.Fault {
			if ledger.IsRecordKey(c.Key) {
				return recordFaults(c)
			}
			return counterFaults(c)
		},
		RecordWrites: true,
	})

	st := stats{appliedBy: map[crdt.TxnID][]crdt.ActorID{}, acked: map[crdt.TxnID]bool{}}
	var wg sync.WaitGroup
	errs := make(chan error, nActors)
	inboxes := make([]chan txn, nActors)
	for a := range inboxes {
		inboxes[a] = make(chan txn)
		wg.Go(func() {
			if err := actor(ctx, store, crdt.ActorID(fmt.Sprintf("server-%d", a)), w, inboxes[a], &st); err != nil {
				errs <- err
			}
		})
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
	for _, t := range txns[:min(w.late, len(txns))] {
		t.late = true
		inboxes[rng.Intn(nActors)] <- t
		deliveries++
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
	res := &result{balances: map[string]int64{}, lateApplied: st.lateApplied.Load(), lateDuplicate: st.lateDuplicate.Load(),
		lateFirst: st.lateFirst.Load(), opened: st.books.Opened, evicted: st.books.Evicted}
	if w.late > 0 {
		first := ""
		if res.lateFirst > 0 {
			first = fmt.Sprintf(", %d landed it (its first delivery still retrying)", res.lateFirst)
		}
		fmt.Printf("late retries, each after all %d transactions: %d answered duplicate, %d applied again%s\n",
			nTxns, res.lateDuplicate, res.lateApplied, first)
	}
	fmt.Printf("absorbed: %d duplicate deliveries, %d retried cycles, %d ambiguous writes re-submitted\n",
		st.duplicates.Load(), st.retries.Load(), st.ambiguous.Load())
	fmt.Printf("injected: %d lost acks (write landed), %d lost writes, %d refused writes\n",
		store.Counts()[faulty.LoseAck], store.Counts()[faulty.Lose], store.Counts()[faulty.Refuse])
	fmt.Printf("%d Books (one per actor, each keeping up to %d ledgers): %d ledgers opened, %d dropped; a re-opened key continues its incarnation unless its first read is stale\n",
		nActors, auditor.MaxOpen(), st.books.Opened, st.books.Evicted)
	after := res.balances
	owners, known := 0, 0 // transactions still known, and those whose owner was told Applied
	wrong, maxEntries := 0, 0
	for _, acct := range accounts {
		c, err := auditor.Find(ctx, "account/"+acct)
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
			wrong++
		}
		entries := c.Stats().Actors
		maxEntries = max(maxEntries, entries)
		sibs, _, err := inner.Fetch(ctx, "account/"+acct)
		if err != nil {
			return nil, err
		}
		if len(accounts) <= 10 || status != "ok" {
			fmt.Printf("%-9s balance %6d = %6d before %+6d this run  actor entries %3d  siblings after find %d  %s\n",
				acct, got, before[acct], want[acct], entries, len(sibs), status)
		}
	}
	if len(accounts) > 10 {
		fmt.Printf("%d accounts: %d ok, %d wrong; at most %d actor entries in one account\n",
			len(accounts), len(accounts)-wrong, wrong, maxEntries)
	}
	fmt.Printf("%d Applied answers for %d distinct transactions: both actors of a concurrent delivery may be told Applied, and it counts once;\n"+
		"the owner of a transaction (Counter.Owner, chosen by actor id, not by who was told Applied) is a writer told Applied (BookResult.Writer) for %d of the %d the counter still holds.\n"+
		"Neither Result.Outcome nor Result.Owner runs a side effect once: use an outbox (package ledger's documentation, \"Side effects\")\n",
		st.applied.Load(), nTxns, owners, known)
	var failed []error
	if wrong > 0 {
		failed = append(failed, errors.New("a balance differs from the sum of its distinct transactions"))
	}
	if res.lateApplied > 0 {
		failed = append(failed, fmt.Errorf("%d late retries inside the retry window were applied again", res.lateApplied))
	}
	if err := errors.Join(failed...); err != nil {
		return res, err
	}
	fmt.Println("verified: every transaction counted exactly once")
	return res, nil
}

// actor plays one server: one Book holds every account, transactions are
// applied serially, each retried until it is known to have landed.
func actor(ctx context.Context, store store.Siblings, id crdt.ActorID, w workload, inbox <-chan txn, st *stats) error {
	book, err := ledger.NewBook(store, ledger.BookOptions{Options: ledger.Options{Actor: id, RetryCount: 3, Backoff: w.backoff}, MaxOpen: w.open})
	if err != nil {
		return err
	}
	defer func() {
		b := book.Stats()
		st.mu.Lock()
		st.books.Opened += b.Opened
		st.books.Evicted += b.Evicted
		st.mu.Unlock()
	}()
	for t := range inbox {
		var applied *ledger.BookResult // the call of this delivery that landed t, if one did
		// A late delivery is a retry of an acknowledged call only when
		// one was acknowledged before it started: the first delivery
		// may still be retrying, and this one then lands t.
		st.mu.Lock()
		retry := st.acked[t.id]
		st.mu.Unlock()
		for {
			res, err := book.Update(ctx, "account/"+t.account, t.id, t.amount)
			if res.Attempts > 1 {
				st.retries.Add(int64(res.Attempts - 1))
			}
			if res.Landed && res.Outcome == tpncounter.Applied && applied == nil {
				// Landed by this call, acknowledged or not (a call whose
				// transaction record is not written yet fails ambiguous):
				// its re-submission then answers duplicate.
				applied = &res
			}
			if err == nil {
				st.mu.Lock()
				st.acked[t.id] = true
				st.mu.Unlock()
				switch {
				case applied != nil:
					st.applied.Add(1)
					switch {
					case t.late && retry:
						st.lateApplied.Add(1)
					case t.late:
						st.lateFirst.Add(1)
					}
					st.mu.Lock()
					st.appliedBy[t.id] = append(st.appliedBy[t.id], applied.Writer)
					st.mu.Unlock()
				case res.Outcome == tpncounter.Duplicate || res.Outcome == tpncounter.DuplicateFolded:
					st.duplicates.Add(1)
					if t.late {
						st.lateDuplicate.Add(1)
					}
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
	// Every transaction was retried until it landed, so no ledger is
	// pending; a server that stops after giving some up lands them here.
	for {
		// A refused write or record put leaves work to land: retry it.
		err := book.LandPending(ctx)
		if !errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, crdt.ErrAmbiguousWrite) {
			return err
		}
	}
}
