package riak_test

import (
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/tpncounter"
)

// counterOpts keeps every transaction of the concurrency test inside the
// retry window, so that exactly-once is the property under test.
var counterOpts = tpncounter.Options{HistoryLength: 256}

// readLedger merges every sibling under key (what a fresh reader sees).
func readLedger(t *testing.T, s *riak.Store, key string) (*tpncounter.Counter, ledger.Token) {
	t.Helper()
	sibs, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	acc, err := tpncounter.New(counterOpts)
	require.NoError(t, err)
	for _, b := range sibs {
		c, err := tpncounter.New(counterOpts)
		require.NoError(t, err)
		require.NoError(t, c.UnmarshalBinary(b))
		require.NoError(t, acc.Merge(c))
	}
	return acc, tok
}

// TestConcurrentLedger: several actors (goroutines on three separate
// clients) credit and debit one key with overlapping transaction ids (the
// same transaction handed to two actors, as an application does after a
// timeout) while the double injects ambiguous failures after writes landed,
// refusals and resets. Every failed update is retried until it succeeds.
// The final value must be exact and every transaction counted once.
func TestConcurrentLedger(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	srv, cl0 := fakeCluster(t)
	clusters := []*riakc.Cluster{cl0, newCluster(t, srv.Addr()), newCluster(t, srv.Addr())}

	const actors = 6
	txns := proptest.Scale(60)
	key := uniqueKey("ledger")

	// Transactions and who submits them: one actor, or two (overlap).
	type txn struct {
		id     crdt.TxnID
		amount int64
	}
	all := make([]txn, txns)
	work := make([][]txn, actors)
	var want int64
	for i := range all {
		amount := int64(1 + rng.Intn(1000))
		if rng.Intn(3) == 0 {
			amount = -amount
		}
		all[i] = txn{crdt.TxnID(fmt.Sprintf("txn-%d", i)), amount}
		want += amount
		a := rng.Intn(actors)
		work[a] = append(work[a], all[i])
		if rng.Intn(3) == 0 { // handed to a second actor too
			b := (a + 1 + rng.Intn(actors-1)) % actors
			work[b] = append(work[b], all[i])
		}
	}
	stores := make([]*riak.Store, actors)
	ledgers := make([]*ledger.Ledger, actors)
	for a := range stores {
		stores[a] = newStore(t, clusters[a%len(clusters)], riak.Options{RetryBackoff: 5 * time.Millisecond})
		l, err := ledger.New(stores[a], key, ledger.Options{Actor: crdt.ActorID(fmt.Sprintf("actor-%d", a)), Counter: counterOpts})
		require.NoError(t, err)
		ledgers[a] = l
	}
	faults := randomFaults(srv, seed, 0.2, 0.05)
	srv.ResetRequests()

	var wg sync.WaitGroup
	var mu sync.Mutex
	appRetries := 0
	for a := 0; a < actors; a++ {
		wg.Add(1)
		go func(a int) {
			defer wg.Done()
			for _, tx := range work[a] {
				n := untilStored(t, func() error {
					_, err := ledgers[a].Update(ctx, tx.id, tx.amount)
					return err
				})
				mu.Lock()
				appRetries += n
				mu.Unlock()
			}
		}(a)
	}
	wg.Wait()
	srv.SetFaultFunc(nil)
	hist := srv.SiblingHistogram()

	c, tok := readLedger(t, stores[0], key)
	require.Equal(t, want, c.Value(), "seed %d", seed)
	for _, tx := range all {
		got, ok := c.Amount(tx.id)
		require.True(t, ok, "transaction %s lost (seed %d)", tx.id, seed)
		require.Equal(t, tx.amount, got)
	}

	// Siblings are bounded: a quiet write collapses them to one.
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, stores[0].Put(ctx, key, "actor-0", b, tok))
	n, _ := srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 1, n)
	maxSibs := 0
	for k := range hist {
		maxSibs = max(maxSibs, k)
	}
	// Every put removes what its vclock covers, so a fetch sees at most
	// each actor's latest update, which is at most 1+RetryCount copies
	// (a landed attempt plus its resends).
	require.LessOrEqual(t, maxSibs, actors*(1+riak.DefaultRetryCount), "sibling count bounded by racing writers")
	t.Logf("%d transactions, %d submissions, %d application-level retries, %d puts, %d gets",
		len(all), func() int {
			s := 0
			for _, w := range work {
				s += len(w)
			}
			return s
		}(), appRetries, srv.Requests(riaktest.OpPut), srv.Requests(riaktest.OpGet))
	t.Logf("faults injected: %s", faults())
	t.Logf("sibling counts seen by fetches: %s", histogram(hist))
}

// TestLedgerUpdateCost: without contention a ledger update is exactly one
// fetch and one store; a retried transaction is one fetch and no store.
func TestLedgerUpdateCost(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	key := uniqueKey("cost")
	alice, err := ledger.New(s, key, ledger.Options{Actor: "alice"})
	require.NoError(t, err)
	bob, err := ledger.New(s, key, ledger.Options{Actor: "bob"})
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		l := alice
		if i%2 == 1 {
			l = bob // alternating actors, still no contention
		}
		srv.ResetRequests()
		res, err := l.Credit(ctx, crdt.TxnID(fmt.Sprintf("txn-%d", i)), 10)
		require.NoError(t, err)
		require.Equal(t, tpncounter.Applied, res.Outcome)
		require.Equal(t, int64(1), srv.Requests(riaktest.OpGet), "update %d", i)
		require.Equal(t, int64(1), srv.Requests(riaktest.OpPut), "update %d", i)
		n, _ := srv.Siblings(fakeType, testBucket, key)
		require.Equal(t, 1, n)
	}
	srv.ResetRequests()
	res, err := bob.Credit(ctx, "txn-0", 10) // alice's transaction, retried by bob
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, res.Outcome)
	require.Equal(t, int64(100), res.Value)
	require.Equal(t, int64(1), srv.Requests(riaktest.OpGet))
	require.Equal(t, int64(0), srv.Requests(riaktest.OpPut))

	// An ambiguous put (applied, response lost) is retried by the store
	// without a second fetch.
	srv.ResetRequests()
	srv.InjectFault(riaktest.OpPut, riaktest.DropResponse, 1)
	res, err = alice.Debit(ctx, "txn-debit", 30)
	require.NoError(t, err)
	require.Equal(t, int64(70), res.Value)
	require.Equal(t, int64(1), srv.Requests(riaktest.OpGet))
	require.Equal(t, int64(2), srv.Requests(riaktest.OpPut))

	// Find collapses the duplicate sibling the resend left.
	n, _ := srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 2, n)
	c, err := bob.Find(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(70), c.Value())
	n, _ = srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 1, n)
}
