package deltalog_test

import (
	"context"
	"fmt"
	"github.com/counterkit/counterkit/store/faulty"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/timeid"
)

// TestErrorContractExploreDeltalog: adds, merges and a compaction, each
// store write possibly landed or not and answered with each error kind
// (and crdt.ErrUnavailable, not landed); the caller retries a failed Add
// with the same id (on the same Counters or another), or, with "fresh",
// under a new id after an error saying nothing was written (isNotWritten)
// and with the same id after any other; it ignores a failed Merge or
// Compact (a later one does it). Every acknowledged add counts once, none
// twice, and an add whose every attempt was answered "nothing written"
// not at all.
func TestErrorContractExploreDeltalog(t *testing.T) {
	for k, g := range exploreDeltalogErrors(t, false) {
		t.Errorf("%s: %d runs, %v", k, g.Runs, g.Classes)
	}
}

// TestErrorContractCatchesLandedRefusals: the explorer's checks fail on a
// store that breaks the contract, answering a write that landed with an
// error saying nothing was written (a refusal, or crdt.ErrUnavailable).
// Add passes it on, so a caller that gives up has an add it was told is
// not written counted, and one that adds again under a new id has it
// counted twice; a retry with the same id rewrites the same cell and
// counts once, and a Merge or Compact that landed is as good as one
// answered nil, so nothing else is found.
func TestErrorContractCatchesLandedRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	bad := exploreDeltalogErrors(t, true)
	var want []string
	for _, retry := range []string{"none", "fresh"} {
		for _, kind := range []string{"too-large", "corrupt", "invalid-key", "unavailable"} {
			want = append(want, fmt.Sprintf("%s/%s/apply=true", retry, kind))
		}
	}
	if got := slices.Sorted(maps.Keys(bad)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		t.Errorf("groups counting wrong: %q, want %q", got, want)
	}
	for _, k := range slices.Sorted(maps.Keys(bad)) {
		g := bad[k]
		t.Logf("%s: %d runs, %v", k, g.Runs, g.Classes)
		p := "told not written, counted 1"
		if strings.HasPrefix(k, "fresh/") {
			p = "counted 2"
		}
		if g.Classes[p] == 0 {
			t.Errorf("%s: no run with %q: %v", k, p, g.Classes)
		}
	}
}

// exploreDeltalogErrors runs the scenario under every faulty.Trials plan
// (broken: with landed refusals) and caller policy, and returns the groups
// of runs that went wrong.
func exploreDeltalogErrors(t *testing.T, broken bool) faulty.Groups {
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
	// told: every attempt of the add was answered with an error saying
	// nothing was written.
	run := func(st *errPartitions, retry string) (acked, told map[int64]bool, v int64, problem string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		clock := &fakeClock{now: base}
		cs := make([]*deltalog.Counters, 2)
		for i := range cs {
			c, err := deltalog.New(st, testOptions(clock))
			if err != nil {
				return nil, nil, 0, err.Error()
			}
			cs[i] = c
		}
		acked, told = map[int64]bool{}, map[int64]bool{}
		for _, s := range scenario {
			clock.Advance(time.Millisecond)
			switch s.op {
			case "wait":
				clock.Advance(s.wait)
			case "add":
				id := timeid.New(clock.Now())
				err := cs[s.on].Add(ctx, "k", id, s.delta)
				notWritten := isNotWritten(err)
				for try := 0; err != nil && try < 3 && retry != "none"; try++ {
					on := s.on
					if retry == "other" {
						on = 1 - on
					}
					if retry == "fresh" && isNotWritten(err) {
						id = timeid.New(clock.Now()) // nothing was written: a new update
					}
					err = cs[on].Add(ctx, "k", id, s.delta)
					notWritten = notWritten && isNotWritten(err)
				}
				acked[s.delta] = err == nil
				told[s.delta] = notWritten
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
				return acked, told, 0, "merge: " + err.Error()
			}
			clock.Advance(30 * time.Second)
			if _, err := cs[1].Compact(ctx, "k"); err != nil {
				return acked, told, 0, "compact: " + err.Error()
			}
		}
		r, err := cs[1].Read(ctx, "k")
		if err != nil {
			return acked, told, 0, "read: " + err.Error()
		}
		return acked, told, r.Value, ""
	}
	st0 := newErrPartitions(memory.NewPartitions())
	if _, _, v, prob := run(st0, "none"); v != 111 || prob != "" {
		t.Fatalf("fault-free: %d %s", v, prob)
	}
	n := st0.Writes()
	t.Logf("fault-free writes:\n  %s", strings.Join(st0.Log(), "\n  "))
	runs := 0
	bad := faulty.Groups{}
	for _, retry := range []string{"none", "same", "other", "fresh"} {
		for _, tr := range faulty.Trials(n, broken) {
			st := newErrPartitions(memory.NewPartitions())
			st.Set(tr.Answers())
			runs++
			acked, told, v, prob := run(st, retry)
			probs, classes := []string{prob}, []string{"error"}
			if prob == "" {
				probs, classes = faulty.Judge(map[int64]int64{1: v % 10, 10: v / 10 % 10, 100: v / 100 % 10}, acked, told)
			}
			if len(probs) > 0 {
				key := fmt.Sprintf("%s/%s/apply=%v", retry, tr.Kind.Name, tr.Apply)
				if bad.Add(key, classes) {
					t.Logf("%s %v v=%d: %s\n  %s", key, tr, v, strings.Join(probs, "; "), strings.Join(st.Log(), "\n  "))
				}
			}
		}
	}
	t.Logf("runs %d (%d writes fault-free), bad groups %d", runs, n, len(bad))
	return bad
}
