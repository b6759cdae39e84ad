// Package schedtest is a small deterministic scheduler for exhaustive
// interleaving tests of drivers over a store.Partitions: each actor runs
// in its own goroutine and parks at every store call; the controller
// grants one call at a time, with a fault, or delivers a held write, or
// runs an event (a clock step). Every decision goes through Sched, which
// enumerates all of them depth first (re-running the scenario from
// scratch for each schedule), or draws them from its RNG. For tests only.
package schedtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

type Fault int

const (
	Pass    Fault = iota
	Refuse        // not applied, ErrUnavailable
	Lose          // not applied, ErrAmbiguousWrite
	LandAck       // applied, ErrAmbiguousWrite
	Hold          // applied later (by a deliver decision) or never, ErrAmbiguousWrite
)

func (f Fault) String() string {
	return [...]string{"pass", "refuse", "lose", "landack", "hold"}[f]
}

// Sched enumerates decision sequences depth first.
type Sched struct {
	Choices []int // the decisions of the schedule running
	counts  []int
	pos     int
	RNG     *rand.Rand // when set, decisions are drawn at random
	product float64    // product of the branching factors met (random mode)
	// Drift is set when a replayed decision was out of range (the
	// scenario did not replay its branching): the last is taken.
	Drift bool
}

// Pick returns the schedule's next decision among n.
func (s *Sched) Pick(n int) int {
	if n <= 1 {
		return 0
	}
	if s.RNG != nil {
		if s.product == 0 {
			s.product = 1
		}
		s.product *= float64(n)
		c := s.RNG.IntN(n)
		s.Choices = append(s.Choices, c)
		return c
	}
	if s.pos < len(s.Choices) {
		c := s.Choices[s.pos]
		if c >= n {
			s.Drift, c = true, n-1
			s.Choices[s.pos] = c
		}
		s.counts[s.pos] = n
		s.pos++
		return c
	}
	s.Choices = append(s.Choices, 0)
	s.counts = append(s.counts, n)
	s.pos++
	return 0
}

// Next advances to the next schedule; false when all were run.
func (s *Sched) Next() bool {
	if s.RNG != nil {
		s.Choices, s.product = s.Choices[:0], 1
		return true
	}
	s.Choices, s.counts = s.Choices[:s.pos], s.counts[:s.pos]
	for i := len(s.Choices) - 1; i >= 0; i-- {
		if s.Choices[i]+1 < s.counts[i] {
			s.Choices[i]++
			s.Choices, s.counts = s.Choices[:i+1], s.counts[:i+1]
			s.pos = 0
			return true
		}
	}
	return false
}

type request struct {
	actor int
	gate  bool // not a store call: the start of an operation
	read  bool
	done  bool
	desc  string
}

type held struct {
	muts []store.Mutation
	desc string
}

// World runs one schedule.
type World struct {
	Sched   *Sched
	Inner   store.Partitions
	msgs    chan request
	grants  []chan Fault
	held    []held
	Log     []string
	OnApply func(muts []store.Mutation) // called when a write takes effect
	// readFaults: whether reads may be refused.
	ReadFaults bool
	// writeFaults: the faults a write may get.
	WriteFaults []Fault
	// scanPage > 0 makes every page of that many rows of a Scan a call
	// of its own (a paged read: rows may change between pages).
	ScanPage int
}

type gatedStore struct {
	w     *World
	actor int
}

func (w *World) StoreFor(actor int) store.Partitions { return &gatedStore{w: w, actor: actor} }

// Gate parks the actor until the schedule starts its next operation, so
// that the operation reads the clock when it is scheduled.
func (w *World) Gate(actor int, desc string) {
	w.msgs <- request{actor: actor, gate: true, desc: desc}
	<-w.grants[actor]
}

func (s *gatedStore) ask(read bool, desc string) Fault {
	s.w.msgs <- request{actor: s.actor, read: read, desc: desc}
	return <-s.w.grants[s.actor]
}

func (s *gatedStore) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	if s.w.ScanPage <= 0 {
		if f := s.ask(true, "scan"); f != Pass {
			return fmt.Errorf("rl: scan refused: %w", crdt.ErrUnavailable)
		}
		return s.w.Inner.Scan(ctx, partition, from, level, fn)
	}
	for page := 0; ; page++ {
		if f := s.ask(true, fmt.Sprintf("scan page %d", page)); f != Pass {
			return fmt.Errorf("rl: scan page refused: %w", crdt.ErrUnavailable)
		}
		var rows []store.Row
		if err := s.w.Inner.Scan(ctx, partition, from, level, func(r store.Row) bool {
			rows = append(rows, r)
			return len(rows) < s.w.ScanPage
		}); err != nil {
			return err
		}
		for _, r := range rows {
			if !fn(r) {
				return nil
			}
		}
		if len(rows) < s.w.ScanPage {
			return nil
		}
		from = append(slices.Clone(rows[len(rows)-1].Key), 0)
	}
}

func (s *gatedStore) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	if f := s.ask(true, "snapshot"); f != Pass {
		return nil, fmt.Errorf("rl: snapshot refused: %w", crdt.ErrUnavailable)
	}
	return s.w.Inner.Snapshot(ctx, partition, limit, level)
}

func describe(muts []store.Mutation) string {
	var b strings.Builder
	for i, m := range muts {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%v %q@%d", m.Op, m.Key, m.Timestamp)
	}
	return b.String()
}

func (s *gatedStore) Apply(ctx context.Context, muts []store.Mutation) error {
	if err := store.CheckMutations(muts); err != nil {
		return err
	}
	f := s.ask(false, describe(muts))
	switch f {
	case Pass:
		return s.w.apply(ctx, muts)
	case Refuse:
		return fmt.Errorf("rl: refused: %w", crdt.ErrUnavailable)
	case Lose:
		return fmt.Errorf("rl: lost: %w", crdt.ErrAmbiguousWrite)
	case LandAck:
		if err := s.w.apply(ctx, muts); err != nil {
			return err
		}
		return fmt.Errorf("rl: landed, no ack: %w", crdt.ErrAmbiguousWrite)
	case Hold:
		c := make([]store.Mutation, len(muts))
		for i, m := range muts {
			m.Key, m.End, m.Value = slices.Clone(m.Key), slices.Clone(m.End), slices.Clone(m.Value)
			c[i] = m
		}
		s.w.held = append(s.w.held, held{muts: c, desc: describe(muts)})
		return fmt.Errorf("rl: held: %w", crdt.ErrAmbiguousWrite)
	}
	panic("unreachable")
}

func (w *World) apply(ctx context.Context, muts []store.Mutation) error {
	if err := w.Inner.Apply(ctx, muts); err != nil {
		return err
	}
	if w.OnApply != nil {
		w.OnApply(muts)
	}
	return nil
}

// Event is a controller-side step (a clock step); it may run when its
// guard allows.
type Event struct {
	Name string
	OK   func() bool // whether it may run now
	Run  func()
	used bool
}

// maxStep bounds the wait for an actor granted a call to park again or
// return: one that blocks on anything else would hold Run for good.
const maxStep = time.Minute

// recv waits for actor's next message (after its step, described by
// after), at most maxStep.
func (w *World) recv(actor int, after string) request {
	t := time.NewTimer(maxStep)
	defer t.Stop()
	select {
	case m := <-w.msgs:
		return m
	case <-t.C:
		panic(fmt.Sprintf("schedtest: hang: actor %d, after %s, neither made a store call nor returned in %v", actor, after, maxStep))
	}
}

// Run runs the actors to completion under the schedule. Events run in the
// order given (each once, when chosen); after is called when a held write
// is delivered.
func (w *World) Run(actors []func(ctx context.Context), events []*Event, deliver func(i int)) {
	ctx := context.Background()
	w.msgs = make(chan request)
	w.grants = make([]chan Fault, len(actors))
	for i := range actors {
		w.grants[i] = make(chan Fault)
	}
	pending := make([]*request, len(actors))
	live := len(actors)
	for i, a := range actors {
		go func() {
			a(ctx)
			w.msgs <- request{actor: i, done: true}
		}()
		// Wait for it to park or finish, so only one goroutine runs.
		m := w.recv(i, "its start")
		if m.done {
			live--
		} else {
			pending[i] = &m
		}
	}
	for {
		type opt struct {
			actor int
			fault Fault
			held  int
			event int
		}
		var opts []opt
		for i, p := range pending {
			if p == nil {
				continue
			}
			if p.gate {
				opts = append(opts, opt{actor: i, fault: Pass, held: -1, event: -1})
			} else if p.read {
				opts = append(opts, opt{actor: i, fault: Pass, held: -1, event: -1})
				if w.ReadFaults {
					opts = append(opts, opt{actor: i, fault: Refuse, held: -1, event: -1})
				}
			} else {
				for _, f := range w.WriteFaults {
					opts = append(opts, opt{actor: i, fault: f, held: -1, event: -1})
				}
			}
		}
		for h := range w.held {
			opts = append(opts, opt{actor: -1, held: h, event: -1})
		}
		// Only the first unused event may run (events are ordered).
		for e, ev := range events {
			if ev.used {
				continue
			}
			if ev.OK == nil || ev.OK() {
				opts = append(opts, opt{actor: -1, held: -1, event: e})
			}
			break
		}
		if len(opts) == 0 {
			break
		}
		o := opts[w.Sched.Pick(len(opts))]
		switch {
		case o.event >= 0:
			events[o.event].used = true
			events[o.event].Run()
			w.Log = append(w.Log, "event "+events[o.event].Name)
		case o.held >= 0:
			h := w.held[o.held]
			w.held = slices.Delete(w.held, o.held, o.held+1)
			w.Log = append(w.Log, "deliver "+h.desc)
			if err := w.apply(ctx, h.muts); err != nil {
				panic(err)
			}
			if deliver != nil {
				deliver(o.held)
			}
		default:
			p := pending[o.actor]
			w.Log = append(w.Log, fmt.Sprintf("actor %d %s: %s", o.actor, o.fault, p.desc))
			pending[o.actor] = nil
			w.grants[o.actor] <- o.fault
			m := w.recv(o.actor, p.desc)
			if m.done {
				live--
			} else {
				pending[o.actor] = &m
			}
		}
	}
	if live != 0 {
		panic("actors left")
	}
}

// EstimateTree is Knuth's estimate of the number of schedules: the
// mean, over random paths, of the product of the branching factors met.
func EstimateTree(runOnce func(*Sched), seed uint64, paths int) float64 {
	total := 0.0
	for i := range paths {
		s := &Sched{RNG: rand.New(rand.NewPCG(seed, uint64(i)))}
		runOnce(s)
		total += max(s.product, 1)
	}
	return total / float64(paths)
}

// Faults are the faults a write may get: pass, refuse and hold, and with
// full also lose and land-then-answer-ambiguous.
func Faults(full bool) []Fault {
	if full {
		return []Fault{Pass, Refuse, Lose, LandAck, Hold}
	}
	return []Fault{Pass, Refuse, Hold}
}

// Explore runs once under every schedule, depth first, or, with a budget,
// under at most budget schedules: a tree of at most budget/4 schedules is
// run whole, a larger one under budget schedules, the first budget/4 depth
// first and the rest drawn from proptest.Seed (logged, so that
// COUNTERKIT_SEED replays them). Under -short the budget is at most 2,000,
// and with COUNTERKIT_EXHAUSTIVE set every schedule runs. once returns a
// failure, or "". It returns how many schedules ran.
func Explore(t testing.TB, budget int, once func(*Sched) string) (schedules int) {
	t.Helper()
	sched := &Sched{}
	if testing.Short() && (budget == 0 || budget > 2_000) {
		budget = 2_000
	}
	if os.Getenv("COUNTERKIT_EXHAUSTIVE") != "" {
		budget = 0
	}
	whole := budget / 4 // depth first: the whole tree if it is this small
	for {
		if msg := once(sched); msg != "" {
			t.Fatalf("schedule %d (choices %v, seed in the log if drawn): %s", schedules, sched.Choices, msg)
		}
		schedules++
		if budget > 0 && schedules >= budget {
			return schedules
		}
		if !sched.Next() {
			return schedules
		}
		if budget > 0 && schedules == whole && sched.RNG == nil {
			seed := proptest.Seed()
			t.Logf("more than %d schedules: %d more drawn at random, seed %d (COUNTERKIT_SEED=%d replays them)", whole, budget-whole, seed, seed)
			sched.RNG = rand.New(rand.NewPCG(uint64(seed), 0))
			sched.Next()
		}
	}
}
