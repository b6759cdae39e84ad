package deltalog_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// TestErrorContractExploreDeltalog: adds, merges and a compaction, each
// store write possibly landed or not and answered with each error kind;
// the caller retries a failed Add with the same id (on the same Counters
// or another), and ignores a failed Merge or Compact (a later one does
// it). Every acknowledged add counts once, none twice.
func TestErrorContractExploreDeltalog(t *testing.T) {
	type step struct {
		op    string // add, merge, compact, wait
		on    int
		delta int64
		wait  time.Duration
	}
	scenario := []step{
		{op: "add", on: 0, delta: 1},
		{op: "wait", wait: 2 * time.Minute},
		{op: "add", on: 1, delta: 10},
		{op: "merge", on: 0},
		{op: "wait", wait: 30 * time.Second},
		{op: "compact", on: 1},
		{op: "add", on: 0, delta: 100},
		{op: "merge", on: 1},
	}
	run := func(st *errPartitions, retry string) (acked map[int64]bool, v int64, problem string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		clock := &fakeClock{now: base}
		cs := make([]*deltalog.Counters, 2)
		for i := range cs {
			c, err := deltalog.New(st, testOptions(clock))
			if err != nil {
				return nil, 0, err.Error()
			}
			cs[i] = c
		}
		acked = map[int64]bool{}
		for _, s := range scenario {
			clock.Advance(time.Millisecond)
			switch s.op {
			case "wait":
				clock.Advance(s.wait)
			case "add":
				id := timeid.New(clock.Now())
				err := cs[s.on].Add(ctx, "k", id, s.delta)
				for try := 0; err != nil && try < 3 && retry != "none"; try++ {
					on := s.on
					if retry == "other" {
						on = 1 - on
					}
					err = cs[on].Add(ctx, "k", id, s.delta)
				}
				acked[s.delta] = err == nil
			case "merge":
				_, _, _ = cs[s.on].Merge(ctx, "k")
			case "compact":
				_, _ = cs[s.on].Compact(ctx, "k")
			}
		}
		st.Set(nil)
		clock.Advance(3 * time.Minute)
		for range 2 {
			if _, _, err := cs[0].Merge(ctx, "k"); err != nil {
				return acked, 0, "merge: " + err.Error()
			}
			clock.Advance(30 * time.Second)
			if _, err := cs[1].Compact(ctx, "k"); err != nil {
				return acked, 0, "compact: " + err.Error()
			}
		}
		r, err := cs[1].Read(ctx, "k")
		if err != nil {
			return acked, 0, "read: " + err.Error()
		}
		return acked, r.Value, ""
	}
	st0 := newErrPartitions(memory.NewPartitions())
	if _, v, prob := run(st0, "none"); v != 111 || prob != "" {
		t.Fatalf("fault-free: %d %s", v, prob)
	}
	n := st0.Writes()
	t.Logf("fault-free writes:\n  %s", strings.Join(st0.Log(), "\n  "))
	runs := 0
	bad := map[string]int{}
	for _, retry := range []string{"none", "same", "other"} {
		for _, tr := range faulty.Trials(n, false) {
			st := newErrPartitions(memory.NewPartitions())
			st.Set(tr.Answers())
			runs++
			acked, v, prob := run(st, retry)
			var probs []string
			if prob != "" {
				probs = append(probs, prob)
			}
			for _, d := range []int64{1, 10, 100} {
				cnt := (v / d) % 10
				if acked[d] && cnt != 1 || cnt > 1 {
					probs = append(probs, fmt.Sprintf("add %d (acked %v) counted %d", d, acked[d], cnt))
				}
			}
			if len(probs) > 0 {
				key := fmt.Sprintf("%s/%s/apply=%v", retry, tr.Kind.Name, tr.Apply)
				bad[key]++
				if bad[key] == 1 {
					t.Errorf("%s %v v=%d: %s\n  %s", key, tr, v, strings.Join(probs, "; "), strings.Join(st.Log(), "\n  "))
				}
			}
		}
	}
	t.Logf("runs %d (%d writes fault-free), bad groups %d", runs, n, len(bad))
}
