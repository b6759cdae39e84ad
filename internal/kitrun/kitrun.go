// Package kitrun holds what the exported test kits share: running the
// goroutines of a concurrency check and collecting their errors.
package kitrun

import (
	"errors"
	"sync"
)

// Parallel calls fn(0), ..., fn(n-1), each in a goroutine of its own,
// waits for all of them and returns their errors joined (nil if none).
func Parallel(n int, fn func(i int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
