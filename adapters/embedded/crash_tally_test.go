package embedded_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tally"
)

// tallyWorkload: tally updates (package tally over the embedded Partitions
// store), each flushed at once, one mutator per child and key, and now and
// then a GC. Each child's clock runs crashRoundSkew ahead of the last, past
// the Lifetime and Grace below, so every GC folds the shards of earlier
// children into the tally in one batch, and a kill can land inside a GC. A
// record is key|id|amount. After a kill, each key's complete read must be
// the last value plus every acknowledged update of the round once, plus
// possibly unacknowledged ones; a GC, torn or repeated, changes nothing.
type tallyWorkload struct {
	value map[string]int64 // per key, as of the last check

	mu       sync.Mutex // serialises the child's steps: a Mutator is used by one goroutine at a time
	counters map[string]*tally.Counter[*tally.Sum]
	mutators map[string]*tally.Mutator[*tally.Sum]
}

var tallyKeys = []string{"hits/t0", "hits/t1"}

func newTallyWorkload() *tallyWorkload {
	return &tallyWorkload{value: map[string]int64{}}
}

func (*tallyWorkload) name() string { return "tally" }

func tallyConfig(clock func() time.Time, tag string) tally.Options {
	n := 0
	return tally.Options{
		Lifetime: 5 * time.Minute, Margin: time.Minute, MaxSkew: time.Second, Grace: 3 * time.Second,
		Clock: clock,
		NewID: func() crdt.ActorID { n++; return crdt.ActorID(fmt.Sprintf("%s-m%d", tag, n)) },
	}
}

func (w *tallyWorkload) step(ctx context.Context, env *childEnv, rng *rand.Rand, try, ack func(string)) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counters == nil {
		w.counters, w.mutators = map[string]*tally.Counter[*tally.Sum]{}, map[string]*tally.Mutator[*tally.Sum]{}
		for _, k := range tallyKeys {
			c, err := tally.New[*tally.Sum](env.db.Partitions(), k, tallyConfig(env.clock, env.tag))
			if err != nil {
				return err
			}
			m, err := c.NewMutator()
			if err != nil {
				return err
			}
			w.counters[k], w.mutators[k] = c, m
		}
	}
	key := tallyKeys[rng.IntN(len(tallyKeys))]
	if rng.IntN(8) == 0 {
		if _, err := w.counters[key].GC(ctx); err != nil {
			return err
		}
		env.note("tally-gc")
		return nil
	}
	amount := 1 + rng.Int64N(100)
	rec := fmt.Sprintf("%s|%s-u%d|%d", key, env.tag, env.seq(), amount)
	try(rec)
	if err := w.mutators[key].Update(ctx, func(s *tally.Sum) error { return s.Add(amount) }); err != nil {
		return err
	}
	ack(rec)
	return nil
}

func (w *tallyWorkload) check(ctx context.Context, db *embedded.DB, round int, tries, acks []string) error {
	// A flush writes the mutator's whole shard, so an unacknowledged
	// update can only have landed as the last one tried on its key; the
	// subset check below allows that and more.
	for _, r := range tries {
		if f := strings.Split(r, "|"); len(f) != 3 {
			return fmt.Errorf("malformed record %q", r)
		} else if _, err := strconv.ParseInt(f[2], 10, 64); err != nil {
			return err
		}
	}
	// The clock of the round just killed, as its child read it: a reader
	// whose clock is behind the GC's by more than Grace sees a tally
	// folded through its future, which it refuses (SPEC.md 7.4).
	clock := func() time.Time { return time.Now().Add(time.Duration(round) * crashRoundSkew) }
	return checkSums(tries, acks, tallyKeys, w.value, func(key string) (int64, error) {
		c, err := tally.New[*tally.Sum](db.Partitions(), key, tallyConfig(clock, "check"))
		if err != nil {
			return 0, err
		}
		s, err := c.ReadComplete(ctx)
		if err != nil {
			return 0, err
		}
		return s.Value(), nil
	})
}
