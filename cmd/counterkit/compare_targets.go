package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tally"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

// nativeCounter is a store's own counter column: an increment is not
// idempotent, so a resent increment counts again if the first one landed.
type nativeCounter interface {
	// Add adds delta to the counter key.
	Add(ctx context.Context, key string, delta int64) error
	// Value reads the counter key (0 when it was never written).
	Value(ctx context.Context, key string) (int64, error)
	// Ambiguous reports whether an Add that failed with err may have been
	// applied (a timeout), so that a caller resends it.
	Ambiguous(err error) bool
}

// compareTargets builds the targets named by names over the native counter
// and the two counterkit storage shapes.
func compareTargets(names []string, cfg compareConfig, native nativeCounter, sib store.Siblings, part store.Partitions) ([]compareTarget, error) {
	key := func(typ string) string { return "compare-" + cfg.runID + "-" + typ }
	var out []compareTarget
	for _, n := range names {
		switch n {
		case "native":
			out = append(out, &nativeTarget{cfg: cfg, n: native, key: key(n)})
		case "ledger", "ledger-sharded":
			out = append(out, &ledgerTarget{cfg: cfg, st: sib, key: key(n), sharded: n == "ledger-sharded"})
		case "tally":
			c, err := tally.New[*tally.Sum](part, key(n), tally.Options{Clock: cfg.now, Retries: -1})
			if err != nil {
				return nil, err
			}
			out = append(out, &tallyTarget{cfg: cfg, c: c})
		case "deltalog":
			c, err := deltalog.New(part, deltalog.Options{Clock: cfg.now})
			if err != nil {
				return nil, err
			}
			out = append(out, &logTarget{cfg: cfg, typ: n, key: key(n),
				add: c.Add, read: func(ctx context.Context, k string) (int64, error) {
					r, err := c.Read(ctx, k)
					return r.Value, err
				}})
		case "balance":
			ac, err := balance.New(part, balance.Options{Clock: cfg.now})
			if err != nil {
				return nil, err
			}
			out = append(out, &logTarget{cfg: cfg, typ: n, key: key(n), add: ac.Add, read: ac.Balance})
		default:
			return nil, usagef("%w: unknown type %q", crdt.ErrInvalidConfig, n)
		}
	}
	return out, nil
}

// incWorker is a worker whose every increment is one write under its own
// identity (a native increment, a transaction id, an update id).
type incWorker struct {
	sendFn   func(ctx context.Context, seq int) (sent int, err error)
	retryFn  func(err error) bool
	canRetry bool // after the run, a resend can resolve an unknown increment
	retries  int
	pending  []int
}

func (w *incWorker) send(ctx context.Context, seq int, _ bool) (int, int, error) {
	sent, err := w.sendFn(ctx, seq)
	if err != nil {
		return sent, 0, err
	}
	return sent, 1, nil
}

func (w *incWorker) retryable(err error) bool { return w.retryFn(err) }

// giveUp keeps an increment that may have landed for resolve (a counterkit
// increment whatever the error: resending it is safe, and an earlier
// attempt may have landed before a later one failed otherwise); a native
// one that definitely did not land is dropped (not acknowledged, not
// counted).
func (w *incWorker) giveUp(seq int, err error) {
	if w.canRetry || w.retryFn(err) {
		w.pending = append(w.pending, seq)
	}
}

func (w *incWorker) resolve(ctx context.Context) (sent, acked, unresolved int) {
	if !w.canRetry {
		return 0, 0, len(w.pending)
	}
	for _, seq := range w.pending {
		var err error
		for try := 0; try <= w.retries; try++ {
			var s int
			s, err = w.sendFn(ctx, seq)
			sent += s
			if err == nil || !w.retryFn(err) {
				break
			}
		}
		switch {
		case err == nil:
			acked++
		case w.retryFn(err):
			unresolved++
		}
	}
	w.pending = nil
	return sent, acked, unresolved
}

// counterkitRetryable: every counterkit write may be resent after an
// ambiguous or refused write or a timeout (it carries its id); other errors
// (invalid input, a corrupt state) are final.
func counterkitRetryable(err error) bool {
	return errors.Is(err, crdt.ErrAmbiguousWrite) || errors.Is(err, crdt.ErrUnavailable) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// nativeTarget increments one native counter.
type nativeTarget struct {
	cfg compareConfig
	n   nativeCounter
	key string
}

func (t *nativeTarget) name() string     { return "native" }
func (t *nativeTarget) counterkit() bool { return false }
func (t *nativeTarget) value(ctx context.Context) (int64, error) {
	return t.n.Value(ctx, t.key)
}
func (t *nativeTarget) newWorker(int) (compareWorker, error) {
	return &incWorker{
		sendFn:  func(ctx context.Context, _ int) (int, error) { return 1, t.n.Add(ctx, t.key, 1) },
		retryFn: t.n.Ambiguous,
		retries: t.cfg.retries,
	}, nil
}

// ledgerTarget credits one account: a plain ledger key, or a sharded one.
type ledgerTarget struct {
	cfg     compareConfig
	st      store.Siblings
	key     string
	sharded bool

	mu      sync.Mutex
	writers map[int]credit // with cfg.actors: the ledger of each actor, shared by its workers
}

func (t *ledgerTarget) name() string {
	if t.sharded {
		return "ledger-sharded"
	}
	return "ledger"
}
func (t *ledgerTarget) counterkit() bool { return true }

// credit is a plain or sharded ledger's Credit.
type credit func(ctx context.Context, txn crdt.TxnID, amount int64) (ledger.Result, error)

func (t *ledgerTarget) open(actor string) (credit, func(context.Context) (int64, error), error) {
	opts := ledger.Options{Actor: crdt.ActorID(actor), Backoff: ledger.Backoff{Initial: -1},
		Counter: tpncounter.Options{HistoryLength: t.cfg.history}}
	if t.sharded {
		s, err := ledger.NewSharded(t.st, t.key, t.cfg.shards, opts)
		if err != nil {
			return nil, nil, err
		}
		return s.Credit, s.Value, nil
	}
	l, err := ledger.New(t.st, t.key, opts)
	if err != nil {
		return nil, nil, err
	}
	return l.Credit, l.Value, nil
}

func (t *ledgerTarget) value(ctx context.Context) (int64, error) {
	_, value, err := t.open("compare-reader")
	if err != nil {
		return 0, err
	}
	return value(ctx)
}

// writer returns worker w's credit: its own ledger, or with cfg.actors the
// ledger of actor w mod actors, which the workers of that actor share (a
// Ledger and a Sharded are safe for concurrent use).
func (t *ledgerTarget) writer(w int) (credit, error) {
	if t.cfg.actors == 0 {
		cr, _, err := t.open(fmt.Sprintf("compare-w%d", w))
		return cr, err
	}
	a := w % t.cfg.actors
	t.mu.Lock()
	defer t.mu.Unlock()
	if cr, ok := t.writers[a]; ok {
		return cr, nil
	}
	cr, _, err := t.open(fmt.Sprintf("compare-a%d", a))
	if err != nil {
		return nil, err
	}
	if t.writers == nil {
		t.writers = map[int]credit{}
	}
	t.writers[a] = cr
	return cr, nil
}

func (t *ledgerTarget) newWorker(w int) (compareWorker, error) {
	cr, err := t.writer(w)
	if err != nil {
		return nil, err
	}
	return &incWorker{
		sendFn: func(ctx context.Context, seq int) (int, error) {
			res, err := cr(ctx, crdt.TxnID(fmt.Sprintf("%s-w%d-%d", t.cfg.runID, w, seq)), 1)
			return max(res.Attempts, 1), err
		},
		retryFn:  counterkitRetryable,
		canRetry: true,
		retries:  t.cfg.retries,
	}, nil
}

// logTarget adds to one deltalog counter or balance account, each
// increment under its own time-based update id.
type logTarget struct {
	cfg  compareConfig
	typ  string
	key  string
	add  func(ctx context.Context, key string, id timeid.ID, delta int64) error
	read func(ctx context.Context, key string) (int64, error)
}

func (t *logTarget) name() string     { return t.typ }
func (t *logTarget) counterkit() bool { return true }
func (t *logTarget) value(ctx context.Context) (int64, error) {
	return t.read(ctx, t.key)
}

func (t *logTarget) newWorker(w int) (compareWorker, error) {
	base, node := t.cfg.now(), runNode(t.cfg.runID)
	return &incWorker{
		sendFn: func(ctx context.Context, seq int) (int, error) {
			return 1, t.add(ctx, t.key, updateID(base, node, w, seq), 1)
		},
		retryFn:  counterkitRetryable,
		canRetry: true,
		retries:  t.cfg.retries,
	}, nil
}

// updateID is increment seq of worker w: a version 1 UUID whose time is
// base + seq µs (not after the clock when it is first sent, since every
// increment takes longer than a microsecond), whose clock sequence is the
// worker and whose node is the run's. A resend uses the same id.
func updateID(base time.Time, node uint64, w, seq int) timeid.ID {
	return timeid.FromParts(base.Add(time.Duration(seq)*time.Microsecond), uint16(w)&0x3fff, node)
}

// runNode is the 48-bit node of the run's update ids.
func runNode(runID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(runID))
	return h.Sum64() & (1<<48 - 1)
}

// tallyTarget updates one tally counter, one mutator per worker.
type tallyTarget struct {
	cfg compareConfig
	c   *tally.Counter[*tally.Sum]
}

func (t *tallyTarget) name() string     { return "tally" }
func (t *tallyTarget) counterkit() bool { return true }
func (t *tallyTarget) value(ctx context.Context) (int64, error) {
	s, err := t.c.Read(ctx)
	return s.Value(), err
}

func (t *tallyTarget) newWorker(int) (compareWorker, error) {
	m, err := t.c.NewMutator()
	if err != nil {
		return nil, err
	}
	return &tallyWorker{t: t, m: m}, nil
}

// tallyWorker stages updates and flushes every cfg.flushEvery of them.
type tallyWorker struct {
	t      *tallyTarget
	m      *tally.Mutator[*tally.Sum]
	staged int // updates staged, not yet flushed
	batch  int // updates of the write being attempted
	// unknown are mutators left with an unresolved write, and its size.
	unknown []unknownFlush
}

type unknownFlush struct {
	m *tally.Mutator[*tally.Sum]
	n int
}

func addOne(s *tally.Sum) error { return s.Add(1) }

func (w *tallyWorker) send(ctx context.Context, _ int, resend bool) (int, int, error) {
	if resend {
		if w.m.Unresolved() {
			if err := w.m.Retry(ctx); err != nil {
				return 1, 0, err
			}
			n := w.batch
			w.batch = 0
			return 1, n, nil
		}
		// The failed flush was discarded: stage its updates again.
		for range w.batch {
			if err := w.m.Stage(addOne); err != nil {
				return 0, 0, err
			}
		}
		return w.flush(ctx)
	}
	if err := w.m.Stage(addOne); err != nil {
		return 0, 0, err
	}
	w.staged++
	if w.staged < w.t.cfg.flushEvery {
		return 0, 0, nil
	}
	w.batch, w.staged = w.staged, 0
	return w.flush(ctx)
}

// flush writes the staged updates of w.batch.
func (w *tallyWorker) flush(ctx context.Context) (int, int, error) {
	if err := w.m.Flush(ctx); err != nil {
		return 1, 0, err
	}
	n := w.batch
	w.batch = 0
	return 1, n, nil
}

func (w *tallyWorker) retryable(err error) bool { return counterkitRetryable(err) }

// giveUp: an unresolved write stays with its mutator, resolved after the
// run, and the worker goes on with a fresh mutator; a discarded one is
// dropped.
func (w *tallyWorker) giveUp(_ int, _ error) {
	if w.m.Unresolved() {
		w.unknown = append(w.unknown, unknownFlush{w.m, w.batch})
		if m, err := w.t.c.NewMutator(); err == nil {
			w.m = m
		}
	}
	w.batch = 0
}

func (w *tallyWorker) resolve(ctx context.Context) (sent, acked, unresolved int) {
	retries := w.t.cfg.retries
	// settle flushes n updates on the current mutator (staging them
	// first when stage is set), resending as the run does; a write left
	// unknown joins w.unknown.
	settle := func(n int, stage bool) {
		if n == 0 {
			return
		}
		if stage && w.m.Unresolved() {
			m, err := w.t.c.NewMutator()
			if err != nil {
				unresolved += n
				return
			}
			w.m = m
		}
		for range n {
			if !stage {
				break
			}
			if err := w.m.Stage(addOne); err != nil {
				return
			}
		}
		w.batch = n
		s, a, err := w.flush(ctx)
		sent, acked = sent+s, acked+a
		for try := 0; err != nil && try < retries && counterkitRetryable(err); try++ {
			s, a, err = w.send(ctx, 0, true)
			sent, acked = sent+s, acked+a
		}
		if err != nil && w.m.Unresolved() {
			w.unknown = append(w.unknown, unknownFlush{w.m, w.batch})
		}
		w.batch = 0
	}
	// The run's last updates are staged on the current mutator.
	n := w.staged
	w.staged = 0
	settle(n, false)
	// An unknown write is resent (Retry) up to retries+1 times; if it stays
	// unknown it is abandoned (then it is not counted, ever) and its
	// updates are applied once more, as a caller does after Abandon.
	unknown := w.unknown
	w.unknown = nil
	var reapply int
	for _, u := range unknown {
		var err error
		for try := 0; try <= retries; try++ {
			sent++
			if err = u.m.Retry(ctx); err == nil {
				break
			}
		}
		switch {
		case err == nil:
			acked += u.n
		case u.m.Abandon(ctx) == nil:
			sent++
			reapply += u.n
		default:
			sent++
			unresolved += u.n
		}
	}
	settle(reapply, true)
	for _, u := range w.unknown {
		unresolved += u.n
	}
	w.unknown = nil
	return sent, acked, unresolved
}
