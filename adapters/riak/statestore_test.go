package riak_test

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	riakc "github.com/basho/riak-go-client"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/statestore"
)

// randomFaults makes srv fail puts with probability putP and gets with
// probability getP, choosing the fault with a rand seeded by seed (see
// randomFaultFunc). It returns a summary of the faults injected.
func randomFaults(srv *riaktest.FakeServer, seed int64, putP, getP float64) func() string {
	fn, summary := randomFaultFunc(seed, putP, getP)
	srv.SetFaultFunc(fn)
	return summary
}

// randomFaultFunc returns a fault function for riaktest.FakeServer's
// SetFaultFunc or faultProxy's setFaultFunc that fails puts with
// probability putP (with any fault) and gets with probability getP
// (refused, or "timeout" after reading), choosing with a rand seeded by
// seed, and a summary of the faults it chose. It is safe for concurrent
// use.
func randomFaultFunc(seed int64, putP, getP float64) (func(op riaktest.Op, key string) riaktest.Fault, func() string) {
	rng := rand.New(rand.NewSource(seed))
	var mu sync.Mutex
	injected := map[string]int{}
	putFaults := []riaktest.Fault{riaktest.DropResponse, riaktest.CloseAfterApply, riaktest.TimeoutAfterApply, riaktest.Refuse, riaktest.CloseBeforeApply}
	getFaults := []riaktest.Fault{riaktest.Refuse, riaktest.TimeoutAfterApply}
	fn := func(op riaktest.Op, _ string) riaktest.Fault {
		mu.Lock()
		defer mu.Unlock()
		f := riaktest.NoFault
		switch op {
		case riaktest.OpPut:
			if rng.Float64() < putP {
				f = putFaults[rng.Intn(len(putFaults))]
			}
		case riaktest.OpGet:
			if rng.Float64() < getP {
				f = getFaults[rng.Intn(len(getFaults))]
			}
		}
		if f != riaktest.NoFault {
			injected[op.String()+"/"+f.String()]++
		}
		return f
	}
	summary := func() string {
		mu.Lock()
		defer mu.Unlock()
		keys := make([]string, 0, len(injected))
		for k := range injected {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := ""
		for _, k := range keys {
			out += fmt.Sprintf("%s:%d ", k, injected[k])
		}
		return out
	}
	return fn, summary
}

// untilStored repeats op while it fails with an error that says "try
// again" (ambiguous or unavailable), as an application would, for up to a
// minute. Callers run it in worker goroutines: it reports a failure with
// t.Errorf and returns false.
func untilStored(t *testing.T, op func() error) (retries int, ok bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); ; retries++ {
		err := op()
		switch {
		case err == nil:
			return retries, true
		case !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable):
			t.Errorf("not a try-again error: %v", err)
			return retries, false
		case time.Now().After(end):
			t.Errorf("gave up after %d retries: %v", retries, err)
			return retries, false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// loadGCounter returns the merge of every sibling under key.
func loadGCounter(t *testing.T, s *riak.Siblings, key string) *gcounter.Counter {
	t.Helper()
	c, err := statestore.Load[gcounter.Counter](ctx, s, key)
	require.NoError(t, err)
	return c
}

// TestStatestoreUpdateCostsOneFetchOneStore: statestore.Update over
// riak.Siblings is one fetch and one store, and leaves one sibling. The
// adapter stores bytes without decoding them; statestore, on top, refuses
// a sibling that is not a counter and writes nothing over it.
func TestStatestoreUpdateCostsOneFetchOneStore(t *testing.T) {
	srv, cl := fakeCluster(t)
	s := newStore(t, cl, riak.Options{})
	key := uniqueKey("cost")
	for i := 0; i < 5; i++ {
		srv.ResetRequests()
		_, err := statestore.Update(ctx, s, key, "a", func(c *gcounter.Counter) error { return c.Increment("a", 1) })
		require.NoError(t, err)
		require.Equal(t, int64(1), srv.Requests(riaktest.OpGet))
		require.Equal(t, int64(1), srv.Requests(riaktest.OpPut))
		n, _ := srv.Siblings(fakeType, testBucket, key)
		require.Equal(t, 1, n)
	}
	require.Equal(t, int64(5), loadGCounter(t, s, key).Value())

	// Bytes that are no counter encoding are stored as given...
	require.NoError(t, s.Put(ctx, key, "other", []byte{0xc1}, nil))
	sibs, _, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Len(t, sibs, 2)
	require.Contains(t, sibs, []byte{0xc1})
	// ...and the validating client refuses them and writes nothing.
	srv.ResetRequests()
	_, err = statestore.Update(ctx, s, key, "a", func(c *gcounter.Counter) error { return c.Increment("a", 1) })
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	require.Equal(t, int64(0), srv.Requests(riaktest.OpPut))
}

// TestStatestoreConcurrentActors runs several actors, on separate clients,
// each keeping its own G-counter and merging it into the key with
// statestore.Update (merging the same state twice is harmless, so an
// ambiguous write is retried by running the Update again) under random
// injected failures. The merged value must equal the sum of every
// increment, and one quiet update collapses the siblings.
func TestStatestoreConcurrentActors(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	srv, cl0 := fakeCluster(t)
	clusters := []*riakc.Cluster{cl0, newCluster(t, srv.Addr()), newCluster(t, srv.Addr())}
	const actors = 6
	stores := make([]*riak.Siblings, actors)
	for a := range stores {
		stores[a] = newStore(t, clusters[a%len(clusters)], riak.Options{RetryBackoff: 5 * time.Millisecond})
	}
	faults := randomFaults(srv, seed, 0.15, 0.05)

	ops := proptest.Scale(12)
	key := uniqueKey("gc")
	var wg sync.WaitGroup
	totals := make([]int64, actors)
	for a := 0; a < actors; a++ {
		wg.Add(1)
		go func(a int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(a)))
			actor := crdt.ActorID(fmt.Sprintf("actor-%d", a))
			s := stores[a]
			local := gcounter.New()
			for i := 0; i < ops; i++ {
				n := int64(1 + rng.Intn(100))
				if !assertNoError(t, local.Increment(actor, n)) {
					return
				}
				totals[a] += n
				if _, ok := untilStored(t, func() error {
					_, err := statestore.Update(ctx, s, key, actor, func(c *gcounter.Counter) error { return c.Merge(local) })
					return err
				}); !ok {
					return
				}
			}
		}(a)
	}
	wg.Wait()
	srv.SetFaultFunc(nil)

	var want int64
	for _, n := range totals {
		want += n
	}
	s := newStore(t, cl0, riak.Options{})
	require.Equal(t, want, loadGCounter(t, s, key).Value(), "seed %d", seed)

	// A quiet update collapses whatever siblings remain.
	_, err := statestore.Update(ctx, s, key, "reader", func(*gcounter.Counter) error { return nil })
	require.NoError(t, err)
	n, _ := srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 1, n)
	require.Equal(t, want, loadGCounter(t, s, key).Value())
	t.Logf("faults injected: %s", faults())
	t.Logf("sibling counts seen by fetches: %s", histogram(srv.SiblingHistogram()))
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("unexpected error: %v", err)
		return false
	}
	return true
}

func histogram(h map[int]int64) string {
	keys := make([]int, 0, len(h))
	var total int64
	for k, v := range h {
		keys = append(keys, k)
		total += v
	}
	sort.Ints(keys)
	out := ""
	for _, k := range keys {
		out += fmt.Sprintf("%d:%d (%.0f%%) ", k, h[k], 100*float64(h[k])/float64(total))
	}
	return out
}
