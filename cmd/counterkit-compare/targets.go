package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"sync/atomic"
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

// compareTarget is one counter type under comparison: it gives each worker
// its own writer and reads the counter back. counterkit reports whether the
// type is one of the library's (which must not drift) rather than the
// native counter.
type compareTarget struct {
	name       string
	counterkit bool
	newWriter  func(w int) (compareWriter, error)
	value      func(ctx context.Context) (int64, error)
	// writes counts the store writes the type made: a native increment, a
	// Put, or an Apply of a batch of rows, resends and merges included.
	writes *atomic.Int64
}

// countedSiblings counts the Puts made through it.
type countedSiblings struct {
	store.Siblings
	n *atomic.Int64
}

func (s countedSiblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	s.n.Add(1)
	return s.Siblings.Put(ctx, key, actor, value, token)
}

// countedPartitions counts the Applies (each one batch) made through it.
type countedPartitions struct {
	store.Partitions
	n *atomic.Int64
}

func (p countedPartitions) Apply(ctx context.Context, muts []store.Mutation) error {
	p.n.Add(1)
	return p.Partitions.Apply(ctx, muts)
}

// compareTargets builds the targets named by names over the native counter
// and the two counterkit storage shapes.
func compareTargets(names []string, cfg compareConfig, native nativeCounter, sib store.Siblings, part store.Partitions) ([]compareTarget, error) {
	var out []compareTarget
	for _, n := range names {
		key := "compare-" + cfg.runID + "-" + n
		writes := new(atomic.Int64)
		sib, part := countedSiblings{sib, writes}, countedPartitions{part, writes}
		var t compareTarget
		var err error
		switch n {
		case "native":
			t = nativeTarget(native, key, writes)
		case "ledger", "ledger-sharded":
			t = ledgerTarget(cfg, sib, key, n)
		case "tally":
			t, err = tallyTarget(cfg, part, key)
		case "deltalog":
			t, err = logTarget(cfg, n, key, func() (addFunc, readFunc, mergeFunc, error) {
				c, err := deltalog.New(part, deltalog.Options{Clock: cfg.now})
				return c.Add, func(ctx context.Context, k string) (int64, error) {
					r, err := c.Read(ctx, k)
					return r.Value, err
				}, nil, err
			})
		case "balance":
			t, err = logTarget(cfg, n, key, func() (addFunc, readFunc, mergeFunc, error) {
				a, err := balance.New(part, balance.Options{Clock: cfg.now})
				return a.Add, a.Balance, func(ctx context.Context, k string) error {
					_, err := a.Merge(ctx, k)
					return err
				}, err
			})
		case "transactions":
			t, err = transactionsTarget(cfg, part, key)
		default:
			return nil, cli.Usagef("%w: unknown type %q", crdt.ErrInvalidConfig, n)
		}
		if err != nil {
			return nil, err
		}
		t.writes = writes
		out = append(out, t)
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
func oneWriter(send func(ctx context.Context, t *txn) error, retryable func(error) bool) (compareWriter, error) {
	return compareWriter{next: func(int) *txn { return &txn{amount: 1} }, finish: func() *txn { return nil }, send: send, retryable: retryable}, nil
}

// nativeTarget increments one native counter. A caller resends a failed
// increment whatever the error (it cannot tell a timed-out increment that
// landed from one that did not).
func nativeTarget(n nativeCounter, key string, writes *atomic.Int64) compareTarget {
	return compareTarget{name: "native",
		value: func(ctx context.Context) (int64, error) { return n.Value(ctx, key) },
		newWriter: func(int) (compareWriter, error) {
			return oneWriter(func(ctx context.Context, _ *txn) error {
				writes.Add(1)
				return n.Add(ctx, key, 1)
			}, func(error) bool { return true })
		}}
}

// credit is a plain or sharded ledger's Credit.
type credit func(ctx context.Context, txn crdt.TxnID, amount int64) (ledger.Result, error)

// ledgerTarget credits one account: a plain ledger key, or a sharded one
// (typ ledger-sharded). Each worker w writes through a ledger of its own,
// or with cfg.actors through the ledger of actor w mod actors, which the
// workers of that actor share (a Ledger and a Sharded are safe for
// concurrent use).
func ledgerTarget(cfg compareConfig, st store.Siblings, key, typ string) compareTarget {
	open := func(actor string) (credit, func(context.Context) (int64, error), error) {
		opts := ledger.Options{Actor: crdt.ActorID(actor), Backoff: ledger.Backoff{Initial: -1},
			Counter: tpncounter.Options{HistoryLength: cfg.history}}
		if typ == "ledger-sharded" {
			s, err := ledger.NewSharded(st, key, cfg.shards, opts)
			if err != nil {
				return nil, nil, err
			}
			return s.Credit, s.Value, nil
		}
		l, err := ledger.New(st, key, opts)
		if err != nil {
			return nil, nil, err
		}
		return l.Credit, l.Value, nil
	}
	var mu sync.Mutex
	writers := map[string]credit{} // by actor
	return compareTarget{name: typ, counterkit: true,
		value: func(ctx context.Context) (int64, error) {
			_, value, err := open("compare-reader")
			if err != nil {
				return 0, err
			}
			return value(ctx)
		},
		newWriter: func(w int) (compareWriter, error) {
			actor := fmt.Sprintf("compare-w%d", w)
			if cfg.actors > 0 {
				actor = fmt.Sprintf("compare-a%d", w%cfg.actors)
			}
			mu.Lock()
			defer mu.Unlock()
			cr, ok := writers[actor]
			if !ok {
				var err error
				if cr, _, err = open(actor); err != nil {
					return compareWriter{}, err
				}
				writers[actor] = cr
			}
			return oneWriter(func(ctx context.Context, x *txn) error {
				_, err := cr(ctx, txnID(cfg.runID, x), 1)
				return err
			}, counterkitRetryable)
		}}
}

// txnID names a transaction by the worker that made it: a resend by
// another worker carries the same id.
func txnID(runID string, t *txn) crdt.TxnID {
	return crdt.TxnID(fmt.Sprintf("%s-w%d-%d", runID, t.origin, t.seq))
}

// transactionsTarget credits one balance account by transaction id, each
// worker through its own Transactions; worker 0 also merges the account
// (records, sums, settles: mergeOnTimer).
func transactionsTarget(cfg compareConfig, part store.Partitions, key string) (compareTarget, error) {
	open := func() (*balance.Transactions, error) {
		return balance.NewTransactions(part, balance.TxnOptions{Options: balance.Options{Clock: cfg.now}})
	}
	reader, err := open()
	if err != nil {
		return compareTarget{}, err
	}
	return compareTarget{name: "transactions", counterkit: true,
		value: func(ctx context.Context) (int64, error) { return reader.Balance(ctx, key) },
		newWriter: func(w int) (compareWriter, error) {
			tx, err := open()
			if err != nil {
				return compareWriter{}, err
			}
			cw, err := oneWriter(func(ctx context.Context, x *txn) error {
				_, err := tx.Apply(ctx, key, txnID(cfg.runID, x), 1)
				return err
			}, counterkitRetryable)
			if w == 0 {
				mergeOnTimer(cfg, &cw, func(ctx context.Context) error {
					_, err := tx.Merge(ctx, key)
					return err
				})
			}
			return cw, err
		}}, nil
}

// mergeOnTimer makes cw, worker 0's writer, run merge at its first send
// cfg.mergeEvery after its last merge, as a service would on a timer:
// after the send and outside its latency, with its own timeout
// (-read-timeout, not the writes' -timeout), its failures counted apart.
func mergeOnTimer(cfg compareConfig, cw *compareWriter, merge func(context.Context) error) {
	merged := cfg.now()
	var m maintenance
	cw.maintain = func(ctx context.Context) {
		if now := cfg.now(); now.Sub(merged) >= cfg.mergeEvery {
			merged = now
			mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.readTimeout)
			defer cancel()
			if err := merge(mctx); err != nil {
				m.failed++
				m.first = cmp.Or(m.first, err)
			}
			m.runs++
		}
	}
	cw.merges = func() maintenance { return m }
}

// addFunc, readFunc and mergeFunc are a deltalog Counters' or a balance
// Accounts' Add, read and merge.
type (
	addFunc   func(ctx context.Context, key string, id timeid.ID, delta int64) error
	readFunc  func(ctx context.Context, key string) (int64, error)
	mergeFunc func(ctx context.Context, key string) error
)

// logTarget adds to one deltalog counter or balance account, each
// transaction under its own time-based update id, each worker through its
// own Counters or Accounts: open makes one. When open gives a merge,
// worker 0 also merges the key (mergeOnTimer).
func logTarget(cfg compareConfig, typ, key string, open func() (addFunc, readFunc, mergeFunc, error)) (compareTarget, error) {
	_, read, _, err := open()
	if err != nil {
		return compareTarget{}, err
	}
	node := runNode(cfg.runID)
	return compareTarget{name: typ, counterkit: true,
		value: func(ctx context.Context) (int64, error) { return read(ctx, key) },
		newWriter: func(w int) (compareWriter, error) {
			add, _, merge, err := open()
			if err != nil {
				return compareWriter{}, err
			}
			cw, err := oneWriter(func(ctx context.Context, x *txn) error {
				return add(ctx, key, x.state.(timeid.ID), 1)
			}, counterkitRetryable)
			if w == 0 && merge != nil {
				mergeOnTimer(cfg, &cw, func(ctx context.Context) error { return merge(ctx, key) })
			}
			var last time.Time
			cw.next = func(int) *txn {
				at := cfg.now().Truncate(time.Microsecond)
				if !at.After(last) {
					at = last.Add(time.Microsecond)
				}
				last = at
				return &txn{amount: 1, state: updateID(at, node, w)}
			}
			return cw, err
		}}, nil
}

// updateID is a transaction of worker w made at at: a version 1 UUID of
// that time, whose clock sequence is the worker and whose node is the
// run's, dated as a caller dates an update when it makes it, so that a
// resend is as old as the transaction. A resend uses the same id; a
// worker's ids are at distinct microseconds.
func updateID(at time.Time, node uint64, w int) timeid.ID {
	return timeid.FromParts(at, uint16(w)&0x3fff, node)
}

// runNode is the 48-bit node of the run's update ids.
func runNode(runID string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(runID))
	return h.Sum64() & (1<<48 - 1)
}

// tallyTarget updates one tally counter, one mutator per worker.
func tallyTarget(cfg compareConfig, part store.Partitions, key string) (compareTarget, error) {
	c, err := tally.New[*tally.Sum](part, key, tally.Options{Clock: cfg.now, Retries: -1})
	return compareTarget{name: "tally", counterkit: true,
		value: func(ctx context.Context) (int64, error) {
			s, err := c.Read(ctx)
			return s.Value(), err
		},
		newWriter: func(int) (compareWriter, error) {
			m, err := c.NewMutator()
			if err != nil {
				return compareWriter{}, err
			}
			w := &tallyWriter{c: c, every: cfg.flushEvery, m: m}
			return compareWriter{next: w.next, finish: w.finish, send: w.send, retryable: counterkitRetryable}, nil
		}}, err
}

// tallyWriter stages updates on its mutator and makes a transaction of
// every cfg.flushEvery of them: one flush.
type tallyWriter struct {
	c      *tally.Counter[*tally.Sum]
	every  int // cfg.flushEvery
	m      *tally.Mutator[*tally.Sum]
	staged int // updates staged, not yet flushed
}

func addOne(s *tally.Sum) error { return s.Add(1) }

func (w *tallyWriter) next(int) *txn {
	if err := w.m.Stage(addOne); err != nil {
		// The mutator can take no more (expired): go on with a fresh one;
		// what it had staged is lost and was never counted in distinct.
		m, err := w.c.NewMutator()
		if err != nil {
			return nil
		}
		w.m, w.staged = m, 0
		if m.Stage(addOne) != nil {
			return nil
		}
	}
	w.staged++
	if w.staged < w.every {
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
func (w *tallyWriter) send(ctx context.Context, t *txn) error {
	if m, ok := t.state.(*tally.Mutator[*tally.Sum]); ok && m.Unresolved() {
		return m.Retry(ctx)
	}
	m := w.m
	if t.sends > 1 {
		fresh, err := w.c.NewMutator()
		if err != nil {
			return err
		}
		for range t.amount {
			if err := fresh.Stage(addOne); err != nil {
				return err
			}
		}
		m = fresh
	}
	err := m.Flush(ctx)
	if err != nil && m.Unresolved() {
		t.state = m
		if m == w.m {
			fresh, ferr := w.c.NewMutator()
			if ferr != nil {
				return errors.Join(err, ferr)
			}
			w.m = fresh
		}
	}
	return err
}
