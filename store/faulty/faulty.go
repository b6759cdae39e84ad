// Package faulty wraps a store.Siblings or a store.Partitions with the faults
// of an unreliable network, for tests: refused calls, writes that land but
// lose their acknowledgement, writes lost with an ambiguous error, writes
// held in flight and delivered late (or never), and stale reads. It is a
// test double, not a production component.
//
// A Policy (Seeded, Script, or any func(Call) Fault) decides the Fault of
// each Call, and a Hook runs before and after every call, so that an
// interleaving test can park a goroutine at every store call, or fail a
// call before it happens or after it took effect; a Plan is such a Hook,
// answering chosen writes with chosen errors (WriteErrors).
//
// # What each fault does
//
// A write (Put, Delete, Apply) gets what its Fault constant says. A read
// (Fetch, Scan, Snapshot and, with Options.ScanPage, each further page of
// a scan) is refused with crdt.ErrUnavailable under Refuse, LoseAck, Lose
// and Hold (counted as Refuse), fails with ErrUnclassified under
// Unclassified, and under Stale is answered from an older state of the
// key or partition: an older Fetch result with its old token (a Put based
// on it leaves siblings, as with a lagging Riak replica), an older
// Snapshot, or for a Scan an older Snapshot or complete Scan. That is more
// than store.ReadAny allows: inject Stale into Partitions reads only to
// test readers that tolerate older rows. The states are the last
// Options.History distinct results of reads through the wrapper, per key
// or partition, and with Options.RecordWrites the state read back after
// every write that took effect. A stale read with no older state, or a
// Partitions read at store.ReadComplete, is answered fresh and counted as
// Pass.
//
// A call whose context is already done returns an error wrapping both
// crdt.ErrUnavailable and the context's error; it consumes no sequence
// number and sees neither the Policy nor the Hook.
package faulty

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sync"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// Fault is what a wrapper does to one call.
type Fault uint8

// The faults. See the package documentation for their effect on reads and
// writes.
const (
	// Pass lets the call through unchanged.
	Pass Fault = iota
	// Refuse fails the call without applying it: crdt.ErrUnavailable.
	Refuse
	// LoseAck applies a write and reports crdt.ErrAmbiguousWrite.
	LoseAck
	// Lose drops a write and reports crdt.ErrAmbiguousWrite.
	Lose
	// Hold keeps a write in flight and reports crdt.ErrAmbiguousWrite; the
	// write is applied by Deliver or DeliverAll, or dropped by DropHeld.
	Hold
	// Stale answers a read from the previous recorded state of its key or
	// partition (StaleBy chooses an older one).
	Stale
	// Unclassified applies a write and reports an error wrapping
	// ErrUnclassified, neither crdt.ErrAmbiguousWrite nor
	// crdt.ErrUnavailable; a read fails with it and is not served.
	Unclassified
)

// ErrUnclassified is the error of the Unclassified fault: a store error that
// wraps none of crdt's sentinels, which callers must treat as ambiguous
// (see package store, "Errors").
var ErrUnclassified = errors.New("faulty: injected unclassified store error")

const (
	kindBits = 3
	kindMask = 1<<kindBits - 1
	// MaxStaleness is the largest age StaleBy encodes.
	MaxStaleness = 1 << (8 - kindBits)
)

// StaleBy returns a Stale fault that answers a read from the state age
// recorded states back (1: the previous one, as Stale). Ages above
// MaxStaleness are capped, and older than the oldest recorded state means
// the oldest; age ≤ 0 is Pass (a fresh read).
func StaleBy(age int) Fault {
	if age <= 0 {
		return Pass
	}
	age = min(age, MaxStaleness)
	return Stale | Fault((age-1)<<kindBits)
}

// Kind returns the fault without its staleness: StaleBy(3).Kind() == Stale.
func (f Fault) Kind() Fault { return f & kindMask }

// Age returns how many recorded states back a Stale fault reads (0 for
// other faults).
func (f Fault) Age() int {
	if f.Kind() != Stale {
		return 0
	}
	return 1 + int(f>>kindBits)
}

var faultNames = [...]string{"pass", "refuse", "lose-ack", "lose", "hold", "stale", "unclassified"}

// String names the fault: "pass", "refuse", "lose-ack", "lose", "hold",
// "stale", "unclassified", or "stale(n)" for StaleBy(n) with n > 1.
func (f Fault) String() string {
	switch k := f.Kind(); {
	case int(k) >= len(faultNames) || k != Stale && f != k:
		return fmt.Sprintf("Fault(%d)", uint8(f))
	case f.Age() > 1:
		return fmt.Sprintf("stale(%d)", f.Age())
	default:
		return faultNames[k]
	}
}

// The method names a Call carries.
const (
	MethodFetch    = "Fetch"
	MethodPut      = "Put"
	MethodDelete   = "Delete"
	MethodScan     = "Scan"
	MethodScanPage = "ScanPage" // a page of a Scan after its first (Options.ScanPage)
	MethodSnapshot = "Snapshot"
	MethodApply    = "Apply"
)

// IsRead reports whether method names a read.
func IsRead(method string) bool {
	return slices.Contains([]string{MethodFetch, MethodScan, MethodScanPage, MethodSnapshot}, method)
}

// Call describes one call on a wrapper.
type Call struct {
	// Method is one of the Method constants.
	Method string
	// Key is the key (Siblings), the partition (Scan, Snapshot), or the
	// partition of the first mutation of an Apply ("" for an empty batch).
	Key string
	// N numbers the calls on one wrapper: 1, 2, 3, ...
	N uint64
	// Level is the read level of a Scan, ScanPage or Snapshot.
	Level store.Read
	// Batch is the batch of an Apply, so a policy can tell one kind of
	// write from another. It belongs to the caller: a Policy or Hook must
	// neither change nor keep it.
	Batch []store.Mutation
}

// String renders the call as "Method key #N".
func (c Call) String() string { return fmt.Sprintf("%s %q #%d", c.Method, c.Key, c.N) }

// Policy decides the fault of a call. A wrapper calls it with its own lock
// held, in call order, so it must not call the wrapper; it may be shared by
// several wrappers only if it is safe for concurrent use (Seeded and Script
// are).
type Policy func(Call) Fault

// Rates are the probabilities of the faults Seeded draws. Refuse, LoseAck,
// Lose and Hold apply to writes and should sum to at most 1; Stale applies
// to reads.
type Rates struct {
	Refuse, LoseAck, Lose, Hold float64
	Stale                       float64
	// MaxStaleness bounds the age of a stale read: each is 1..MaxStaleness
	// recorded states old (zero means 1).
	MaxStaleness int
}

// Seeded returns a Policy drawing faults at rates r from a source seeded
// with seed: the same seed and the same sequence of calls give the same
// faults. Writes get Refuse, LoseAck, Lose or Hold; reads get Stale (reads
// are never refused by Seeded: use Script or a Policy of your own). Every
// call draws from the source, whatever its rates, so faults depend only on
// the order of calls. Seeded is safe for concurrent use.
func Seeded(seed int64, r Rates) Policy {
	var mu sync.Mutex
	rng := rand.New(rand.NewSource(seed))
	maxAge := min(max(r.MaxStaleness, 1), MaxStaleness)
	return func(c Call) Fault {
		mu.Lock()
		defer mu.Unlock()
		x := rng.Float64()
		if IsRead(c.Method) {
			if x < r.Stale {
				return StaleBy(1 + rng.Intn(maxAge))
			}
			return Pass
		}
		sum := 0.0
		for _, w := range [...]struct {
			f Fault
			p float64
		}{{Refuse, r.Refuse}, {LoseAck, r.LoseAck}, {Lose, r.Lose}, {Hold, r.Hold}} {
			if sum += w.p; x < sum {
				return w.f
			}
		}
		return Pass
	}
}

// Script returns a Policy giving faults to the next calls in order, one
// per call whatever its method, then Pass. It is safe for concurrent use.
func Script(faults ...Fault) Policy {
	var mu sync.Mutex
	q := slices.Clone(faults)
	return func(Call) Fault {
		mu.Lock()
		defer mu.Unlock()
		if len(q) == 0 {
			return Pass
		}
		f := q[0]
		q = q[1:]
		return f
	}
}

// Only returns a Policy that asks p about calls of the given methods and
// passes every other call without consulting p.
func Only(p Policy, methods ...string) Policy {
	return when(p, func(c Call) bool { return slices.Contains(methods, c.Method) })
}

// Keys returns a policy that passes p the calls whose key keep accepts and
// lets every other call through untouched, without consulting p (so a
// Script's faults go to the kept keys' calls alone).
func Keys(p Policy, keep func(key string) bool) Policy {
	return when(p, func(c Call) bool { return keep(c.Key) })
}

// when asks p about the calls ask accepts and passes the others.
func when(p Policy, ask func(Call) bool) Policy {
	return func(c Call) Fault {
		if !ask(c) {
			return Pass
		}
		return p(c)
	}
}

// Hook runs around every call. Before it (after false), a non-nil error
// means the call does not happen and returns that error (a crash or a
// refused call). After it (after true), which runs only once the call has
// taken effect (a read was served, a write applied: Pass, LoseAck, Stale, a
// held write when it is delivered), a non-nil error is returned to the
// caller although the call happened (a lost acknowledgement). Hooks run
// without the wrapper's lock held and may block, to interleave callers
// deterministically; they may call the wrapper.
type Hook func(ctx context.Context, c Call, after bool) error

// DefaultHistory is how many distinct states per key or partition a wrapper
// keeps for stale reads when Options.History is zero.
const DefaultHistory = 16

// Options configure a wrapper. The zero value injects no faults.
type Options struct {
	// Policy decides each call's fault; nil passes every call.
	Policy Policy
	// Hook runs before and after every call; nil for none.
	Hook Hook
	// History is how many distinct states per key or partition are kept
	// for stale reads: zero means DefaultHistory, negative none.
	History int
	// MaxLag, when positive, bounds stale reads by time as well: a stale
	// read serves only a state that was still the newest no more than
	// MaxLag ago by Clock, and otherwise the current one (a pass). A state
	// is superseded when the wrapper next records another, so give it
	// RecordWrites. Zero: stale reads lag by states only.
	MaxLag time.Duration
	// Clock is MaxLag's clock; nil means time.Now.
	Clock func() time.Time
	// RecordWrites makes the wrapper read a key or partition back after
	// every write through it that took effect and record the result for
	// stale reads, so that a stale read can show a state no reader saw.
	// The read-backs are extra calls on the wrapped store.
	RecordWrites bool
	// ScanPage, for Partitions: when positive, Scan reads ScanPage rows at
	// a time, and every page after the first is a call of its own
	// (MethodScanPage) with its own fault and hooks, so a test can act
	// between the pages of a scan. Zero: a Scan is one call.
	ScanPage int
}

// core is the state the two wrappers share: the policy, the hook, the call
// counter, the fault counts and the held writes.
type core struct {
	mu     sync.Mutex
	policy Policy
	hook   Hook
	n      uint64
	counts map[Fault]int
	held   []held
}

type held struct {
	call  Call
	ctx   context.Context
	apply func(ctx context.Context) error
	after func(ctx context.Context) // records the state, when RecordWrites
}

func newCore(o Options) core {
	return core{policy: o.Policy, hook: o.Hook, counts: map[Fault]int{}}
}

func (c *core) count(f Fault) {
	c.mu.Lock()
	c.counts[f.Kind()]++
	c.mu.Unlock()
}

// before runs the checks every call makes first: a done context, then
// (once the call is numbered and its fault decided) the hook. It returns
// the call and its fault.
func (c *core) before(ctx context.Context, call Call) (Call, Fault, error) {
	if err := ctx.Err(); err != nil {
		return Call{}, Pass, fmt.Errorf("faulty: %s %q: %w: %w", call.Method, call.Key, crdt.ErrUnavailable, err)
	}
	c.mu.Lock()
	c.n++
	call.N = c.n
	f := Pass
	if c.policy != nil {
		f = c.policy(call)
	}
	c.mu.Unlock()
	if err := c.runHook(ctx, call, false); err != nil {
		return call, f, err
	}
	if k := f.Kind(); k > Unclassified || (k == Unclassified && f != k) {
		return call, f, fmt.Errorf("faulty: %v: policy returned %v: %w", call, f, crdt.ErrInvalidConfig)
	}
	return call, f, nil
}

// runHook runs the hook, if any, before a call or (after) once it took
// effect.
func (c *core) runHook(ctx context.Context, call Call, after bool) error {
	c.mu.Lock()
	h := c.hook
	c.mu.Unlock()
	if h == nil {
		return nil
	}
	return h(ctx, call, after)
}

// beforeRead is before for a read: an Unclassified fault fails it with
// ErrUnclassified, and a write fault (Refuse, LoseAck, Lose, Hold) turns
// into a refusal.
func (c *core) beforeRead(ctx context.Context, proto Call) (Call, Fault, error) {
	call, f, err := c.before(ctx, proto)
	if err != nil {
		return call, f, err
	}
	switch f.Kind() {
	case Unclassified:
		c.count(Unclassified)
		return call, f, unclassifiedFault(call)
	case Refuse, LoseAck, Lose, Hold:
		c.count(Refuse)
		return call, f, fmt.Errorf("faulty: %v: injected refusal: %w", call, crdt.ErrUnavailable)
	}
	return call, f, nil
}

// unclassifiedFault is the error of an Unclassified call.
func unclassifiedFault(call Call) error {
	return fmt.Errorf("faulty: %v: %w", call, ErrUnclassified)
}

// write runs a write call under fault f. apply applies it to the wrapped
// store; record, if not nil, records the state after it.
func (c *core) write(ctx context.Context, call Call, f Fault, apply func(ctx context.Context) error, record func(ctx context.Context)) error {
	switch f.Kind() {
	case Refuse:
		c.count(Refuse)
		return fmt.Errorf("faulty: %v: injected refusal: %w", call, crdt.ErrUnavailable)
	case Lose:
		c.count(Lose)
		return fmt.Errorf("faulty: %v: injected lost write: %w", call, crdt.ErrAmbiguousWrite)
	case Hold:
		c.mu.Lock()
		c.held = append(c.held, held{call: call, ctx: context.WithoutCancel(ctx), apply: apply, after: record})
		c.counts[Hold]++
		c.mu.Unlock()
		return fmt.Errorf("faulty: %v: injected timeout, write held in flight: %w", call, crdt.ErrAmbiguousWrite)
	}
	if err := apply(ctx); err != nil {
		return err
	}
	if record != nil {
		record(context.WithoutCancel(ctx))
	}
	fault := Pass
	if k := f.Kind(); k == LoseAck || k == Unclassified {
		fault = k
	}
	c.count(fault)
	if err := c.runHook(ctx, call, true); err != nil {
		return err
	}
	switch fault {
	case LoseAck:
		return fmt.Errorf("faulty: %v: injected lost acknowledgement: %w", call, crdt.ErrAmbiguousWrite)
	case Unclassified:
		return unclassifiedFault(call)
	}
	return nil
}

// SetPolicy replaces the policy (nil: pass every call).
func (c *core) SetPolicy(p Policy) {
	c.mu.Lock()
	c.policy = p
	c.mu.Unlock()
}

// SetHook replaces the hook (nil: none).
func (c *core) SetHook(h Hook) {
	c.mu.Lock()
	c.hook = h
	c.mu.Unlock()
}

// HeldCalls returns the calls of the held writes, oldest first.
func (c *core) HeldCalls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Call, len(c.held))
	for i, h := range c.held {
		out[i] = h.call
	}
	return out
}

// Held returns how many writes (Puts, Deletes or Apply batches) are held
// in flight.
func (c *core) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}

// Deliver applies the i-th held write (0: the oldest still held) to the
// wrapped store now, with its original token or timestamps, and forgets
// it; the others keep their order. The after hook then runs with the
// original call. It returns the wrapped store's error, or one wrapping
// crdt.ErrNotFound if there is no such held write.
func (c *core) Deliver(i int) error {
	c.mu.Lock()
	if i < 0 || i >= len(c.held) {
		n := len(c.held)
		c.mu.Unlock()
		return fmt.Errorf("faulty: no held write %d (%d held): %w", i, n, crdt.ErrNotFound)
	}
	h := c.held[i]
	c.held = slices.Delete(c.held, i, i+1)
	c.mu.Unlock()
	if err := h.apply(h.ctx); err != nil {
		return fmt.Errorf("faulty: delivering held %v: %w", h.call, err)
	}
	if h.after != nil {
		h.after(h.ctx)
	}
	return c.runHook(h.ctx, h.call, true)
}

// DeliverAll delivers every held write, oldest first, and returns the
// errors of those that failed (they are forgotten too).
func (c *core) DeliverAll() error {
	var errs []error
	for c.Held() > 0 {
		if err := c.Deliver(0); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// DropHeld forgets every held write, which then never takes effect, and
// returns how many there were.
func (c *core) DropHeld() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.held)
	c.held = nil
	return n
}

// Counts returns how many calls received each fault so far (a copy).
func (c *core) Counts() map[Fault]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

// history keeps the last few distinct states of each key, oldest first,
// each with the time the next one replaced it. Two states in a row that
// equal calls equal are kept as one, which merge, if not nil, updates.
type history[S any] struct {
	mu     sync.Mutex
	depth  int
	maxLag time.Duration
	now    func() time.Time
	equal  func(a, b S) bool
	merge  func(old *S, s S)
	states map[string][]histState[S]
}

type histState[S any] struct {
	s     S
	until time.Time // when the next state replaced it (zero: newest)
}

// newHistory returns the history o.History asks for.
func newHistory[S any](o Options, equal func(a, b S) bool, merge func(old *S, s S)) history[S] {
	now := o.Clock
	if now == nil {
		now = time.Now
	}
	return history[S]{depth: max(cmp.Or(o.History, DefaultHistory), 0), maxLag: o.MaxLag, now: now, equal: equal, merge: merge}
}

// add records s for key.
func (h *history[S]) add(key string, s S) { h.older(key, &s, 0, nil) }

// older records fresh for key if it is not nil, then returns the state age
// states before the newest of key that ok accepts and that was the newest
// within maxLag, or the oldest such one if there are fewer; false if no
// state other than the newest is accepted (always when age ≤ 0).
func (h *history[S]) older(key string, fresh *S, age int, ok func(S) bool) (S, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.states[key]
	if n := len(st); fresh != nil && h.depth > 0 {
		if n > 0 && h.equal(st[n-1].s, *fresh) {
			if h.merge != nil {
				h.merge(&st[n-1].s, *fresh)
			}
		} else {
			if n > 0 && h.maxLag > 0 {
				st[n-1].until = h.now()
			}
			st = slices.Delete(append(st, histState[S]{s: *fresh}), 0, max(n+1-h.depth, 0))
			if h.states == nil {
				h.states = map[string][]histState[S]{}
			}
			h.states[key] = st
		}
	}
	var found S
	any := false
	var now time.Time
	if h.maxLag > 0 && age > 0 {
		now = h.now()
	}
	for i := len(st) - 2; i >= 0 && age > 0; i-- {
		if ok != nil && !ok(st[i].s) || h.maxLag > 0 && now.Sub(st[i].until) > h.maxLag {
			continue
		}
		found, any = st[i].s, true
		age--
	}
	return found, any
}
