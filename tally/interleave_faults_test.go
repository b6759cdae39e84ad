package tally_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/schedtest"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
)

// interleaveCfg: lifetimes short next to the clock steps, the least Grace the
// contract allows, no library resends (every attempt is a decision).
var interleaveCfg = tally.Options{
	Lifetime: 10 * time.Hour,
	Margin:   time.Hour,
	MaxSkew:  time.Hour,
	Grace:    3 * time.Hour,
	Retries:  -1,
}

type mutRecord struct {
	name    string
	m       *tally.Mutator[*tally.Sum]
	acked   int64 // the committed state's sum
	sent    int64 // the largest state sent
	landTS  int64 // ts of the highest-timestamped landed put
	byTS    map[int64]string
	landVal int64 // its sum
	maxLand int64 // the largest sum that ever landed
	pending int64 // the unresolved write's sum
}

// tallyScenario describes one exhaustive run.
type tallyScenario struct {
	gcs       int  // GC actors
	readers   int  // reader actors
	secondUpd bool // A updates again after resolving
	full      bool // writes get all five faults and reads may be refused (else pass, refuse, hold; reads pass)
}

func runTallyScenario(t *testing.T, sc tallyScenario, budget int) int {
	t.Helper()
	return schedtest.Explore(t, budget, func(sched *schedtest.Sched) string { return runTallyOnce(sched, sc) })
}

func runTallyOnce(sched *schedtest.Sched, sc tallyScenario) (failure string) {
	ctx := context.Background()
	clk := newClock()
	t0 := clk.Now()
	mem := memory.NewPartitions()
	w := &schedtest.World{Sched: sched, Inner: mem, ReadFaults: sc.full, WriteFaults: schedtest.Faults(sc.full)}
	cfg := interleaveCfg
	cfg.Clock = clk.Now
	cfg.NewID = ids()
	nActors := 2 + sc.gcs + sc.readers
	counters := make([]*tally.Counter[*tally.Sum], nActors)
	for i := range counters {
		c, err := tally.New[*tally.Sum](w.StoreFor(i), "k", cfg)
		if err != nil {
			return err.Error()
		}
		counters[i] = c
	}
	muts := map[crdt.ActorID]*mutRecord{}
	mk := func(i int, name string) *mutRecord {
		m, err := counters[i].NewMutator()
		if err != nil {
			panic(err)
		}
		r := &mutRecord{name: name, m: m}
		muts[m.ID()] = r
		return r
	}
	a := mk(0, "A")
	clk.Advance(time.Microsecond)
	b := mk(1, "B")

	var fail []string
	failf := func(format string, args ...any) { fail = append(fail, fmt.Sprintf(format, args...)) }
	violated := false // a write applied after the clock passed its MaxSkew
	afterGrace := false
	w.OnApply = func(ms []store.Mutation) {
		if afterGrace {
			for _, m := range ms {
				if m.Op == store.OpPut && m.Key[0] == 's' {
					violated = true
				}
			}
		}
		for _, m := range ms {
			if m.Op != store.OpPut || m.Key[0] != 's' {
				continue
			}
			s, err := tally.DecodeShard[*tally.Sum](m.Value)
			if err != nil {
				panic(err)
			}
			r := muts[s.Mutator]
			if r.byTS == nil {
				r.byTS = map[int64]string{}
			}
			if old, ok := r.byTS[m.Timestamp]; ok && old != string(m.Value) {
				failf("%s: two different shard values written at timestamp %d", r.name, m.Timestamp)
			}
			r.byTS[m.Timestamp] = string(m.Value)
			v := s.State.Value()
			r.maxLand = max(r.maxLand, v)
			if m.Timestamp > r.landTS || (m.Timestamp == r.landTS && v > r.landVal) {
				r.landTS, r.landVal = m.Timestamp, v
			}
		}
	}
	// update applies Update and keeps the model: nil counts, ambiguous is
	// pending, anything else discards.
	update := func(r *mutRecord, n int64) {
		if r.m.Unresolved() {
			if err := r.m.Update(ctx, addOne(n)); !errors.Is(err, tally.ErrUnresolved) {
				failf("%s: Update while unresolved: %v", r.name, err)
			}
			return
		}
		target := r.acked + n
		err := r.m.Update(ctx, addOne(n))
		if err == nil || errors.Is(err, crdt.ErrAmbiguousWrite) {
			r.sent = max(r.sent, target)
		}
		switch {
		case err == nil:
			r.acked = target
		case errors.Is(err, crdt.ErrAmbiguousWrite):
			r.pending = target
			if !r.m.Unresolved() {
				failf("%s: ambiguous update not unresolved: %v", r.name, err)
			}
		default:
			if r.m.Unresolved() {
				failf("%s: definite failure %v left the mutator unresolved", r.name, err)
			}
		}
	}
	resolve := func(r *mutRecord) {
		if !r.m.Unresolved() {
			return
		}
		pendingVal := r.pending
		if sched.Pick(2) == 0 {
			if err := r.m.Retry(ctx); err == nil {
				r.acked = pendingVal
			} else if !errors.Is(err, crdt.ErrAmbiguousWrite) {
				failf("%s: retry failed without ambiguous_write: %v", r.name, err)
			}
		} else {
			if err := r.m.Abandon(ctx); err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) {
				failf("%s: abandon failed without ambiguous_write: %v", r.name, err)
			}
		}
	}

	actors := []func(context.Context){
		func(ctx context.Context) { // A
			update(a, 1)
			resolve(a)
			if sc.secondUpd {
				update(a, 10)
				resolve(a)
			}
		},
		func(ctx context.Context) { // B
			update(b, 100)
		},
	}
	for i := 0; i < sc.gcs; i++ {
		c, me := counters[2+i], 2+i
		actors = append(actors, func(ctx context.Context) {
			w.Gate(me, "gc")
			if _, err := c.GC(ctx); err != nil && !errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, crdt.ErrAmbiguousWrite) {
				failf("gc: %v", err)
			}
		})
	}
	for i := 0; i < sc.readers; i++ {
		c, me := counters[2+sc.gcs+i], 2+sc.gcs+i
		actors = append(actors, func(ctx context.Context) {
			w.Gate(me, "read")
			v, err := c.Read(ctx)
			// No other actor runs during the call: the model is as it was
			// when the read was granted.
			lo, hi := a.acked+b.acked, a.maxLand+b.maxLand
			if err != nil {
				if !errors.Is(err, crdt.ErrUnavailable) {
					failf("read: %v", err)
				}
				return
			}
			// The maxima may grow during the call only through this
			// call: none does. Landed writes never exceed the sent ones.
			if v.Value() > hi {
				failf("read %d above every landed version (%d): counted twice", v.Value(), hi)
			}
			if !violated && v.Value() < lo {
				failf("read %d below the acknowledged %d", v.Value(), lo)
			}
		})
	}
	events := []*schedtest.Event{
		{Name: "+30m", Run: func() { clk.Advance(30 * time.Minute) }},
		{Name: "past expiry+grace", Run: func() {
			clk.Advance(t0.Add(cfg.Lifetime + cfg.Grace + time.Second).Sub(clk.Now()))
			afterGrace = true
		}},
	}
	w.Run(actors, events, nil)

	// Settle: far later, fault-free GCs, then a complete read.
	clk.Advance(100 * time.Hour)
	final, err := tally.New[*tally.Sum](mem, "k", cfg)
	if err != nil {
		return err.Error()
	}
	before, err := final.ReadComplete(ctx)
	if err != nil {
		failf("final read before GC: %v", err)
	}
	for range 2 {
		if _, err := final.GC(ctx); err != nil {
			failf("final gc: %v", err)
		}
	}
	v, err := final.ReadComplete(ctx)
	if err != nil {
		failf("final read: %v", err)
	} else {
		got := v.Value()
		if before != nil && before.Value() != got {
			failf("GC changed the value from %d to %d", before.Value(), got)
		}
		if got > a.maxLand+b.maxLand {
			failf("final %d above every landed version (%d + %d): counted twice", got, a.maxLand, b.maxLand)
		}
		if !violated {
			if want := a.landVal + b.landVal; got != want {
				failf("final %d, want the newest landed versions %d + %d", got, a.landVal, b.landVal)
			}
			for _, r := range []*mutRecord{a, b} {
				if r.landVal < r.acked {
					failf("%s: newest landed %d below acknowledged %d", r.name, r.landVal, r.acked)
				}
				if r.landVal > r.sent {
					failf("%s: newest landed %d above sent %d", r.name, r.landVal, r.sent)
				}
				if !r.m.Unresolved() && r.landVal != r.acked {
					failf("%s: resolved, newest landed %d but acknowledged %d", r.name, r.landVal, r.acked)
				}
			}
		}
	}
	if len(fail) > 0 {
		return strings.Join(fail, "; ") + "\nlog:\n  " + strings.Join(w.Log, "\n  ")
	}
	return ""
}

// TestTallyEveryInterleaving enumerates every interleaving of the
// store calls of two mutators (A: update, then resolve by Retry or Abandon
// while unresolved, optionally a second update and resolution; B: update),
// GCs, a reader, and two clock steps (30 minutes, then past expires_at +
// Grace); each write passes, is refused, or is held and delivered at any
// later point or never (which stands for lost and landed-unacknowledged;
// "full" scenarios use the five faults and refuse reads too). Scenarios
// with a budget are sampled (seed printed); COUNTERKIT_EXHAUSTIVE=1 enumerates
// them all (10^5 to 10^7 schedules each). By default each runs a fifth of
// its budget (-short: a twentieth); COUNTERKIT_CASES above 1, all of it.
func TestTallyEveryInterleaving(t *testing.T) {
	share := 5 // a fifth of each budget
	switch {
	case proptest.Scale(1) > 1: // COUNTERKIT_CASES above 1
		share = 1
	case testing.Short():
		share = 20
	}
	for _, c := range []struct {
		sc     tallyScenario
		budget int
	}{
		{tallyScenario{gcs: 1}, 20_000},
		{tallyScenario{gcs: 1, readers: 1}, 10_000},
		{tallyScenario{gcs: 2}, 10_000},
		{tallyScenario{gcs: 1, secondUpd: true}, 10_000},
		{tallyScenario{gcs: 1, readers: 1, secondUpd: true, full: true}, 10_000},
	} {
		t.Run(fmt.Sprintf("%+v", c.sc), func(t *testing.T) {
			n := runTallyScenario(t, c.sc, c.budget/share)
			t.Logf("%d schedules", n)
		})
	}
}

// writeFaultsFor: hold alone stands for lose (never delivered) and landack
// (delivered at once), so the reduced set covers every outcome but the
// error the caller sees.
