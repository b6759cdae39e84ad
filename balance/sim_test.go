package balance_test

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

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// The simulation runs the real Accounts against the memory store with many
// accounts and, in each round, a random mix of increments (late ones within
// the window, retries of earlier ones, earlier ids reused with another
// amount), transfers between two accounts (one atomic batch), merges
// (several at once on one account) and crashes (an operation stopped before
// one of its store calls). A seeded random scheduler interleaves the
// operations at every store call, so a schedule replays from its seed. Time
// moves a little per step and jumps between rounds, so merges settle and
// collect each other's rows. After every step each account's balance,
// evaluated on the store snapshot, must count every update id that has
// landed exactly once, with one of the amounts that landed for it
// (checkOnce), and every id whose rows show two amounts must be reported
// as a conflict. When the schedule is over, the two merges of the
// compaction bound must leave every account with one row.

type simTid struct{}

type simOp struct {
	kind  byte // 'a' add, 't' transfer, 'm' merge
	acct  string
	to    string
	id    balance.ID
	delta int64
	crash int // crash before this store call (0 = never)
}

// scheduler runs operations as goroutines that park at every store call
// (park, from the store's hook) and resumes one parked operation at a
// time, chosen by the seeded rng, so that a schedule replays from its seed.
type scheduler struct {
	events chan int // the index of an operation that parked, or -1-i when it returned
	resume []chan bool
}

func newScheduler() *scheduler { return &scheduler{events: make(chan int)} }

// park is called by operation i, from the store's hook, before each call.
func (s *scheduler) park(i int) {
	s.events <- i
	<-s.resume[i]
}

// run starts op(0), ..., op(n-1), each parked before it begins, and resumes
// a random live one until all have returned, calling step after each
// resumed step; an error from step ends the run (the parked operations are
// abandoned).
func (s *scheduler) run(rng *rand.Rand, n int, op func(i int), step func() error) error {
	s.resume = make([]chan bool, n)
	for i := range s.resume {
		s.resume[i] = make(chan bool)
	}
	for i := 0; i < n; i++ {
		go func(i int) {
			defer func() { s.events <- -1 - i }()
			<-s.resume[i]
			op(i)
		}(i)
	}
	live := make([]int, n)
	for i := range live {
		live[i] = i
	}
	for len(live) > 0 {
		j := rng.Intn(len(live))
		s.resume[live[j]] <- true
		var ev int
		select {
		case ev = <-s.events:
		case <-time.After(simStepLimit): // blocked on something other than the store
			return fmt.Errorf("operation %d neither reached a store call nor returned in %v", live[j], simStepLimit)
		}
		if ev < 0 {
			live = append(live[:j], live[j+1:]...)
		}
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// simStepLimit bounds one resumed step of the scheduler: an operation
// that neither parks at its next store call nor returns in it is reported,
// with its schedule's seed, rather than waited for until go test's timeout.
const simStepLimit = time.Minute

func runSim(seed int64, rounds int) error {
	rng := rand.New(rand.NewSource(seed))
	ctx := context.Background()
	store := newSpy()
	c := &clock{now: t0}
	l, err := balance.New(store, balance.Options{Clock: c.Now})
	if err != nil {
		return err
	}
	accts := []string{"a0", "a1", "a2", "a3", "a4"}
	landed := map[string]map[balance.ID]map[int64]bool{}
	for _, a := range accts {
		landed[a] = map[balance.ID]map[int64]bool{}
	}
	land := func(a string, id balance.ID, amount int64) {
		if landed[a][id] == nil {
			landed[a][id] = map[int64]bool{}
		}
		landed[a][id][amount] = true
	}
	var history []simOp
	sched := newScheduler()
	// Writes fail as a network makes them: refused, landed without an
	// acknowledgement, lost, or held in flight and delivered a step or two
	// later (well within SafetyMargin − 2·FutureSkew).
	store.SetPolicy(faulty.Only(faulty.Seeded(rng.Int63(), faulty.Rates{Refuse: 0.03, LoseAck: 0.03, Lose: 0.03, Hold: 0.03}), faulty.MethodApply))
	for round := 0; round < rounds; round++ {
		var ops []simOp
		for range 2 + rng.Intn(5) {
			a := accts[rng.Intn(len(accts))]
			o := simOp{acct: a}
			switch r := rng.Intn(10); {
			case r < 4:
				o.kind, o.id, o.delta = 'a', timeid.New(c.now.Add(-time.Duration(rng.Int63n(int64(4*time.Minute))))), rng.Int63n(199)-99
				if o.delta == 0 {
					o.delta = 50
				}
				if len(history) > 0 && rng.Intn(3) == 0 {
					if h := history[rng.Intn(len(history))]; c.now.Sub(h.id.Time()) < 4*time.Minute {
						o = h // a retry
						if rng.Intn(3) == 0 {
							// The id reused with another amount.
							o.delta = h.delta + 1 + rng.Int63n(40)
							if o.delta == 0 {
								o.delta = h.delta - 1
							}
						}
					}
				}
			case r < 6:
				o.kind, o.to, o.id, o.delta = 't', accts[rng.Intn(len(accts))], timeid.New(c.now), rng.Int63n(20)+1
				if o.to == o.acct {
					o.kind = 'a'
				}
			default:
				o.kind = 'm'
			}
			if rng.Intn(8) == 0 {
				o.crash = 1 + rng.Intn(5)
			}
			ops = append(ops, o)
		}
		calls := make([]int, len(ops))
		errs := make([]error, len(ops))
		store.SetHook(func(ctx context.Context, call faulty.Call, after bool) error {
			i, ok := ctx.Value(simTid{}).(int)
			if !ok {
				return nil
			}
			o := ops[i]
			if after {
				if call.Method == faulty.MethodApply && o.kind != 'm' {
					land(o.acct, o.id, -o.delta*boolInt(o.kind == 't')+o.delta*boolInt(o.kind == 'a'))
					if o.kind == 't' {
						land(o.to, o.id, o.delta)
					}
				}
				return nil
			}
			calls[i]++
			if o.crash == calls[i] {
				return errCrash
			}
			sched.park(i)
			return nil
		})
		err := sched.run(rng, len(ops), func(i int) {
			cctx := context.WithValue(ctx, simTid{}, i)
			switch o := ops[i]; o.kind {
			case 'a':
				errs[i] = l.Add(cctx, o.acct, o.id, o.delta)
			case 't':
				var b balance.Batch
				b.Add(o.acct, o.id, -o.delta)
				b.Add(o.to, o.id, o.delta)
				errs[i] = l.Apply(cctx, &b)
			case 'm':
				_, errs[i] = l.Merge(cctx, o.acct)
			}
		}, func() error {
			c.now = c.now.Add(time.Duration(rng.Intn(1500)) * time.Millisecond)
			if rng.Intn(2) == 0 {
				if err := store.DeliverAll(); err != nil {
					return err
				}
			}
			for _, a := range accts {
				if err := checkOnce(store.Stored(a), landed[a]); err != nil {
					return fmt.Errorf("round %d: account %s: %v\nrows %v", round, a, err, store.Stored(a))
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := store.DeliverAll(); err != nil {
			return err
		}
		for _, a := range accts {
			if err := checkOnce(store.Stored(a), landed[a]); err != nil {
				return fmt.Errorf("round %d, held writes delivered: account %s: %v\nrows %v", round, a, err, store.Stored(a))
			}
		}
		for i, err := range errs {
			faulted := errors.Is(err, crdt.ErrUnavailable) || errors.Is(err, crdt.ErrAmbiguousWrite)
			if err != nil && !errors.Is(err, errCrash) && !errors.Is(err, balance.ErrSlowMerge) && !faulted {
				return fmt.Errorf("round %d: op %c on %s: %v", round, ops[i].kind, ops[i].acct, err)
			}
			if ops[i].kind == 'a' {
				history = append(history, ops[i])
			}
		}
		store.SetHook(nil)
		c.now = c.now.Add(time.Duration(rng.Intn(150)) * time.Second)
	}
	simFaults.Lock()
	for f, n := range store.Counts() {
		simFaults.n[f] += n
	}
	simFaults.Unlock()
	store.SetPolicy(nil)
	// Quiescence: once every row is GCGrace old, two merges (the second
	// SettleGrace later) compact every account to one row, and the counts
	// still hold.
	opts := l.Options()
	for i, wait := range []time.Duration{opts.GCGrace + opts.FutureSkew, opts.SettleGrace + opts.FutureSkew} {
		c.now = c.now.Add(wait)
		for _, a := range accts {
			if _, err := l.Merge(ctx, a); err != nil {
				return fmt.Errorf("quiescent merge %d: %v", i+1, err)
			}
			if err := checkOnce(store.Stored(a), landed[a]); err != nil {
				return fmt.Errorf("after quiescent merge %d, account %s: %v", i+1, a, err)
			}
		}
	}
	for _, a := range accts {
		if rows := store.Stored(a); len(rows) > 1 {
			return fmt.Errorf("account %s not compacted by two merges: %v", a, rows)
		}
	}
	return nil
}

var errCrash = errors.New("simulated crash")

// simFaults counts the faults injected over every schedule run.
var simFaults = struct {
	sync.Mutex
	n map[faulty.Fault]int
}{n: map[faulty.Fault]int{}}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestSimulation runs proptest.Scale(100) random schedules of 15 rounds
// (COUNTERKIT_CASES=100 gives 10,000).
//
// Replay: COUNTERKIT_SEED=<seed> go test ./balance -run '^TestSimulation$'
func TestSimulation(t *testing.T) {
	seed := proptest.Seed()
	n := proptest.Scale(100)
	t.Logf("seed %d, %d schedules; replay: %s", seed, n, proptest.Replay(t, seed))
	params := gopter.DefaultTestParametersWithSeed(seed)
	params.MinSuccessfulTests = n
	props := gopter.NewProperties(params)
	props.Property("every step reads the sum of landed updates", prop.ForAll(func(s int64) string {
		if err := runSim(s, 15); err != nil {
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
