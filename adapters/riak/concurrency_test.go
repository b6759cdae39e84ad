package riak_test

import (
	"context"
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
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// counterOpts keeps every transaction of the concurrency test inside the
// retry window, so that exactly-once is the property under test.
var counterOpts = tpncounter.Options{HistoryLength: 256}

// readLedger merges every sibling under key (what a fresh reader sees).
func readLedger(t *testing.T, s *riak.Siblings, key string) (*tpncounter.Counter, store.Token) {
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

// observedStore records how many siblings each successful Fetch returned.
type observedStore struct {
	*riak.Siblings
	mu   *sync.Mutex
	hist map[int]int64
}

func (o observedStore) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	sibs, tok, err := o.Siblings.Fetch(ctx, key)
	if err == nil && (len(sibs) > 0 || tok != nil) {
		o.mu.Lock()
		o.hist[len(sibs)]++
		o.mu.Unlock()
	}
	return sibs, tok, err
}

// TestConcurrentLedger: several actors (goroutines on three separate
// clients) credit and debit one key with overlapping transaction ids (the
// same transaction handed to two actors, as an application does after a
// timeout) while puts and gets fail: refused, reset before or after the
// server applied them, answered "timeout" after applying, or never
// answered. Every failed update is retried until it succeeds. The final
// value must be exact and every transaction counted once.
//
// It runs against the test double, whose own fault injection fails the
// requests, and with RIAK_ADDR against a real Riak, through a faultProxy
// that injects the same faults on the wire. The fake-via-proxy subtest
// runs the real-Riak path (faultProxy) against the double, so that CI
// covers it too.
func TestConcurrentLedger(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		tg := b.open(t)
		concurrentLedger(t, tg, tg.srv == nil)
	})
	t.Run("fake-via-proxy", func(t *testing.T) {
		skipDoubleInRealPath(t)
		skipClientRaceOnTheDouble(t)
		concurrentLedger(t, fakeBackend.open(t), true)
	})
}

// skipClientRaceOnTheDouble skips t, a concurrent run through the fault
// proxy against the double, under -race: connections the proxy closes at
// once on one node start two of riak-go-client v1.7.0's health checks
// (Node.doHealthCheck checks, then sets, the state under two locks), and
// one reads the state unlocked as the other sets it
// (ensureHealthCheckCanContinue), a race inside the pinned client that
// failed about one CI run in twenty. The plain pass runs it; so does a
// race pass against a real Riak (RIAK_ADDR).
func skipClientRaceOnTheDouble(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("under -race the pinned riak-go-client races with itself on the proxy's closed connections: the plain pass runs this")
	}
}

// concurrentLedger is TestConcurrentLedger's body for one target; faults
// are injected by a faultProxy if viaProxy is set (always for a real
// Riak), by the double otherwise.
func concurrentLedger(t *testing.T, tg target, viaProxy bool) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))

	// The clients, and where faults are injected.
	addr := tg.addr
	var proxy *faultProxy
	if viaProxy {
		proxy = startFaultProxy(t, tg.addr)
		addr = proxy.addr()
	}
	clusters := []*riakc.Cluster{newCluster(t, addr), newCluster(t, addr), newCluster(t, addr)}

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
			other := (a + 1 + rng.Intn(actors-1)) % actors
			work[other] = append(work[other], all[i])
		}
	}
	var histMu sync.Mutex
	hist := map[int]int64{}
	opts := tg.opts
	opts.RetryBackoff = 5 * time.Millisecond
	stores := make([]*riak.Siblings, actors)
	ledgers := make([]*ledger.Ledger, actors)
	for a := range stores {
		stores[a] = newStore(t, clusters[a%len(clusters)], opts)
		l, err := ledger.New(observedStore{stores[a], &histMu, hist}, key,
			ledger.Options{Actor: crdt.ActorID(fmt.Sprintf("actor-%d", a)), Counter: counterOpts})
		require.NoError(t, err)
		ledgers[a] = l
	}
	faultFn, faults := randomFaultFunc(seed, 0.2, 0.05)
	if proxy != nil {
		proxy.setFaultFunc(faultFn)
	} else {
		tg.srv.SetFaultFunc(faultFn)
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	appRetries := 0
	for a := 0; a < actors; a++ {
		wg.Add(1)
		go func(a int) {
			defer wg.Done()
			for _, tx := range work[a] {
				n, ok := untilStored(t, func() error {
					_, err := ledgers[a].Update(ctx, tx.id, tx.amount)
					return err
				})
				if !ok {
					return
				}
				mu.Lock()
				appRetries += n
				mu.Unlock()
			}
		}(a)
	}
	wg.Wait()
	if proxy != nil {
		proxy.setFaultFunc(nil)
	} else {
		tg.srv.SetFaultFunc(nil)
	}
	t.Logf("faults injected: %s", faults())
	require.Contains(t, faults(), "put/", "no put was faulted")

	c, tok := readLedger(t, stores[0], key)
	require.Equal(t, want, c.Value(), "seed %d", seed)
	for _, tx := range all {
		got, ok := c.Amount(tx.id)
		require.True(t, ok, "transaction %s lost (seed %d)", tx.id, seed)
		require.Equal(t, tx.amount, got)
	}

	// A quiet write collapses the siblings to one, in any bucket type.
	enc, err := c.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, stores[0].Put(ctx, key, "actor-0", enc, tok))
	sibs, _, err := stores[0].Fetch(ctx, key)
	require.NoError(t, err)
	require.Len(t, sibs, 1)

	histMu.Lock()
	maxSibs := 0
	for k := range hist {
		maxSibs = max(maxSibs, k)
	}
	t.Logf("%d transactions, %d submissions, %d application-level retries",
		len(all), func() int {
			s := 0
			for _, w := range work {
				s += len(w)
			}
			return s
		}(), appRetries)
	t.Logf("sibling counts seen by fetches: %s", histogram(hist))
	histMu.Unlock()
	if tg.srv != nil {
		t.Logf("requests: %d puts, %d gets", tg.srv.Requests(riaktest.OpPut), tg.srv.Requests(riaktest.OpGet))
	}

	// With dotted version vectors every put removes what its vclock
	// covers, so a fetch sees at most each actor's latest update, which
	// is at most 1+RetryCount copies (a landed attempt plus its
	// resends). Without them, siblings pile up until a quiet write.
	if !tg.dvv {
		t.Logf("bucket type %q has no dotted version vectors: the sibling counts have no bound to check", tg.opts.BucketType)
		return
	}
	require.LessOrEqual(t, maxSibs, actors*(1+riak.DefaultRetryCount), "sibling count bounded by racing writers")
}

// TestLedgerUpdateCost: without contention a ledger update is exactly
// three fetches and two stores (the account's key, the transaction's
// record, read again before its write, SPEC.md 6.11); a retried
// transaction the key still holds is one fetch and no store.
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
		gets := int64(3) // the key, the record, the record again before its put
		if i == 1 {
			// bob's first write is a retirement pass that first sees
			// alice: it reads the key's stored sightings and her newest
			// transaction's record (which dates her: no sighting is
			// written). alice's next pass is RetireAfter/8 after her
			// first (SPEC.md 6.9).
			gets += 2
		}
		require.Equal(t, gets, srv.Requests(riaktest.OpGet), "update %d", i)
		require.Equal(t, int64(2), srv.Requests(riaktest.OpPut), "update %d", i)
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
	require.Equal(t, int64(3), srv.Requests(riaktest.OpGet), "the key, the record, the record again")
	require.Equal(t, int64(3), srv.Requests(riaktest.OpPut), "the put, its resend, the record")

	// Find collapses the duplicate sibling the resend left.
	n, _ := srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 2, n)
	c, err := bob.Find(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(70), c.Value())
	n, _ = srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 1, n)
}
