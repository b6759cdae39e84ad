package pncounter_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/pncounter"
)

// A till that books sales and returns against its own actor keeps one
// Handle: positive deltas go to P, negative ones to N. A refused Add
// changes nothing.
func ExampleHandle() {
	c := pncounter.New()
	h := c.Handle("till-1")
	for _, delta := range []int64{30, -12, 4} {
		_ = h.Add(delta)
	}
	err := h.Add(math.MaxInt64)
	fmt.Println(errors.Is(err, crdt.ErrOverflow))
	fmt.Println(h.Actor(), c.Get(h.Actor()), c.Positive(), c.Negative())
	// Output:
	// true
	// till-1 22 34 12
}
