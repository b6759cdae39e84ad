package pncounter_test

import (
	"fmt"
	"math"

	"github.com/counterkit/counterkit/crdt"
)

// todayG is gcounter's Increment as it was before Handle and the hash
// table index (commit 66c9162): a Go map from actor to the position of its
// entry; todayPN is pncounter's Increment over two of them, as it was.
// They are the "today's" of the Handle goal.
type todayG struct {
	index   map[crdt.ActorID]int
	entries []struct {
		actor crdt.ActorID
		count int64
	}
	total int64
}

func (c *todayG) Increment(actor crdt.ActorID, n int64) error {
	if n < 0 {
		return fmt.Errorf("gcounter: increment of %d by %q: %w (must be >= 0)", n, actor, crdt.ErrInvalidAmount)
	}
	i, ok := c.index[actor]
	if !ok {
		if err := actor.Validate(); err != nil {
			return fmt.Errorf("gcounter: increment: %w", err)
		}
	}
	if c.total > math.MaxInt64-n {
		return fmt.Errorf("gcounter: increment of %d by %q: %w (total %d)", n, actor, crdt.ErrOverflow, c.total)
	}
	if n == 0 {
		return nil
	}
	if ok {
		c.entries[i].count += n
		c.total += n
		return nil
	}
	if c.index == nil {
		c.index = map[crdt.ActorID]int{}
	}
	c.index[actor] = len(c.entries)
	c.entries = append(c.entries, struct {
		actor crdt.ActorID
		count int64
	}{actor, n})
	c.total += n
	return nil
}

type todayPN struct{ p, n todayG }

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
