package modelcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
)

type opKey struct{}

// Op is one operation of a script: its label, transaction and outcome.
type Op struct {
	Label  string
	Txn    crdt.TxnID // empty for operations without a transaction
	Amount int64
	script string
	cancel context.CancelFunc
	done   chan struct{}

	// Start is the fake time when the operation started.
	Start time.Time
	// Set when the operation returns.
	Finished bool
	Result   Result
	// AckedBefore, Retry and InWindow describe Txn when the operation
	// started: acknowledged by an earlier operation, called before, and
	// inside the retry window (World.RetryWindow) of its first call.
	AckedBefore, Retry, InWindow bool
	// Faults counts the calls of the operation the explorer gave a fate
	// other than Deliver (read at the end, once every call returned).
	Faults int
}

// Result is what an operation returned, in the checker's terms.
type Result struct {
	// Applied: the call says it wrote the transaction (Outcome Applied).
	Applied bool
	// Outcome names the driver's outcome, for traces.
	Outcome string
	// Writer and Key are the entry and key the call wrote as.
	Writer crdt.ActorID
	Key    string
	Err    error
}

// Definite reports whether err claims that nothing of the call was
// written: a refusal, a context's error or a rule's refusal, not wrapping
// crdt.ErrAmbiguousWrite. Every other error is ambiguous, as package store
// says callers must treat an error it does not classify.
func Definite(err error) bool {
	if err == nil || errors.Is(err, crdt.ErrAmbiguousWrite) {
		return false
	}
	for _, s := range []error{crdt.ErrUnavailable, context.Canceled, context.DeadlineExceeded,
		crdt.ErrOutsideWindow, crdt.ErrInvalidConfig, crdt.ErrConflictingTransaction,
		crdt.ErrInsufficientRights, crdt.ErrCorruptEncoding, crdt.ErrTooLarge, crdt.ErrInvalidAmount} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// Clock is a fake clock the scripts advance.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Epoch is the fake clock's start.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Now returns the fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the fake time on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// DefaultRetryWindow is World.RetryWindow unless a scope sets it: the
// ledger's default (ledger.DefaultRetryWindow).
const DefaultRetryWindow = 24 * time.Hour

// World is one execution: the scheduler store, the fake clock, the
// scripts and what their operations returned.
type World struct {
	Store *Store
	Inner *memory.Siblings
	Clock *Clock
	// RetryWindow is the stated retry window: a retry of a transaction
	// that starts less than RetryWindow after the transaction's first
	// call (on the fake clock) is inside it. The first call starts no
	// later than the transaction's first application, so a retry inside
	// this window is inside the window of the first application too.
	RetryWindow time.Duration
	// Timed says the drivers time every transaction with TxnTime: a
	// retry after the window must then be refused, never counted again.
	Timed bool

	mu      sync.Mutex
	scripts []script
	ops     []*Op
	byLabel map[string]*Op
	dones   map[string]chan struct{}
	running int
	live    map[string]bool   // scripts not finished
	waiting map[string]string // script → label it waits for
	base    int               // goroutines besides the scripts'
	checks  []namedCheck
	ends    []namedCheck
	settles []func()
	log     []string
}

type script struct {
	name string
	fn   func(r *Runner)
}

type namedCheck struct {
	name string
	fn   func() error
}

func newWorld() *World {
	w := &World{Inner: memory.NewSiblings(), Clock: &Clock{now: Epoch}, RetryWindow: DefaultRetryWindow,
		byLabel: map[string]*Op{},
		live:    map[string]bool{}, waiting: map[string]string{}}
	w.Store = newStore(w, w.Inner)
	return w
}

// Go adds a script, run as its own goroutine.
func (w *World) Go(name string, fn func(r *Runner)) {
	w.scripts = append(w.scripts, script{name, fn})
}

// Check adds an invariant checked after every step and at the end.
func (w *World) Check(name string, fn func() error) {
	w.checks = append(w.checks, namedCheck{name, fn})
}

// Settle adds a function run at the end, once every script has finished
// and every held write has landed, before the end's checks: its store
// calls run at once, without faults (an account's Sync, say).
func (w *World) Settle(fn func()) {
	w.settles = append(w.settles, fn)
}

// CheckEnd adds an invariant checked once every script has finished and
// every held write has landed.
func (w *World) CheckEnd(name string, fn func() error) {
	w.ends = append(w.ends, namedCheck{name, fn})
}

// Ops returns the operations started so far, in start order.
func (w *World) Ops() []*Op {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*Op(nil), w.ops...)
}

// Logf adds a line to the execution's trace.
func (w *World) Logf(format string, args ...any) {
	w.mu.Lock()
	w.log = append(w.log, fmt.Sprintf(format, args...))
	w.mu.Unlock()
}

// acked reports whether an operation of txn has been acknowledged.
func (w *World) acked(txn crdt.TxnID) bool {
	for _, op := range w.ops {
		if op.Txn == txn && op.Finished && op.Result.Err == nil {
			return true
		}
	}
	return false
}

// firstCall returns the start of the first operation of txn; w.mu is held.
func (w *World) firstCall(txn crdt.TxnID) (time.Time, bool) {
	for _, op := range w.ops {
		if op.Txn == txn {
			return op.Start, true
		}
	}
	return time.Time{}, false
}

// TxnTime is the time a client stamps on txn: the start of its first
// call, or now before any. Hand it to tpncounter.Options.TxnTime for timed
// transactions (and set Timed).
func (w *World) TxnTime(txn crdt.TxnID) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.firstCall(txn); ok {
		return t, true
	}
	return w.Clock.Now(), true
}

// Runner runs one script's operations.
type Runner struct {
	w    *World
	name string
}

// Clock returns the world's fake clock.
func (r *Runner) Clock() *Clock { return r.w.Clock }

// Do runs one operation labelled label (unique in the world) under its
// own context, which the explorer may end.
func (r *Runner) Do(label string, txn crdt.TxnID, amount int64, f func(ctx context.Context) Result) *Op {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := r.w
	op := &Op{Label: label, Txn: txn, Amount: amount, script: r.name, cancel: cancel}
	ctx = context.WithValue(ctx, opKey{}, op)
	w.mu.Lock()
	op.done = w.doneChan(label)
	if _, dup := w.byLabel[label]; dup {
		w.mu.Unlock()
		panic("mc: two operations labelled " + label)
	}
	op.Start = w.Clock.Now()
	if txn != "" {
		op.AckedBefore = w.acked(txn)
		first, retry := w.firstCall(txn)
		op.Retry = retry
		op.InWindow = !retry || op.Start.Sub(first) < w.RetryWindow
	}
	w.ops = append(w.ops, op)
	w.byLabel[label] = op
	w.mu.Unlock()
	res := f(ctx)
	w.mu.Lock()
	op.Result, op.Finished = res, true
	w.log = append(w.log, fmt.Sprintf("  %s returns %s", label, res))
	for sc, l := range w.waiting {
		if l == label {
			delete(w.waiting, sc)
		}
	}
	close(op.done)
	w.mu.Unlock()
	return op
}

// Wait blocks until the operation labelled label has returned, and
// returns it.
func (r *Runner) Wait(label string) *Op {
	r.w.mu.Lock()
	done := r.w.doneChan(label)
	if op := r.w.byLabel[label]; op == nil || !op.Finished {
		r.w.waiting[r.name] = label
	}
	r.w.mu.Unlock()
	<-done
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	return r.w.byLabel[label]
}

// doneChan returns the channel closed when label returns; w.mu is held.
func (w *World) doneChan(label string) chan struct{} {
	if w.dones == nil {
		w.dones = map[string]chan struct{}{}
	}
	ch := w.dones[label]
	if ch == nil {
		ch = make(chan struct{})
		w.dones[label] = ch
	}
	return ch
}

func (r Result) String() string {
	var b strings.Builder
	if r.Outcome != "" {
		b.WriteString(r.Outcome)
	}
	if r.Err != nil {
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "error %q", r.Err.Error())
	}
	if b.Len() == 0 {
		return "ok"
	}
	return b.String()
}
