//go:build go1.25

package ledger_test

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// inBubble runs f in a synctest bubble, as inTurns needs: time there is
// fake, so a call that hangs ends at its context's deadline at once.
func inBubble(t *testing.T, f func(t *testing.T)) {
	synctest.Test(t, f)
}

// inTurns runs fs at once, one store call at a time: fs[i] makes its
// calls through lanes[i], and each call waits until every goroutine of the
// bubble is blocked; then intn draws the call that goes on from those
// waiting, sorted by lane, method and key. A ledger's own concurrent
// record calls wait too. So a seed replays the interleaving exactly, and
// any interleaving of the store calls can be drawn. It runs in inBubble.
func inTurns(intn func(int) int, lanes []*lane, fs []func()) {
	var mu sync.Mutex
	parked := map[string]chan struct{}{}
	for i, ln := range lanes {
		ln.mu.Lock()
		ln.before = func(method, key string) {
			goOn := make(chan struct{})
			mu.Lock()
			id := fmt.Sprintf("%d %s %s", i, method, key)
			for n := 2; parked[id] != nil; n++ {
				id = fmt.Sprintf("%d %s %s #%d", i, method, key, n)
			}
			parked[id] = goOn
			mu.Unlock()
			<-goOn
		}
		ln.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for idle := time.Duration(0); ; {
		synctest.Wait()
		mu.Lock()
		ids := slices.Sorted(maps.Keys(parked))
		if len(ids) > 0 {
			id := ids[intn(len(ids))]
			close(parked[id])
			delete(parked, id)
		}
		mu.Unlock()
		if len(ids) > 0 {
			idle = 0
			continue
		}
		// Nothing waits at a store call: every call has returned, or one
		// waits on its context's deadline, which fake time reaches. A call
		// blocked on anything else would keep fake time going for good.
		select {
		case <-done:
			for _, ln := range lanes {
				ln.mu.Lock()
				ln.before = nil
				ln.mu.Unlock()
			}
			return
		case <-time.After(time.Second):
			if idle += time.Second; idle == maxTurnsIdle {
				panic(fmt.Sprintf("inTurns: no store call and no return in %v of fake time: a call is blocked for good", idle))
			}
		}
	}
}

// maxTurnsIdle bounds the fake time inTurns waits with no store call
// waiting: many times a call's context deadline (settleCallTimeout).
const maxTurnsIdle = 10 * time.Minute
