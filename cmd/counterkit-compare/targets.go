package main

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/internal/cli"
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
			out = append(out, &ledgerTarget{cfg: cfg, st: sib, key: key(n), typ: n, writers: map[int]credit{}})
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
				writer: func() (addFunc, error) {
					c, err := deltalog.New(part, deltalog.Options{Clock: cfg.now})
					return c.Add, err
				},
				read: func(ctx context.Context, k string) (int64, error) {
					r, err := c.Read(ctx, k)
					return r.Value, err
				}})
		case "balance":
			ac, err := balance.New(part, balance.Options{Clock: cfg.now})
			if err != nil {
				return nil, err
			}
			out = append(out, &logTarget{cfg: cfg, typ: n, key: key(n), read: ac.Balance,
				writer: func() (addFunc, error) {
					a, err := balance.New(part, balance.Options{Clock: cfg.now})
					return a.Add, err
				}})
		default:
			return nil, cli.Usagef("%w: unknown type %q", crdt.ErrInvalidConfig, n)
		}
	}
	return out, nil
}

// retryable: a caller resends a counterkit transaction after any error but
// one that says the transaction itself can never be applied (invalid input
// or configuration, outside the write window, a damaged state, a size
// limit): it carries its id, so a resend never counts twice.
func counterkitRetryable(err error) bool {
	return !slices.ContainsFunc([]error{crdt.ErrInvalidIdentifier, crdt.ErrInvalidActor, crdt.ErrInvalidTxnID,
		crdt.ErrInvalidAmount, crdt.ErrInvalidConfig, crdt.ErrConflictingTransaction, crdt.ErrOutsideWindow,
		crdt.ErrTooLarge, crdt.ErrOverflow, crdt.ErrCorruptEncoding, crdt.ErrUnsupportedVersion,
		crdt.ErrTypeMismatch, crdt.ErrMisconfiguredStore, crdt.ErrExpired}, func(final error) bool { return errors.Is(err, final) })
}

// oneWriter is a writer whose every transaction is one increment written
// by send, under its own identity (a native increment, a transaction id,
// an update id).
type oneWriter struct {
	sendFn  func(ctx context.Context, t *txn) (writes int, err error)
	retryFn func(err error) bool
}

func (w *oneWriter) next(int) *txn                                 { return &txn{amount: 1} }
func (w *oneWriter) finish() *txn                                  { return nil }
func (w *oneWriter) send(ctx context.Context, t *txn) (int, error) { return w.sendFn(ctx, t) }
func (w *oneWriter) retryable(err error) bool                      { return w.retryFn(err) }

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

// newWriter: a caller resends a failed increment whatever the error (it
// cannot tell a timed-out increment that landed from one that did not).
func (t *nativeTarget) newWriter(int) (compareWriter, error) {
	return &oneWriter{
		sendFn:  func(ctx context.Context, _ *txn) (int, error) { return 1, t.n.Add(ctx, t.key, 1) },
		retryFn: func(error) bool { return true },
	}, nil
}

// ledgerTarget credits one account: a plain ledger key, or a sharded one.
type ledgerTarget struct {
	cfg compareConfig
	st  store.Siblings
	key string
	typ string // ledger or ledger-sharded

	mu      sync.Mutex
	writers map[int]credit // with cfg.actors: the ledger of each actor, shared by its workers
}

func (t *ledgerTarget) name() string     { return t.typ }
func (t *ledgerTarget) counterkit() bool { return true }

// credit is a plain or sharded ledger's Credit.
type credit func(ctx context.Context, txn crdt.TxnID, amount int64) (ledger.Result, error)

func (t *ledgerTarget) open(actor string) (credit, func(context.Context) (int64, error), error) {
	opts := ledger.Options{Actor: crdt.ActorID(actor), Backoff: ledger.Backoff{Initial: -1},
		Counter: tpncounter.Options{HistoryLength: t.cfg.history}}
	if t.typ == "ledger-sharded" {
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
	t.writers[a] = cr
	return cr, nil
}

// txnID names a transaction by the worker that made it: a resend by
// another worker carries the same id.
func txnID(runID string, t *txn) crdt.TxnID {
	return crdt.TxnID(fmt.Sprintf("%s-w%d-%d", runID, t.origin, t.seq))
}

func (t *ledgerTarget) newWriter(w int) (compareWriter, error) {
	cr, err := t.writer(w)
	if err != nil {
		return nil, err
	}
	return &oneWriter{
		sendFn: func(ctx context.Context, x *txn) (int, error) {
			res, err := cr(ctx, txnID(t.cfg.runID, x), 1)
			return max(res.Attempts, 1), err
		},
		retryFn: counterkitRetryable,
	}, nil
}

// addFunc is a deltalog Counters' or a balance Accounts' Add.
type addFunc func(ctx context.Context, key string, id timeid.ID, delta int64) error

// logTarget adds to one deltalog counter or balance account, each
// transaction under its own time-based update id, each worker through its
// own Counters or Accounts.
type logTarget struct {
	cfg    compareConfig
	typ    string
	key    string
	writer func() (addFunc, error)
	read   func(ctx context.Context, key string) (int64, error)
	base   time.Time
	once   sync.Once
}

func (t *logTarget) name() string     { return t.typ }
func (t *logTarget) counterkit() bool { return true }
func (t *logTarget) value(ctx context.Context) (int64, error) {
	return t.read(ctx, t.key)
}

func (t *logTarget) newWriter(int) (compareWriter, error) {
	t.once.Do(func() { t.base = t.cfg.now() })
	add, err := t.writer()
	if err != nil {
		return nil, err
	}
	node := runNode(t.cfg.runID)
	return &oneWriter{
		sendFn: func(ctx context.Context, x *txn) (int, error) {
			return 1, add(ctx, t.key, updateID(t.base, node, x.origin, x.seq), 1)
		},
		retryFn: counterkitRetryable,
	}, nil
}

// updateID is transaction seq of worker w: a version 1 UUID whose time is
// base + seq µs (not after the clock when it is first sent, since every
// transaction takes longer than a microsecond), whose clock sequence is
// the worker and whose node is the run's. A resend uses the same id.
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

func (t *tallyTarget) newWriter(int) (compareWriter, error) {
	m, err := t.c.NewMutator()
	if err != nil {
		return nil, err
	}
	return &tallyWriter{t: t, m: m}, nil
}

// tallyWriter stages updates on its mutator and makes a transaction of
// every cfg.flushEvery of them: one flush.
type tallyWriter struct {
	t      *tallyTarget
	m      *tally.Mutator[*tally.Sum]
	staged int // updates staged, not yet flushed
}

func addOne(s *tally.Sum) error { return s.Add(1) }

func (w *tallyWriter) next(int) *txn {
	if err := w.m.Stage(addOne); err != nil {
		// The mutator can take no more (expired): go on with a fresh one;
		// what it had staged is lost and was never counted in distinct.
		m, err := w.t.c.NewMutator()
		if err != nil {
			return nil
		}
		w.m, w.staged = m, 0
		if m.Stage(addOne) != nil {
			return nil
		}
	}
	w.staged++
	if w.staged < w.t.cfg.flushEvery {
		return nil
	}
	return w.finish()
}

func (w *tallyWriter) finish() *txn {
	if w.staged == 0 {
		return nil
	}
	t := &txn{amount: int64(w.staged)}
	w.staged = 0
	return t
}

// send: a first send flushes the writer's mutator; if that leaves the write
// unresolved, the transaction keeps the mutator (a resend retries the
// write on it, Mutator.Retry, whoever resends) and the writer goes on with
// a fresh one. A flush that definitely did not land is resent by staging
// its updates again on a fresh mutator of the resending writer's.
func (w *tallyWriter) send(ctx context.Context, t *txn) (int, error) {
	if m, ok := t.state.(*tally.Mutator[*tally.Sum]); ok && m.Unresolved() {
		return 1, m.Retry(ctx)
	}
	m := w.m
	if t.sends > 1 {
		fresh, err := w.t.c.NewMutator()
		if err != nil {
			return 0, err
		}
		for range t.amount {
			if err := fresh.Stage(addOne); err != nil {
				return 0, err
			}
		}
		m = fresh
	}
	err := m.Flush(ctx)
	if err != nil && m.Unresolved() {
		t.state = m
		if m == w.m {
			fresh, ferr := w.t.c.NewMutator()
			if ferr != nil {
				return 1, errors.Join(err, ferr)
			}
			w.m = fresh
		}
	}
	return 1, err
}

func (w *tallyWriter) retryable(err error) bool { return counterkitRetryable(err) }
