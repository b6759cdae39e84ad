package deltalog_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/leanovate/gopter"
	"github.com/leanovate/gopter/gen"
	"github.com/leanovate/gopter/prop"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// The simulation runs real Counters code against the paged memory store
// (page size 2), with increments (late ones anywhere in the write window,
// retries of earlier updates), merges, compactions and reads on several
// counters running concurrently. Concurrency is simulated: every store call
// parks its goroutine and a seeded random scheduler picks which one goes
// next, so a schedule replays exactly from its seed. Time advances a little
// per step within a round and jumps between rounds. Invariants: after every
// step, each counter's stored cells read as the sum of the updates that
// have landed; each read returns the sum of the updates landed when it
// started, plus any subset of those landing while it ran (checked exactly
// when none landed); an operation fails only when a write of its own is
// refused, lost or held by the fault policy (store/faulty, seeded from the
// schedule), or a read with ErrSlowScan; held writes land at the end of
// the round.

type simKey struct{}

// simFaults counts the faults injected over every schedule run.
var simFaults = struct {
	sync.Mutex
	n map[faulty.Fault]int
}{n: map[faulty.Fault]int{}}

type simOp struct {
	kind    byte // 'a' add, 'm' merge, 'c' compact, 'r' read
	counter string
	id      deltalog.ID
	delta   int64
}

func runSim(seed int64, rounds int) error {
	rng := rand.New(rand.NewSource(seed))
	ctx := context.Background()
	store := newSpy(2)
	clock := &fakeClock{now: base}
	c, err := deltalog.New(store, testOptions(clock))
	if err != nil {
		return err
	}
	counters := []string{"c0", "c1", "c2", "c3"}
	landed := map[string]map[deltalog.ID]int64{}
	for _, k := range counters {
		landed[k] = map[deltalog.ID]int64{}
	}
	sum := func(k string) int64 {
		var s int64
		for _, d := range landed[k] {
			s += d
		}
		return s
	}
	var history []simOp
	events := make(chan int)
	// Writes fail as a network makes them: refused, landed without an
	// acknowledgement, lost, or held in flight and delivered at the end of
	// the round (within SafetyMargin − 2·FutureSkew of being sent).
	store.SetPolicy(faulty.Only(faulty.Seeded(rng.Int63(), faulty.Rates{Refuse: 0.04, LoseAck: 0.04, Lose: 0.04, Hold: 0.04}), faulty.MethodApply))
	check := func(round int) error {
		for _, k := range counters {
			var l deltalog.Log
			for _, cell := range store.Cells(k) {
				if err := l.Insert(cell); err != nil {
					return fmt.Errorf("round %d: stored cells conflict: %v", round, err)
				}
			}
			if got, want := l.Value(), sum(k); got != want {
				return fmt.Errorf("round %d: counter %s reads %d from the store, want %d", round, k, got, want)
			}
		}
		return nil
	}
	for round := 0; round < rounds; round++ {
		var ops []simOp
		for range 2 + rng.Intn(6) {
			k := counters[rng.Intn(len(counters))]
			switch r := rng.Intn(10); {
			case r < 5:
				id := timeid.New(clock.Now().Add(-time.Duration(rng.Int63n(int64(55 * time.Second)))))
				op := simOp{kind: 'a', counter: k, id: id, delta: rng.Int63n(201) - 100}
				if op.delta == 0 {
					op.delta = 7
				}
				if len(history) > 0 && rng.Intn(4) == 0 { // retry an earlier update if still in the window
					h := history[rng.Intn(len(history))]
					if clock.Now().Sub(h.id.Time()) < 50*time.Second {
						op = h
					}
				}
				ops = append(ops, op)
			case r < 7:
				ops = append(ops, simOp{kind: 'm', counter: k})
			case r < 8:
				ops = append(ops, simOp{kind: 'c', counter: k})
			default:
				ops = append(ops, simOp{kind: 'r', counter: k})
			}
		}
		resume := make([]chan bool, len(ops))
		errs := make([]error, len(ops))
		readStart := make([]int64, len(ops))
		readLanded := make([]bool, len(ops))
		readVal := make([]int64, len(ops))
		running := -1
		store.SetHook(func(ctx context.Context, call faulty.Call, after bool) error {
			i, ok := ctx.Value(simKey{}).(int)
			if !ok {
				return nil
			}
			if after {
				if ops[i].kind == 'a' && call.Method == faulty.MethodApply {
					landed[ops[i].counter][ops[i].id] = ops[i].delta
					for j := range ops {
						if ops[j].kind == 'r' && ops[j].counter == ops[i].counter {
							readLanded[j] = true
						}
					}
				}
				return nil
			}
			events <- i
			<-resume[i]
			return nil
		})
		for i := range ops {
			resume[i] = make(chan bool)
			go func(i int) {
				defer func() { events <- -1 - i }()
				<-resume[i]
				cctx := context.WithValue(ctx, simKey{}, i)
				switch o := ops[i]; o.kind {
				case 'a':
					errs[i] = c.Add(cctx, o.counter, o.id, o.delta)
				case 'm':
					_, _, errs[i] = c.Merge(cctx, o.counter)
				case 'c':
					_, errs[i] = c.Compact(cctx, o.counter)
				case 'r':
					readStart[i] = sum(o.counter)
					var r deltalog.Reading
					r, errs[i] = c.Read(cctx, o.counter)
					readVal[i] = r.Value
				}
			}(i)
		}
		live := make([]int, len(ops))
		for i := range live {
			live[i] = i
		}
		for len(live) > 0 {
			j := rng.Intn(len(live))
			running = live[j]
			resume[running] <- true
			var ev int
			select {
			case ev = <-events:
			case <-time.After(time.Minute): // blocked on something other than the store
				return fmt.Errorf("round %d: operation %d neither reached a store call nor returned in %v", round, running, time.Minute)
			}
			if ev < 0 {
				live = append(live[:j], live[j+1:]...)
			}
			clock.Advance(time.Duration(rng.Intn(200)) * time.Millisecond)
			if err := check(round); err != nil {
				return err
			}
		}
		if err := store.DeliverAll(); err != nil {
			return err
		}
		if err := check(round); err != nil {
			return fmt.Errorf("after delivering held writes: %v", err)
		}
		for i, err := range errs {
			failedWrite := ops[i].kind != 'r' && (errors.Is(err, crdt.ErrUnavailable) || errors.Is(err, crdt.ErrAmbiguousWrite))
			if err != nil && !errors.Is(err, deltalog.ErrSlowScan) && !failedWrite {
				return fmt.Errorf("round %d: op %c on %s: %v", round, ops[i].kind, ops[i].counter, err)
			}
			if ops[i].kind == 'r' && err == nil && !readLanded[i] && readVal[i] != readStart[i] {
				return fmt.Errorf("round %d: read of %s returned %d, want %d", round, ops[i].counter, readVal[i], readStart[i])
			}
			if ops[i].kind == 'a' {
				history = append(history, ops[i])
			}
		}
		store.SetHook(nil)
		clock.Advance(time.Duration(rng.Intn(40)) * time.Second)
	}
	store.SetPolicy(nil)
	simFaults.Lock()
	for f, n := range store.Counts() {
		simFaults.n[f] += n
	}
	simFaults.Unlock()
	// Quiescence: after the window, one merge and a compaction per counter
	// leave exactly one cell holding the sum.
	clock.Advance(2 * time.Minute)
	for _, k := range counters {
		if _, _, err := c.Merge(ctx, k); err != nil {
			return err
		}
	}
	clock.Advance(time.Minute)
	for _, k := range counters {
		if _, err := c.Compact(ctx, k); err != nil {
			return err
		}
		r, err := c.Read(ctx, k)
		if err != nil || r.Value != sum(k) {
			return fmt.Errorf("final read of %s: %d (%v), want %d", k, r.Value, err, sum(k))
		}
		if n := store.Len(k); n > 1 {
			return fmt.Errorf("counter %s has %d cells after the final compaction", k, n)
		}
	}
	return nil
}

// TestSimulation runs proptest.Scale(120) random schedules of 12 rounds
// each (COUNTERKIT_CASES=100 gives 12,000); -short (the race pass), 40
// unless COUNTERKIT_CASES is above 1.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./deltalog -run TestSimulation
func TestSimulation(t *testing.T) {
	seed := proptest.Seed()
	n := proptest.Scale(120)
	if testing.Short() && proptest.Scale(1) == 1 {
		n = 40
	}
	t.Logf("seed %d, %d schedules; replay: %s", seed, n, proptest.Replay(t, seed))
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = n
	props := gopter.NewProperties(params)
	props.Property("every schedule reads the sum of landed updates", prop.ForAll(func(s int64) string {
		if err := runSim(s, 12); err != nil {
			return fmt.Sprintf("schedule %d: %v", s, err)
		}
		return ""
	}, gen.Int64()))
	props.TestingRun(t)
	simFaults.Lock()
	defer simFaults.Unlock()
	t.Logf("faults injected: %v", simFaults.n)
	for _, f := range []faulty.Fault{faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Hold} {
		if simFaults.n[f] == 0 {
			t.Errorf("no %v fault was injected", f)
		}
	}
}
