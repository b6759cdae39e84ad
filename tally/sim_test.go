package tally_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tally"
)

// The simulation drives a Sum tally through random schedules against
// memory.Partitions (Cassandra's LWW rules) behind staleRows, whose stale
// reads show each row at any version it held, and store/faulty, which
// refuses, loses, lands without acknowledgement or holds each write as the
// schedule decides (a recorder above it shows the policy each call's
// batch). Schedules cover mutators born and
// killed at random, processes whose clocks are off by up to MaxSkew (and
// change), refused, lost, landed-but-unacknowledged and late (held) writes,
// GCs that race, crash between planning and writing, or land late, and
// stale reads.
//
// The model is a plain account of operations: each increment is an op with
// an id and an amount. The simulation knows which write attempts landed
// (it decides the faults) and which ops each attempt was meant to carry
// (the mutator's acknowledged ops plus the ones being flushed), so the
// value a complete read must show is, per mutator, the sum of the ops of
// its highest-timestamped landed attempt. Independently of that, every
// acknowledged op must be among them. A stale read must never exceed the
// sum, over mutators, of their largest landed version (no double count).
//
// Replay: COUNTERKIT_SEED=<seed printed on failure> go test ./tally -run '^TestSimulation$'
// (the failed schedule runs first). Scale: COUNTERKIT_CASES=50 go test
// ./tally -run '^TestSimulation$' (10,000 schedules).

const (
	simKey       = "sim"
	simSteps     = 400
	simProcs     = 4
	simMaxLive   = 12
	simBaseCases = 200 // schedules before COUNTERKIT_CASES scaling
)

// simCfg keeps lifetimes short next to the step sizes, so schedules cross
// many expiries, margins and GC cutoffs.
var simCfg = tally.Options{
	Lifetime: simLifetime,
	Margin:   30 * time.Minute,
	MaxSkew:  simMaxSkew,
	Grace:    simGrace, // the least the contract allows: 3·MaxSkew
	Retries:  2,
}

const (
	simLifetime = 6 * time.Hour
	simMaxSkew  = 30 * time.Minute
	simGrace    = 3 * simMaxSkew
)

// weather is the store's current failure mode; faults come in spells, so
// that retries meet the same trouble as the first attempt.
type weather int

const (
	calm      weather = iota // a few independent faults
	flaky                    // half the calls fail, in every way
	outage                   // every write is refused (certainly not applied)
	partition                // every write times out (lost, landed or held)
)

// simMutator is what the simulation drives: the library's Mutator, or
// memoryFirstMutator, a broken variant, to show the simulation catching its
// bug.
type simMutator interface {
	ID() crdt.ActorID
	Stage(amount int64) error
	Flush(ctx context.Context) error
	Retry(ctx context.Context) error
	Abandon(ctx context.Context) error
}

type realMutator struct{ m *tally.Mutator[*tally.Sum] }

func (r realMutator) ID() crdt.ActorID                  { return r.m.ID() }
func (r realMutator) Stage(n int64) error               { return r.m.Stage(add(n)) }
func (r realMutator) Flush(ctx context.Context) error   { return r.m.Flush(ctx) }
func (r realMutator) Retry(ctx context.Context) error   { return r.m.Retry(ctx) }
func (r realMutator) Abandon(ctx context.Context) error { return r.m.Abandon(ctx) }

// memoryFirstMutator is a broken mutator: it changes its memory first and
// saves afterwards, and its caller retries a failed update by applying it
// again. Everything else (ids, expiry, timestamps, encoding, row layout) is
// correct.
type memoryFirstMutator struct {
	store     store.Partitions
	clock     func() time.Time
	id        crdt.ActorID
	expiresAt int64
	state     int64
	unsaved   []int64 // amounts applied to memory since the last save
	lastTS    int64
}

func (s *memoryFirstMutator) ID() crdt.ActorID { return s.id }

func (s *memoryFirstMutator) Stage(n int64) error {
	if s.clock().UnixMicro() >= s.expiresAt-simCfg.Margin.Microseconds() {
		return crdt.ErrExpired
	}
	s.state += n // memory first: the bug
	s.unsaved = append(s.unsaved, n)
	return nil
}

func (s *memoryFirstMutator) Flush(ctx context.Context) error {
	if len(s.unsaved) == 0 {
		return nil
	}
	ts := max(s.lastTS+1, s.clock().UnixMicro())
	if ts >= s.expiresAt {
		return crdt.ErrExpired
	}
	s.lastTS = ts
	b, err := tally.Shard[*tally.Sum]{Mutator: s.id, ExpiresAt: s.expiresAt, State: sumOfUnchecked(s.state)}.MarshalBinary()
	if err != nil {
		return err
	}
	put := store.Mutation{Partition: simKey, Op: store.OpPut, Key: tally.ShardRowKey(s.id), Value: b, Timestamp: ts}
	if err := s.store.Apply(ctx, []store.Mutation{put}); err != nil {
		if errors.Is(err, crdt.ErrUnavailable) {
			// It keeps its memory; report it as unknown.
			return fmt.Errorf("%w: %w", crdt.ErrAmbiguousWrite, err)
		}
		return err
	}
	s.unsaved = nil
	return nil
}

// Retry is what its caller does after a failed update: apply it again and
// save.
func (s *memoryFirstMutator) Retry(ctx context.Context) error {
	for _, n := range s.unsaved {
		s.state += n
	}
	s.unsaved = append(s.unsaved, s.unsaved...)
	return s.Flush(ctx)
}

func (s *memoryFirstMutator) Abandon(context.Context) error {
	panic("memoryFirstMutator has no abandon")
}

func sumOfUnchecked(n int64) *tally.Sum {
	s := new(tally.Sum)
	_ = s.Add(n)
	return s
}

type simProc struct {
	skew    int64 // µs, within ±MaxSkew
	counter *tally.Counter[*tally.Sum]
}

type simMut struct {
	impl      simMutator
	proc      *simProc
	expiresAt int64 // µs
	alive     bool
	committed []int // acknowledged ops
	staged    []int
	pending   []int // ops of the unresolved write
	unres     bool

	landed     bool
	landedTS   int64
	landedOps  []int
	maxVersion int64 // largest sum of any landed version
}

type heldPut struct {
	mut    *simMut
	ts     int64
	ops    []int
	sentAt int64
}

type simWorld struct {
	rng      *rand.Rand
	seed     int64
	buggy    bool
	now      int64 // true time, µs
	start    int64
	store    *recorder // faulty.Partitions over staleRows over memory.Partitions
	procs    []*simProc
	muts     map[crdt.ActorID]*simMut
	order    []*simMut // creation order, for reproducible picks
	amounts  []int64   // op id → amount
	curOps   []int     // ops the write in progress is meant to carry
	faultsOn bool
	weather  weather
	held     map[uint64]heldPut
	heldGC   []uint64
	plans    []tally.GCPlan
	log      []string
	nextID   int
	stats    simStats
}

type simStats struct {
	acked, ambiguous, retried, abandoned, expired, gcs, folded, lateDeliveries, staleReads int
}

func (w *simWorld) logf(format string, args ...any) {
	at := time.Duration(w.now-w.start) * time.Microsecond
	w.log = append(w.log, fmt.Sprintf("t=%s ", at)+fmt.Sprintf(format, args...))
	if len(w.log) > 40 {
		w.log = w.log[1:]
	}
}

func (w *simWorld) failf(format string, args ...any) error {
	return fmt.Errorf("seed %d: %s\nlast events:\n  %s", w.seed, fmt.Sprintf(format, args...), strings.Join(w.log, "\n  "))
}

func newSimWorld(seed int64, buggy bool) (*simWorld, error) {
	w := &simWorld{
		rng:   rand.New(rand.NewPCG(uint64(seed), 0x7a11)),
		seed:  seed,
		buggy: buggy,
		now:   time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro(),
		store: newRecorder(newStaleRows(memory.NewPartitions(), rand.New(rand.NewPCG(uint64(seed), 0x57a1e))), faulty.Options{History: -1}),
		muts:  map[crdt.ActorID]*simMut{},
		held:  map[uint64]heldPut{},
	}
	w.start = w.now
	w.store.SetPolicy(w.fault)
	for i := range simProcs {
		p := &simProc{skew: w.randSkew()}
		cfg := simCfg
		cfg.Clock = func() time.Time { return time.UnixMicro(w.now + p.skew) }
		cfg.NewID = func() crdt.ActorID {
			w.nextID++
			return crdt.ActorID(fmt.Sprintf("p%d-m%d", i, w.nextID))
		}
		c, err := tally.New[*tally.Sum](w.store, simKey, cfg)
		if err != nil {
			return nil, err
		}
		p.counter = c
		w.procs = append(w.procs, p)
	}
	return w, nil
}

func (w *simWorld) randSkew() int64 {
	s := simCfg.MaxSkew.Microseconds()
	switch w.rng.IntN(4) {
	case 0:
		return -s // the extremes are the interesting cases
	case 1:
		return s
	default:
		return w.rng.Int64N(2*s+1) - s
	}
}

// fault decides each store call's fate and records what landed.
func (w *simWorld) fault(c faulty.Call) faulty.Fault {
	muts, level := w.store.current()
	f := faulty.Pass
	if w.faultsOn {
		f = w.draw(c, level)
	}
	if id, ts, ok := shardPut(c, muts); ok {
		m := w.muts[id]
		switch f {
		case faulty.Pass, faulty.LoseAck:
			w.land(m, ts, w.curOps)
		case faulty.Hold:
			w.held[c.N] = heldPut{mut: m, ts: ts, ops: slices.Clone(w.curOps), sentAt: w.now}
		}
	} else if isGC(c, muts) && f == faulty.Hold {
		w.heldGC = append(w.heldGC, c.N)
	}
	return f
}

// draw picks a fault for c (a read at level, or a write) under the current
// weather.
func (w *simWorld) draw(c faulty.Call, level store.Read) faulty.Fault {
	r := w.rng.IntN(100)
	if c.Method != faulty.MethodApply {
		if level == store.ReadComplete && (w.weather == outage || r < 5) {
			return faulty.Refuse
		}
		return faulty.Pass
	}
	timeouts := []faulty.Fault{faulty.Lose, faulty.LoseAck, faulty.Hold}
	switch w.weather {
	case outage:
		return faulty.Refuse
	case partition:
		return timeouts[w.rng.IntN(3)]
	case flaky:
		if r < 50 {
			return faulty.Pass
		}
		if r < 65 {
			return faulty.Refuse
		}
		return timeouts[w.rng.IntN(3)]
	}
	switch {
	case r < 3:
		return faulty.Refuse
	case r < 9:
		return timeouts[w.rng.IntN(3)]
	}
	return faulty.Pass
}

func (w *simWorld) sum(ops []int) int64 {
	var t int64
	for _, o := range ops {
		t += w.amounts[o]
	}
	return t
}

func (w *simWorld) land(m *simMut, ts int64, ops []int) {
	if !m.landed || ts >= m.landedTS {
		m.landed, m.landedTS, m.landedOps = true, ts, slices.Clone(ops)
	}
	m.maxVersion = max(m.maxVersion, w.sum(ops))
}

func (w *simWorld) expected() int64 {
	var t int64
	for _, m := range w.order {
		t += w.sum(m.landedOps)
	}
	return t
}

// check compares a complete read with the model and a stale read with the
// no-double-count bound.
func (w *simWorld) check(ctx context.Context) error {
	saved := w.faultsOn
	w.faultsOn = false
	defer func() { w.faultsOn = saved }()
	for _, m := range w.order {
		for _, o := range m.committed {
			if !slices.Contains(m.landedOps, o) {
				return w.failf("op %d acknowledged by %s is not in its latest landed write %v", o, m.impl.ID(), m.landedOps)
			}
		}
	}
	p := w.procs[w.rng.IntN(len(w.procs))]
	v, err := p.counter.ReadComplete(ctx)
	if err != nil {
		return w.failf("complete read: %v", err)
	}
	if want := w.expected(); v.Value() != want {
		return w.failf("complete read = %d, model = %d", v.Value(), want)
	}
	if w.rng.IntN(3) == 0 {
		w.stats.staleReads++
		s, err := p.counter.Read(ctx)
		if err != nil {
			return w.failf("stale read: %v", err)
		}
		var bound int64
		for _, m := range w.order {
			bound += m.maxVersion
		}
		if s.Value() < 0 || s.Value() > bound {
			return w.failf("stale read = %d outside [0, %d]: something was counted twice", s.Value(), bound)
		}
	}
	return nil
}

func (w *simWorld) alive() []*simMut {
	var out []*simMut
	for _, m := range w.order {
		if m.alive {
			out = append(out, m)
		}
	}
	return out
}

func (w *simWorld) newMutator() error {
	p := w.procs[w.rng.IntN(len(w.procs))]
	var impl simMutator
	if w.buggy {
		clock := func() time.Time { return time.UnixMicro(w.now + p.skew) }
		w.nextID++
		impl = &memoryFirstMutator{store: w.store, clock: clock, id: crdt.ActorID(fmt.Sprintf("mf-m%d", w.nextID)),
			expiresAt: clock().Add(simCfg.Lifetime).UnixMicro()}
	} else {
		m, err := p.counter.NewMutator()
		if err != nil {
			return w.failf("new mutator: %v", err)
		}
		impl = realMutator{m}
	}
	sm := &simMut{impl: impl, alive: true, proc: p, expiresAt: w.now + p.skew + simCfg.Lifetime.Microseconds()}
	w.muts[impl.ID()] = sm
	w.order = append(w.order, sm)
	w.logf("new mutator %s", impl.ID())
	return nil
}

// afterWrite applies the documented meaning of a Flush result to the model.
func (w *simWorld) afterFlush(m *simMut, err error) error {
	switch {
	case err == nil:
		m.committed = append(m.committed, m.staged...)
		w.stats.acked += len(m.staged)
	case errors.Is(err, crdt.ErrAmbiguousWrite):
		w.stats.ambiguous++
		m.unres = true
		m.pending = append(slices.Clone(m.committed), m.staged...)
		if errors.Is(err, crdt.ErrExpired) {
			m.alive = false
		}
	case errors.Is(err, crdt.ErrExpired):
		w.stats.expired++
		m.alive = false
	case errors.Is(err, crdt.ErrUnavailable):
	default:
		return w.failf("flush %s: unexpected error %v", m.impl.ID(), err)
	}
	m.staged = nil
	return nil
}

func (w *simWorld) update(ctx context.Context, m *simMut, n int) error {
	for range n {
		amt := 1 + w.rng.Int64N(1000)
		if err := m.impl.Stage(amt); err != nil {
			if errors.Is(err, crdt.ErrExpired) {
				w.stats.expired++
				w.logf("%s stage: expired", m.impl.ID())
				m.alive, m.staged = false, nil
				return nil
			}
			return w.failf("stage %s: %v", m.impl.ID(), err)
		}
		w.amounts = append(w.amounts, amt)
		m.staged = append(m.staged, len(w.amounts)-1)
	}
	w.curOps = append(slices.Clone(m.committed), m.staged...)
	err := m.impl.Flush(ctx)
	w.logf("%s flush %v (+%d): %v", m.impl.ID(), m.staged, w.sum(m.staged), err)
	return w.afterFlush(m, err)
}

func (w *simWorld) resolve(ctx context.Context, m *simMut) error {
	// memoryFirstMutator's caller only knows how to retry.
	if w.buggy || w.rng.IntN(10) < 6 {
		w.curOps = m.pending
		err := m.impl.Retry(ctx)
		w.logf("%s retry %v: %v", m.impl.ID(), m.pending, err)
		switch {
		case err == nil:
			w.stats.retried++
			m.committed, m.pending, m.unres = m.pending, nil, false
		case errors.Is(err, crdt.ErrAmbiguousWrite):
			if errors.Is(err, crdt.ErrExpired) {
				m.alive = false
			}
		default:
			return w.failf("retry %s: unexpected error %v", m.impl.ID(), err)
		}
		return nil
	}
	w.curOps = m.committed
	err := m.impl.Abandon(ctx)
	w.logf("%s abandon %v: %v", m.impl.ID(), m.pending, err)
	switch {
	case err == nil:
		w.stats.abandoned++
		m.pending, m.unres = nil, false
	case errors.Is(err, crdt.ErrAmbiguousWrite):
		if errors.Is(err, crdt.ErrExpired) {
			m.alive = false
		}
	default:
		return w.failf("abandon %s: unexpected error %v", m.impl.ID(), err)
	}
	return nil
}

// advance moves true time; held shard writes whose in-flight bound
// (MaxSkew) would pass are delivered before it or never.
func (w *simWorld) advance(d int64) {
	for _, seq := range sortedKeys(w.held) {
		h := w.held[seq]
		if w.now+d-h.sentAt > simCfg.MaxSkew.Microseconds() {
			w.settleHeld(seq, w.rng.IntN(2) == 0)
		}
	}
	w.now += d
	w.logf("advance %s", time.Duration(d)*time.Microsecond)
}

func (w *simWorld) settleHeld(seq uint64, deliver bool) {
	h := w.held[seq]
	delete(w.held, seq)
	if deliver {
		w.store.deliverCall(seq)
		w.land(h.mut, h.ts, h.ops)
		w.stats.lateDeliveries++
		w.logf("late delivery of %s@%d %v", h.mut.impl.ID(), h.ts, h.ops)
	}
	// Otherwise the write is lost in flight: faulty keeps it held, and
	// nothing ever delivers it.
}

func sortedKeys[V any](m map[uint64]V) []uint64 {
	ks := make([]uint64, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func (w *simWorld) gcErr(what string, err error) error {
	if err == nil || errors.Is(err, crdt.ErrAmbiguousWrite) || errors.Is(err, crdt.ErrUnavailable) {
		return nil
	}
	return w.failf("%s: unexpected error %v", what, err)
}

func (w *simWorld) step(ctx context.Context) error {
	live := w.alive()
	var resolved, unresolved []*simMut
	for _, m := range live {
		if m.unres {
			unresolved = append(unresolved, m)
		} else {
			resolved = append(resolved, m)
		}
	}
	switch r := w.rng.IntN(100); {
	case r < 8 && len(live) < simMaxLive:
		return w.newMutator()
	case r < 38 && len(resolved) > 0:
		return w.update(ctx, resolved[w.rng.IntN(len(resolved))], 1)
	case r < 46 && len(resolved) > 0:
		return w.update(ctx, resolved[w.rng.IntN(len(resolved))], 2+w.rng.IntN(4))
	case r < 56 && len(unresolved) > 0:
		return w.resolve(ctx, unresolved[w.rng.IntN(len(unresolved))])
	case r < 60 && len(live) > 0:
		m := live[w.rng.IntN(len(live))]
		m.alive = false
		w.logf("%s dies (unresolved: %v)", m.impl.ID(), m.unres)
	case r < 72:
		w.advance(1_000_000 + w.rng.Int64N(5*60*1_000_000))
	case r < 75:
		w.advance(w.rng.Int64N(2 * 3600 * 1_000_000))
	case r < 79:
		w.weather = calm // half the time
		if r := w.rng.IntN(8); r < 4 {
			w.weather = weather(r)
		}
		w.logf("weather %d", w.weather)
	case r < 82:
		p := w.procs[w.rng.IntN(len(w.procs))]
		p.skew = w.randSkew()
		w.logf("clock skew of a process now %s", time.Duration(p.skew)*time.Microsecond)
	case r < 87:
		plan, err := w.procs[w.rng.IntN(len(w.procs))].counter.GC(ctx)
		w.stats.gcs++
		w.stats.folded += plan.Folded
		w.logf("gc folded %d through %d: %v", plan.Folded, plan.Batch.WriteTS, err)
		return w.gcErr("gc", err)
	case r < 90:
		plan, err := w.procs[w.rng.IntN(len(w.procs))].counter.PlanGC(ctx)
		w.logf("gc planned %d through %d: %v", plan.Folded, plan.Batch.WriteTS, err)
		if err == nil && !plan.Empty() {
			w.plans = append(w.plans, plan)
		}
		return w.gcErr("plan gc", err)
	case r < 93 && len(w.plans) > 0:
		i := w.rng.IntN(len(w.plans))
		plan := w.plans[i]
		if w.rng.IntN(4) == 0 {
			w.logf("gc crashed before writing its plan through %d", plan.Batch.WriteTS)
		} else {
			err := w.store.Apply(ctx, plan.Batch.Mutations(simKey))
			w.stats.gcs++
			w.logf("late gc batch through %d: %v", plan.Batch.WriteTS, err)
			if w.rng.IntN(3) == 0 {
				return w.gcErr("apply gc", err) // keep it: it may be applied again
			}
		}
		w.plans = slices.Delete(w.plans, i, i+1)
	case r < 93 && len(resolved) > 0:
		return w.edge(ctx, resolved[w.rng.IntN(len(resolved))])
	case r < 95 && len(unresolved) > 0:
		return w.edgeResolve(ctx, unresolved[w.rng.IntN(len(unresolved))])
	case r < 98 && (len(w.held) > 0 || len(w.heldGC) > 0):
		if len(w.heldGC) > 0 && w.rng.IntN(2) == 0 {
			i := w.rng.IntN(len(w.heldGC))
			w.store.deliverCall(w.heldGC[i])
			w.logf("held gc batch delivered")
			w.heldGC = slices.Delete(w.heldGC, i, i+1)
		} else if len(w.held) > 0 {
			ks := sortedKeys(w.held)
			w.settleHeld(ks[w.rng.IntN(len(ks))], w.rng.IntN(4) != 0)
		}
	}
	return nil
}

// edge is the adversarial schedule around a mutator's expiry: jump to just
// before its refuse margin (by its own clock), then interleave GCs from the
// processes whose clocks run furthest ahead with its last updates.
func (w *simWorld) edge(ctx context.Context, m *simMut) error {
	w.worstSkews(m)
	target := m.expiresAt - simCfg.Margin.Microseconds() - m.proc.skew - w.rng.Int64N(3*60*1_000_000)
	if target > w.now {
		w.advance(target - w.now)
	}
	fast := w.fastest()
	for range 1 + w.rng.IntN(3) {
		if w.rng.IntN(2) == 0 {
			plan, err := fast.counter.GC(ctx)
			w.stats.gcs++
			w.stats.folded += plan.Folded
			w.logf("edge gc folded %d through %d: %v", plan.Folded, plan.Batch.WriteTS, err)
			if err := w.gcErr("edge gc", err); err != nil {
				return err
			}
		}
		if m.alive && !m.unres {
			if err := w.update(ctx, m, 1); err != nil {
				return err
			}
		}
		w.advance(w.rng.Int64N(20 * 60 * 1_000_000))
	}
	return nil
}

// worstSkews usually moves m's clock to the slow end of the allowance and
// another process's to the fast end (clocks may drift anywhere within it).
func (w *simWorld) worstSkews(m *simMut) {
	if w.rng.IntN(4) == 0 {
		return
	}
	s := simCfg.MaxSkew.Microseconds()
	m.proc.skew = -s
	for _, p := range w.procs {
		if p != m.proc {
			p.skew = s
			break
		}
	}
	w.logf("skews: %s's process -%s, another +%s", m.impl.ID(), simCfg.MaxSkew, simCfg.MaxSkew)
}

// fastest returns the process whose clock runs furthest ahead.
func (w *simWorld) fastest() *simProc {
	fast := w.procs[0]
	for _, p := range w.procs {
		if p.skew > fast.skew {
			fast = p
		}
	}
	return fast
}

// edgeResolve resolves an unknown write at the last moment its mutator may
// send (its own clock just below expires_at), lets the write stay in flight
// as long as the contract allows, and runs GCs from the fastest clock
// meanwhile.
func (w *simWorld) edgeResolve(ctx context.Context, m *simMut) error {
	w.worstSkews(m)
	target := m.expiresAt - m.proc.skew - w.rng.Int64N(60*1_000_000)
	if target > w.now {
		w.advance(target - w.now)
	}
	saved := w.weather
	w.weather = partition
	if err := w.resolve(ctx, m); err != nil {
		return err
	}
	w.weather = saved
	for range 4 {
		w.advance(simCfg.MaxSkew.Microseconds() / 4)
		plan, err := w.fastest().counter.GC(ctx)
		w.stats.gcs++
		w.stats.folded += plan.Folded
		w.logf("edge gc folded %d through %d: %v", plan.Folded, plan.Batch.WriteTS, err)
		if err := w.gcErr("edge gc", err); err != nil {
			return err
		}
		for _, seq := range sortedKeys(w.held) {
			if w.held[seq].mut == m && w.rng.IntN(2) == 0 {
				w.settleHeld(seq, true)
			}
		}
	}
	return nil
}

// simSettle is how long after the last mutator's birth every shard can be
// folded by any process. A mutator born on a clock MaxSkew fast has
// expires_at = birth + MaxSkew + Lifetime; a GC on a clock MaxSkew slow
// folds a shard only when expires_at < its clock − Grace, strictly, that is
// once true time is strictly past birth + Lifetime + Grace + 2·MaxSkew.
// Waiting exactly that long leaves such a shard on the cutoff, unfolded, as
// the GC rule requires; one microsecond more (the clocks' resolution)
// folds it.
const simSettle = simLifetime + simGrace + 2*simMaxSkew + time.Microsecond

// finish settles everything, lets every shard become final, and checks
// that one GC folds them all into a tally with the model's value.
func (w *simWorld) finish(ctx context.Context) error {
	w.faultsOn = false
	for _, seq := range sortedKeys(w.held) {
		w.settleHeld(seq, true)
	}
	for _, seq := range w.heldGC {
		w.store.deliverCall(seq)
	}
	w.heldGC = nil
	if err := w.check(ctx); err != nil {
		return err
	}
	w.advance(simSettle.Microseconds())
	for _, p := range w.procs {
		if _, err := p.counter.GC(ctx); err != nil {
			return w.failf("final gc: %v", err)
		}
	}
	if n, err := countShards(w.store, simKey); err != nil || n != 0 {
		return w.failf("%d shards left after the final GC (%v)", n, err)
	}
	return w.check(ctx)
}

func runSim(seed int64, buggy bool) (simStats, error) {
	ctx := context.Background()
	w, err := newSimWorld(seed, buggy)
	if err != nil {
		return simStats{}, err
	}
	w.faultsOn = true
	for range simSteps {
		if err := w.step(ctx); err != nil {
			return w.stats, err
		}
		if err := w.check(ctx); err != nil {
			return w.stats, err
		}
	}
	return w.stats, w.finish(ctx)
}

// scheduleSeed returns the seed of schedule i of a run with base seed
// base: base itself for the first, so that running with a failed
// schedule's seed replays it first, and a splitmix64 output of the
// sequence base + i·γ for the others, so that runs from nearby base seeds
// share no schedules (base + i would: base 7's schedule 1 is base 8's
// schedule 0).
func scheduleSeed(base int64, i int) int64 {
	if i == 0 {
		return base
	}
	z := uint64(base) + uint64(i)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return int64(z ^ z>>31)
}

func TestSimulation(t *testing.T) {
	testsize.SkipSequential(t)
	base := proptest.Seed()
	cases := proptest.Scale(simBaseCases)
	t.Logf("seed %d, %d schedules of %d steps; replay: %s", base, cases, simSteps, proptest.Replay(t, base))
	var total simStats
	for i := range cases {
		seed := scheduleSeed(base, i)
		st, err := runSim(seed, false)
		if err != nil {
			t.Fatalf("schedule %d failed: %v\nreplay (runs this schedule first): %s", i, err, proptest.Replay(t, seed))
		}
		total.acked += st.acked
		total.ambiguous += st.ambiguous
		total.retried += st.retried
		total.abandoned += st.abandoned
		total.expired += st.expired
		total.gcs += st.gcs
		total.folded += st.folded
		total.lateDeliveries += st.lateDeliveries
		total.staleReads += st.staleReads
	}
	t.Logf("%d schedules passed: %+v", cases, total)
	if cases >= simBaseCases && (total.acked == 0 || total.ambiguous == 0 || total.retried == 0 || total.abandoned == 0 ||
		total.folded == 0 || total.lateDeliveries == 0 || total.expired == 0) {
		t.Fatalf("the schedules did not exercise every path: %+v", total)
	}
}

// TestSimulationCatchesMemoryFirstMutator runs the same schedules with a
// mutate-before-save mutator (memoryFirstMutator) and requires the
// simulation to fail.
func TestSimulationCatchesMemoryFirstMutator(t *testing.T) {
	base := proptest.Seed()
	t.Logf("seed %d; replay: %s", base, proptest.Replay(t, base))
	for i := range simBaseCases {
		if _, err := runSim(scheduleSeed(base, i), true); err != nil {
			t.Logf("caught after %d schedules, as expected:\n%v", i+1, err)
			return
		}
	}
	t.Fatal("the simulation did not catch the memory-first mutator's retry double count")
}

// TestSimulationSettlesPastTheStrictCutoff pins the bound simSettle relies
// on: a mutator born on a clock MaxSkew fast, and GCs on clocks MaxSkew
// slow. Exactly Lifetime + Grace + 2·MaxSkew after its birth the shard is
// on the cutoff and stays (expires_at < now − Grace is strict); a
// microsecond later it is folded. It then replays the schedule that ended
// on the cutoff when the simulation waited only the first amount.
func TestSimulationSettlesPastTheStrictCutoff(t *testing.T) {
	ctx := context.Background()
	store := memory.NewPartitions()
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	counter := func(skew time.Duration) *tally.Counter[*tally.Sum] {
		cfg := simCfg
		cfg.Clock = func() time.Time { return now.Add(skew) }
		c, err := tally.New[*tally.Sum](store, simKey, cfg)
		require.NoError(t, err)
		return c
	}
	fast, slow := counter(simMaxSkew), counter(-simMaxSkew)
	m, err := fast.NewMutator()
	require.NoError(t, err)
	require.NoError(t, m.Update(ctx, add(3)))
	now = now.Add(simSettle - time.Microsecond)
	plan, err := slow.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, 0, plan.Folded, "a shard exactly on the cutoff is not final yet")
	require.Equal(t, 1, plan.Live)
	now = now.Add(time.Microsecond)
	plan, err = slow.GC(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, plan.Folded)
	require.Equal(t, 0, liveShards(t, store, simKey))

	const onTheCutoff = 6876 // its last mutator was born MaxSkew fast, and every clock ends MaxSkew slow
	if _, err := runSim(onTheCutoff, false); err != nil {
		t.Fatalf("%v\nreplay: %s", err, proptest.Replay(t, onTheCutoff))
	}
}
