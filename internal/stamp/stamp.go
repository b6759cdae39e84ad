// Package stamp hands out the write timestamps (store.Mutation.Timestamp)
// that deltalog and balance put on their mutations.
package stamp

import (
	"sync"
	"time"
)

var (
	mu   sync.Mutex
	last int64
)

// Reserve returns the first of n consecutive write timestamps (n ≥ 1), in
// microseconds: now's Unix microseconds, raised above every timestamp
// Reserve returned before in this process. So the writes of one process are
// ordered as it issued them, even when its clock repeats a reading or steps
// back (or when several fake clocks in one test disagree), as a Cassandra
// client's monotonic timestamp generator orders them; a later write of a
// row replaces an earlier one, and a delete shadows every write of the
// process issued before it.
func Reserve(now time.Time, n int) int64 {
	mu.Lock()
	defer mu.Unlock()
	t := max(now.UnixMicro(), 1, last+1)
	last = t + int64(max(n, 1)) - 1
	return t
}
