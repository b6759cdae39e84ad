package main

// Probes of the promise at the HTTP level, with the service's
// defaults (defaultConfig): concurrent deliveries of one idempotency key
// to two replicas over a store that loses acknowledgements and refuses
// writes, clients retrying every 503; then other orders, a restart of
// both replicas and every request delivered again.

import (
	"fmt"
	"math/rand"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/store/faulty"
)

func TestPromiseHTTPRetriesUnderFaultsAndRestart(t *testing.T) {
	mem := memory.NewSiblings()
	var mu sync.Mutex
	rng := rand.New(rand.NewSource(7))
	policy := func(c faulty.Call) faulty.Fault {
		if c.Method != faulty.MethodPut {
			return faulty.Pass
		}
		mu.Lock()
		defer mu.Unlock()
		switch p := rng.Float64(); {
		case p < 0.2:
			return faulty.LoseAck
		case p < 0.3:
			return faulty.Refuse
		case p < 0.35:
			return faulty.Lose
		}
		return faulty.Pass
	}
	st := faulty.NewSiblings(mem, faulty.Options{Policy: faulty.Policy(policy)})
	const ids, deliveries = 40, 5
	want := int64(ids * (ids + 1) / 2)
	// deliver sends every request (ids × deliveries) at once to the
	// replicas, each client retrying its 503s, and returns the answers.
	deliver := func(svcs []*service) map[string]int {
		answers := map[string]int{}
		var amu sync.Mutex
		var wg sync.WaitGroup
		for i := range ids {
			for d := range deliveries {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h := svcs[(i+d)%len(svcs)]
					for try := 0; ; try++ {
						w, err := tryCredit(h, "hot", fmt.Sprint("order-", i), int64(i+1))
						if err == nil {
							amu.Lock()
							answers[w.Outcome]++
							amu.Unlock()
							return
						}
						if try > 100 {
							t.Errorf("order-%d: %v", i, err)
							return
						}
					}
				}()
			}
		}
		wg.Wait()
		return answers
	}
	first := []*service{newDefaultService(t, st), newDefaultService(t, st)}
	a1 := deliver(first)
	t.Logf("first round: %v; faults %v", a1, st.Counts())
	if a1["applied"]+a1["duplicate"]+a1["duplicate_folded"] != ids*deliveries {
		t.Fatalf("answers %v", a1)
	}
	// Shut down as Serve does: land what is pending, with the store healthy.
	st.SetPolicy(nil)
	for _, s := range first {
		if err := s.book.LandPending(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if got := stored(t, mem, "hot"); got != want {
		t.Fatalf("stored %d, want %d: each order once", got, want)
	}
	// 200 other orders, so that the account's state no longer holds the
	// first 40: their records answer what follows.
	const others = 200
	for i := range others {
		if w, err := tryCredit(first[i%2], "hot", fmt.Sprint("other-", i), 1); err != nil || w.Outcome != "applied" {
			t.Fatalf("other-%d: %+v %v", i, w, err)
		}
	}
	want += others
	// A restart of both replicas, and every request again.
	second := []*service{newDefaultService(t, mem), newDefaultService(t, mem)}
	a2 := deliver(second)
	if a2["duplicate"]+a2["duplicate_folded"] != ids*deliveries {
		t.Fatalf("after a restart: %v, want every answer a duplicate", a2)
	}
	srv := httptest.NewServer(second[0])
	defer srv.Close()
	if got := balance(t, srv.URL, "hot"); got != want {
		t.Fatalf("balance %d, want %d", got, want)
	}
}
