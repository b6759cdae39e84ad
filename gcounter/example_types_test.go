package gcounter_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
)

// A worker that counts on behalf of its own actor keeps one Handle. Add
// checks amounts like Increment: a refused Add changes nothing.
func ExampleHandle() {
	c := gcounter.New()
	h := c.Handle("worker-7")
	for _, n := range []int64{10, 5} {
		_ = h.Add(n)
	}
	err := h.Add(-1)
	fmt.Println(errors.Is(err, crdt.ErrInvalidAmount))
	err = h.Add(math.MaxInt64)
	fmt.Println(errors.Is(err, crdt.ErrOverflow))
	fmt.Println(h.Actor(), c.Get(h.Actor()), c.Value())
	// Output:
	// true
	// true
	// worker-7 15 15
}
