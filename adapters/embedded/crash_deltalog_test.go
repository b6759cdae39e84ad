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
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

// deltalogWorkload: deltalog adds (package deltalog over the embedded
// Partitions store), a quarter of them re-sends of a recent update (same
// id, same delta), as after a lost acknowledgement. A record is
// counter|id|delta. After a kill, each counter's value must be the last
// value plus every acknowledged update of the round once, plus some
// subset of the round's unacknowledged ones.
type deltalogWorkload struct {
	value map[string]int64 // per counter, as of the last check

	mu       sync.Mutex
	counters *deltalog.Counters // child
	recent   []string           // child: records for re-sending
}

var deltalogCounters = []string{"views/d0", "views/d1"}

func newDeltalogWorkload() *deltalogWorkload {
	return &deltalogWorkload{value: map[string]int64{}}
}

func (*deltalogWorkload) name() string { return "deltalog" }

func (w *deltalogWorkload) step(ctx context.Context, env *childEnv, rng *rand.Rand, try, ack func(string)) error {
	w.mu.Lock()
	if w.counters == nil {
		c, err := deltalog.New(env.db.Partitions(), deltalog.Options{})
		if err != nil {
			w.mu.Unlock()
			return err
		}
		w.counters = c
	}
	var rec string
	if len(w.recent) > 0 && rng.IntN(4) == 0 {
		rec = w.recent[rng.IntN(len(w.recent))]
	} else {
		delta := 1 + rng.Int64N(1000)
		if rng.IntN(3) == 0 {
			delta = -delta
		}
		rec = fmt.Sprintf("%s|%s|%d", deltalogCounters[rng.IntN(len(deltalogCounters))], timeid.New(time.Now()), delta)
		w.recent = append(w.recent, rec)
		if len(w.recent) > 16 {
			w.recent = w.recent[1:]
		}
	}
	c := w.counters
	w.mu.Unlock()
	f := strings.Split(rec, "|")
	id, err := timeid.Parse(f[1])
	if err != nil {
		return err
	}
	delta, _ := strconv.ParseInt(f[2], 10, 64)
	try(rec)
	if err := c.Add(ctx, f[0], id, delta); err != nil {
		return err
	}
	ack(rec)
	return nil
}

func (w *deltalogWorkload) check(ctx context.Context, db *embedded.DB, round int, tries, acks []string) error {
	c, err := deltalog.New(db.Partitions(), deltalog.Options{})
	if err != nil {
		return err
	}
	return checkSums(tries, acks, deltalogCounters, w.value, func(counter string) (int64, error) {
		r, err := c.Read(ctx, counter)
		return r.Value, err
	})
}

// checkSums checks, for each key, that the stored sum is the last one plus
// every acknowledged record once plus a subset of the unacknowledged ones
// (records key|id|amount; a record tried twice counts once), and updates
// last.
func checkSums(tries, acks, keys []string, last map[string]int64, read func(key string) (int64, error)) error {
	acked := map[string]bool{}
	for _, a := range acks {
		acked[a] = true
	}
	for _, key := range keys {
		sure := int64(0)
		var maybe []int64
		seen := map[string]bool{}
		for _, r := range tries {
			f := strings.Split(r, "|")
			if len(f) != 3 || f[0] != key || seen[r] {
				continue
			}
			seen[r] = true
			amount, _ := strconv.ParseInt(f[2], 10, 64)
			if acked[r] {
				sure += amount
			} else {
				maybe = append(maybe, amount)
			}
		}
		got, err := read(key)
		if err != nil {
			return fmt.Errorf("%s: %v", key, err)
		}
		diff := got - last[key] - sure
		if len(maybe) > 16 {
			return fmt.Errorf("%s: %d unacknowledged writes in one round", key, len(maybe))
		}
		ok := false
		for mask := 0; mask < 1<<len(maybe) && !ok; mask++ {
			var s int64
			for i, a := range maybe {
				if mask>>i&1 == 1 {
					s += a
				}
			}
			ok = s == diff
		}
		if !ok {
			return fmt.Errorf("%s: %d = %d before + %d acknowledged + %d, which no subset of the unacknowledged %v makes",
				key, got, last[key], sure, diff, maybe)
		}
		last[key] = got
	}
	return nil
}
