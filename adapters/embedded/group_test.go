package embedded

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestGroupHoldTakesItsTurn: group.hold runs after the commit in progress
// and the writes queued before it, and writes queued after it wait until
// it returns. Verify relies on it to check a version no commit overwrites
// however busy the writers are.
func TestGroupHoldTakesItsTurn(t *testing.T) {
	t.Parallel()
	d, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	queued := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(time.Minute); ; {
			d.group.mu.Lock()
			l := len(d.group.queue)
			d.group.mu.Unlock()
			if l == n {
				return
			}
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%d calls queued, want %d (order so far %v)", l, n, order)
			}
			runtime.Gosched()
		}
	}
	write := func(name string, wait chan struct{}, wg *sync.WaitGroup) {
		defer wg.Done()
		err := d.update(func(*wtx) error {
			note(name)
			if wait != nil {
				<-wait
			}
			return nil
		}, 1)
		if err != nil {
			t.Error(err)
		}
	}

	var wg sync.WaitGroup
	release := make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release) // a failed check: let the leader finish
		}
	}()
	wg.Add(1)
	go write("leader", release, &wg)
	for {
		mu.Lock()
		started := len(order) == 1
		mu.Unlock()
		if started {
			break
		}
		runtime.Gosched()
	}
	wg.Add(1)
	go write("before", nil, &wg)
	queued(1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		d.group.hold(func() { note("hold") })
	}()
	queued(2)
	wg.Add(1)
	go write("after", nil, &wg)
	queued(3)
	close(release)
	wg.Wait()

	want := []string{"leader", "before", "hold", "after"}
	if len(order) != len(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
	d.group.mu.Lock()
	defer d.group.mu.Unlock()
	if d.group.leading || len(d.group.queue) != 0 {
		t.Fatalf("after the last turn: leading %v, %d queued", d.group.leading, len(d.group.queue))
	}
}
