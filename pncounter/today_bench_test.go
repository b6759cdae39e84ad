package pncounter_test

import (
	"fmt"
	"math"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/countertest"
)

// todayPN is pncounter's Increment as it was before Handle and the hash
// table index (commit 66c9162): two countertest.Today counters. It is the
// "today's" of the Handle goal.
type todayPN struct{ p, n countertest.Today }

func (c *todayPN) Increment(actor crdt.ActorID, n int64) error {
	if n < 0 {
		return c.Decrement(actor, negate(n))
	}
	if err := c.p.Increment(actor, n); err != nil {
		return fmt.Errorf("pncounter: P: %w", err)
	}
	return nil
}

func negate(n int64) int64 {
	if n == math.MinInt64 {
		return n
	}
	return -n
}

func (c *todayPN) Decrement(actor crdt.ActorID, n int64) error {
	if n < 0 {
		return fmt.Errorf("pncounter: decrement of %d by %q: %w (must be >= 0; math.MinInt64 cannot be negated)", n, actor, crdt.ErrInvalidAmount)
	}
	if err := c.n.Increment(actor, n); err != nil {
		return fmt.Errorf("pncounter: N: %w", err)
	}
	return nil
}
