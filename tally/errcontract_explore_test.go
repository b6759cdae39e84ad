package tally_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

type tcUpd struct {
	on     string
	amount int64
}

func runTallyErrScenario(st *errPartitions, upds []tcUpd, retries int, policy string) (acked map[int]bool, reapplied map[int]int, told map[int]string, v int64, problem string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	clk := newClock()
	cfg := tally.Options{Lifetime: 24 * time.Hour, Margin: time.Hour, MaxSkew: time.Hour, Grace: 3 * time.Hour,
		Clock: clk.Now, NewID: ids(), Retries: retries}
	c, err := tally.New[*tally.Sum](st, "k", cfg)
	if err != nil {
		return nil, nil, nil, 0, err.Error()
	}
	ms := map[string]*tally.Mutator[*tally.Sum]{}
	get := func(n string) *tally.Mutator[*tally.Sum] {
		if ms[n] == nil {
			m, err := c.NewMutator()
			if err != nil {
				panic(err)
			}
			ms[n] = m
		}
		return ms[n]
	}
	acked, reapplied, told = map[int]bool{}, map[int]int{}, map[int]string{}
	for i, u := range upds {
		clk.Advance(time.Millisecond)
		if u.on == "gc" { // every mutator so far expires; a GC folds them
			clk.Advance(cfg.Lifetime + cfg.Grace + time.Minute)
			ms = map[string]*tally.Mutator[*tally.Sum]{}
			_, _ = c.GC(ctx)
			continue
		}
		m := get(u.on)
		err := m.Update(ctx, add(u.amount))
		for try := 0; err != nil && try < 3; try++ {
			clk.Advance(time.Millisecond)
			if errors.Is(err, crdt.ErrAmbiguousWrite) {
				// The documented way: Retry counts it once.
				err = m.Retry(ctx)
				continue
			}
			// "nothing was written; the staged updates are discarded
			// and not counted, so the caller may apply them again."
			told[i] = err.Error()
			switch policy {
			case "none":
				try = 99
				continue
			case "restart": // the process stops; a new mutator re-applies
				delete(ms, u.on)
				m = get(u.on)
			}
			reapplied[i]++
			err = m.Update(ctx, add(u.amount))
		}
		if err == nil {
			acked[i] = true
		} else if errors.Is(err, crdt.ErrAmbiguousWrite) {
			told[i] = "" // left unresolved: 0 or 1
		}
	}
	st.Set(nil)
	for _, m := range ms {
		if m.Unresolved() {
			_ = m.Retry(ctx)
		}
	}
	if upds[len(upds)-1].on == "gc" {
		clk.Advance(cfg.Lifetime + cfg.Grace + time.Minute)
		if _, err := c.GC(ctx); err != nil {
			return acked, reapplied, told, 0, "gc: " + err.Error()
		}
	}
	r, err := c.ReadComplete(ctx)
	if err != nil {
		return acked, reapplied, told, 0, "read: " + err.Error()
	}
	return acked, reapplied, told, r.Value(), ""
}

func TestErrorContractExploreTally(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	for k, v := range exploreTallyErrors(t, false) {
		t.Errorf("%s: %d runs", k, v)
	}
}

// TestErrorContractCatchesLandedRefusals: the explorer's checks fail on a
// store that breaks the contract, answering a write that landed with a
// refusal for what it is (crdt.ErrTooLarge): the driver takes it as not
// written, and it counts twice.
func TestErrorContractCatchesLandedRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	if len(exploreTallyErrors(t, true)) == 0 {
		t.Fatal("no run found a count wrong with refusals answering landed writes")
	}
}

// exploreTallyErrors runs every scenario under every faulty.Trials plan (landed
// refusals only with landedRefusals) and returns the groups of runs that
// counted wrong. It logs the first run of each group, or every run with
// COUNTERKIT_ERRC_ALL set.
func exploreTallyErrors(t *testing.T, landedRefusals bool) map[string]int {
	scenarios := map[string][]tcUpd{
		"A,A,B":       {{"A", 1}, {"A", 10}, {"B", 100}},
		"A,B,A":       {{"A", 1}, {"B", 10}, {"A", 100}},
		"A,B,gc,C,gc": {{"A", 1}, {"B", 10}, {"gc", 0}, {"C", 100}, {"gc", 0}},
	}
	bad := map[string]int{}
	runs := 0
	for sname, upds := range scenarios {
		for _, retries := range []int{-1, 0} {
			st0 := newErrPartitions(memory.NewPartitions())
			runTallyErrScenario(st0, upds, retries, "none")
			n := st0.Writes()
			for _, policy := range []string{"none", "same", "restart"} {
				for _, tr := range faulty.Trials(n, landedRefusals) {
					st := newErrPartitions(memory.NewPartitions())
					st.Set(tr.Answers())
					runs++
					acked, reapplied, told, v, prob := runTallyErrScenario(st, upds, retries, policy)
					var probs []string
					if prob != "" {
						probs = append(probs, prob)
					}
					for i, u := range upds {
						if u.on == "gc" {
							continue
						}
						cnt := (v / u.amount) % 10
						switch {
						case prob != "":
						case acked[i] && cnt != 1:
							probs = append(probs, fmt.Sprintf("u%d acked (reapplied %d), counted %d", i, reapplied[i], cnt))
						case cnt > 1:
							probs = append(probs, fmt.Sprintf("u%d counted %d", i, cnt))
						case !acked[i] && told[i] != "" && cnt != 0:
							probs = append(probs, "info: "+fmt.Sprintf("u%d told discarded (%s), counted %d", i, told[i], cnt))
						}
					}
					severe := false
					for _, p := range probs {
						severe = severe || !strings.HasPrefix(p, "info: ")
					}
					if len(probs) > 0 {
						key := fmt.Sprintf("%s%s/retries=%d/%s/%s/apply=%v", map[bool]string{true: "SEVERE ", false: "info "}[severe], sname, retries, policy, tr.Kind.Name, tr.Apply)
						bad[key]++
						if bad[key] == 1 || os.Getenv("COUNTERKIT_ERRC_ALL") != "" {
							t.Logf("%s %v v=%d: %s\n  %s", key, tr, v, strings.Join(probs, "; "), strings.Join(st.Log(), "\n  "))
						}
					}
				}
			}
		}
	}
	t.Logf("runs %d, bad groups %d", runs, len(bad))
	severe := map[string]int{}
	for k, v := range bad {
		if strings.HasPrefix(k, "SEVERE") {
			severe[k] = v
		} else {
			t.Logf("%s: %d runs", k, v)
		}
	}
	return severe
}
