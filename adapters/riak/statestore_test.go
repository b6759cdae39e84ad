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
// again" (ambiguous or unavailable), as an application would.
func untilStored(t *testing.T, op func() error) (retries int) {
	t.Helper()
	for i := 0; ; i++ {
		err := op()
		if err == nil {
			return i
		}
		if !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
			require.NoError(t, err)
		}
		require.Less(t, i, 100, "gave up: %v", err)
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStateStoreSaveCostsOneFetchOneStore(t *testing.T) {
	srv, cl := fakeCluster(t)
	s, err := riak.NewStateStore(ctx, cl, riak.Options{BucketType: fakeType, Bucket: testBucket}, mergeGCounters)
	require.NoError(t, err)
	key := uniqueKey("cost")
	c := gcounter.New()
	for i := 0; i < 5; i++ {
		require.NoError(t, c.Increment("a", 1))
		b, err := c.MarshalBinary()
		require.NoError(t, err)
		srv.ResetRequests()
		require.NoError(t, s.Save(ctx, key, "a", b))
		require.Equal(t, int64(1), srv.Requests(riaktest.OpGet))
		require.Equal(t, int64(1), srv.Requests(riaktest.OpPut))
	}
	states, err := s.Load(ctx, key)
	require.NoError(t, err)
	require.Equal(t, int64(5), valueOf(states))

	// A corrupt state is refused before anything is written.
	srv.ResetRequests()
	require.ErrorIs(t, s.Save(ctx, key, "a", []byte{0xc1}), crdt.ErrCorruptEncoding)
	require.Equal(t, int64(0), srv.Requests(riaktest.OpPut))
	require.ErrorIs(t, s.Save(ctx, key, "", []byte{}), crdt.ErrInvalidActor)
	_, err = riak.NewStateStore(ctx, cl, riak.Options{BucketType: fakeType, Bucket: testBucket}, nil)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
}

// TestStateStoreConcurrentActors runs several actors, on separate clients,
// saving G-counter states under random injected failures; the merged value
// must equal the sum of every increment, and one quiet save collapses the
// siblings.
func TestStateStoreConcurrentActors(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	srv, cl0 := fakeCluster(t)
	clusters := []*riakc.Cluster{cl0, newCluster(t, srv.Addr()), newCluster(t, srv.Addr())}
	const actors = 6
	stores := make([]*riak.StateStore, actors)
	for a := range stores {
		s, err := riak.NewStateStore(ctx, clusters[a%len(clusters)], riak.Options{BucketType: fakeType, Bucket: testBucket, RetryBackoff: 5 * time.Millisecond}, mergeGCounters)
		require.NoError(t, err)
		stores[a] = s
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
			c := gcounter.New()
			for i := 0; i < ops; i++ {
				n := int64(1 + rng.Intn(100))
				if !assertNoError(t, c.Increment(actor, n)) {
					return
				}
				totals[a] += n
				state, err := c.MarshalBinary()
				if !assertNoError(t, err) {
					return
				}
				untilStored(t, func() error { return s.Save(ctx, key, actor, state) })
			}
		}(a)
	}
	wg.Wait()
	srv.SetFaultFunc(nil)

	var want int64
	for _, n := range totals {
		want += n
	}
	s, err := riak.NewStateStore(ctx, cl0, riak.Options{BucketType: fakeType, Bucket: testBucket}, mergeGCounters)
	require.NoError(t, err)
	states, err := s.Load(ctx, key)
	require.NoError(t, err)
	require.Equal(t, want, valueOf(states), "seed %d", seed)

	// A quiet save collapses whatever siblings remain.
	empty, err := gcounter.New().MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, s.Save(ctx, key, "reader", empty))
	n, _ := srv.Siblings(fakeType, testBucket, key)
	require.Equal(t, 1, n)
	states, err = s.Load(ctx, key)
	require.NoError(t, err)
	require.Equal(t, want, valueOf(states))
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
