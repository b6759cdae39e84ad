package gcounter_test

import (
	"fmt"
	"math"

	"github.com/counterkit/counterkit/crdt"
)

// todayCounter is Counter's Increment as it was before Handle and the
// hash table index (commit 66c9162, gcounter/gcounter.go): a Go map from
// actor to the position of its entry. It is the "today's" of the Handle
// goal: Handle.Add at 0.5x or better of it.
type todayCounter struct {
	index   map[crdt.ActorID]int
	entries []struct {
		actor crdt.ActorID
		count int64
	}
	total int64
}

func (c *todayCounter) Increment(actor crdt.ActorID, n int64) error {
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
