package ledger

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// each runs every index exactly once, the first on the calling goroutine.
func TestEachRunsEveryIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 2, 7} {
		hits := make([]atomic.Int32, n)
		each(n, func(i int) { hits[i].Add(1) })
		for i := range hits {
			require.EqualValues(t, 1, hits[i].Load(), "n=%d index %d", n, i)
		}
	}
}

// A panic of the first call reaches the caller only once the others have
// returned, so that none of them outlives the call that started it.
func TestEachWaitsWhenTheFirstPanics(t *testing.T) {
	var finished atomic.Int32
	started := make(chan struct{})
	func() {
		defer func() { require.Equal(t, "store panicked", recover()) }()
		each(3, func(i int) {
			if i == 0 {
				<-started
				panic("store panicked")
			}
			if i == 1 {
				close(started)
			}
			time.Sleep(50 * time.Millisecond) // still running when the first panics
			finished.Add(1)
		})
	}()
	require.EqualValues(t, 2, finished.Load(), "each returned before its other calls did")
}
