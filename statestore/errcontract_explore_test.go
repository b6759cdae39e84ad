package statestore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/statestore"
)

// TestErrorContractExploreStatestore: increments by actors a and b, each
// write possibly landed or not and answered with each error kind; the
// caller follows the store contract ("every other error is ambiguous"):
// after any error from Update it re-sends the returned state with Save
// (statestore doc, "Caveats"), and after an error from Save it saves
// again. Every acknowledged increment counts once, none twice.
func TestErrorContractExploreStatestore(t *testing.T) {
	type inc struct {
		actor crdt.ActorID
		n     int64
	}
	scenarios := map[string][]inc{
		"a,a,b": {{"a", 1}, {"a", 10}, {"b", 100}},
		"a,b,a": {{"a", 1}, {"b", 10}, {"a", 100}},
	}
	run := func(st *errSiblings, incs []inc, retry string) (acked []bool, v int64, problem string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		acked = make([]bool, len(incs))
		for i, u := range incs {
			c, err := statestore.Update[gcounter.Counter](ctx, st, "k", u.actor, func(c *gcounter.Counter) error { return c.Increment(u.actor, u.n) })
			for try := 0; err != nil && try < 3; try++ {
				if c == nil {
					// Nothing was written (the load failed): Update again.
					c, err = statestore.Update[gcounter.Counter](ctx, st, "k", u.actor, func(c *gcounter.Counter) error { return c.Increment(u.actor, u.n) })
					continue
				}
				switch retry {
				case "save": // the contract: any error may have landed
					err = statestore.Save(ctx, st, "k", u.actor, c)
				case "doc": // Save only after ErrAmbiguousWrite, else Update again
					if errors.Is(err, crdt.ErrAmbiguousWrite) {
						err = statestore.Save(ctx, st, "k", u.actor, c)
					} else {
						c, err = statestore.Update[gcounter.Counter](ctx, st, "k", u.actor, func(c *gcounter.Counter) error { return c.Increment(u.actor, u.n) })
					}
				}
			}
			acked[i] = err == nil
		}
		st.setPlan(nil)
		c, err := statestore.Load[gcounter.Counter](ctx, st, "k")
		if err != nil {
			return acked, 0, err.Error()
		}
		return acked, c.Value(), ""
	}
	runs := 0
	bad := map[string]int{}
	for sname, incs := range scenarios {
		st0 := newErrSiblings(memory.NewSiblings())
		run(st0, incs, "save")
		n := st0.writes()
		for _, retry := range []string{"save", "doc"} {
			for _, k := range errKinds {
				for _, apply := range []bool{true, false} {
					for p := 1; p <= n+2; p++ {
						for q := p; q <= min(p+1, n+2); q++ {
							st := newErrSiblings(memory.NewSiblings())
							st.setPlan(map[int]injection{p: {apply, k.err}, q: {apply, k.err}})
							runs++
							acked, v, prob := run(st, incs, retry)
							var probs []string
							if prob != "" {
								probs = append(probs, prob)
							}
							for i, u := range incs {
								cnt := (v / u.n) % 10
								if acked[i] && cnt != 1 || cnt > 1 {
									probs = append(probs, fmt.Sprintf("inc %d (acked %v) counted %d", i, acked[i], cnt))
								}
							}
							if len(probs) > 0 {
								key := fmt.Sprintf("%s/%s/%s/apply=%v", sname, retry, k.name, apply)
								bad[key]++
								if bad[key] == 1 {
									t.Logf("%s p=%d q=%d v=%d: %s\n  %s", key, p, q, v, strings.Join(probs, "; "), strings.Join(st.log, "\n  "))
								}
							}
						}
					}
				}
			}
		}
	}
	t.Logf("runs %d, bad groups %d", runs, len(bad))
	for k, v := range bad {
		if strings.Contains(k, "/save/") {
			t.Errorf("%s: %d runs", k, v)
		} else {
			t.Logf("caller not following the store contract: %s: %d runs", k, v)
		}
	}
}
