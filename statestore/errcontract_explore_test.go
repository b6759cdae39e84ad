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
	"github.com/counterkit/counterkit/store/faulty"
)

// TestErrorContractExploreStatestore: increments by actors a and b, each
// write possibly landed or not and answered with each error kind; the
// caller follows the package doc ("Caveats"): after an error from the
// write of Update but crdt.ErrUnavailable it re-sends the returned state
// with Save, and after an error from Save it saves again. Every
// acknowledged increment counts once, none twice. A caller that calls
// Update again after an error that may hide a landed write (anything but
// ErrAmbiguousWrite, as the doc said before) counts twice, and the checks
// find it.
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
				case "save": // the doc: any error but unavailable may have landed
					if errors.Is(err, crdt.ErrUnavailable) {
						c, err = statestore.Update[gcounter.Counter](ctx, st, "k", u.actor, func(c *gcounter.Counter) error { return c.Increment(u.actor, u.n) })
					} else {
						err = statestore.Save(ctx, st, "k", u.actor, c)
					}
				case "update": // Save only after ErrAmbiguousWrite, else Update again
					if errors.Is(err, crdt.ErrAmbiguousWrite) {
						err = statestore.Save(ctx, st, "k", u.actor, c)
					} else {
						c, err = statestore.Update[gcounter.Counter](ctx, st, "k", u.actor, func(c *gcounter.Counter) error { return c.Increment(u.actor, u.n) })
					}
				}
			}
			acked[i] = err == nil
		}
		st.Set(nil)
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
		n := st0.Writes()
		for _, retry := range []string{"save", "update"} {
			for _, tr := range faulty.Trials(n, false) {
				st := newErrSiblings(memory.NewSiblings())
				st.Set(tr.Answers())
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
					key := fmt.Sprintf("%s/%s/%s/apply=%v", sname, retry, tr.Kind.Name, tr.Apply)
					bad[key]++
					if bad[key] == 1 {
						t.Logf("%s %v v=%d: %s\n  %s", key, tr, v, strings.Join(probs, "; "), strings.Join(st.Log(), "\n  "))
					}
				}
			}
		}
	}
	t.Logf("runs %d, bad groups %d", runs, len(bad))
	caught := 0
	for k, v := range bad {
		if strings.Contains(k, "/save/") {
			t.Errorf("%s: %d runs", k, v)
		} else {
			caught++
			t.Logf("caller not following the doc: %s: %d runs", k, v)
		}
	}
	if caught == 0 {
		t.Error("the checks found nothing wrong with a caller calling Update again after an error that may hide a landed write")
	}
}
