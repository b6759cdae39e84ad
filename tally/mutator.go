package tally

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
)

// ErrUnresolved is returned by Stage, Flush and Update while an earlier
// write's outcome is unknown: call Retry or Abandon first. It wraps
// crdt.ErrAmbiguousWrite, as that earlier write is, but the call that
// returns it staged nothing: its update is not counted by any Retry, so
// apply it again once the earlier write is resolved. An Observer sees such
// a call as refused (outcome invalid), not as ambiguous.
var ErrUnresolved = fmt.Errorf("%w: tally: an earlier write is unresolved; call Retry or Abandon", crdt.ErrAmbiguousWrite)

// Mutator owns one shard of a counter and overwrites it with its full
// state; an update never reads the store. Create one with Counter.NewMutator,
// use it from one goroutine (a Mutator is not safe for concurrent use; give
// each goroutine its own), and replace it when it returns crdt.ErrExpired.
//
// # Outcomes
//
// Stage applies updates in memory; Flush writes them, all at once, as one
// shard write. After Flush (or Update):
//
//   - nil: every update staged since the last success is counted, once;
//   - an error wrapping crdt.ErrAmbiguousWrite: unknown. The mutator keeps
//     the unresolved write and refuses new updates (ErrUnresolved) until
//     Retry (counts it once) or Abandon (it is then not counted) succeeds.
//     Test for ErrUnresolved first: it wraps crdt.ErrAmbiguousWrite too,
//     but its call's own update was refused, not written;
//   - any other error (crdt.ErrUnavailable, crdt.ErrExpired, an encoding
//     error): nothing was written; the staged updates are discarded and
//     not counted, so the caller may apply them again.
//
// An error wrapping both crdt.ErrAmbiguousWrite and crdt.ErrExpired means
// the outcome stays unknown for good.
type Mutator[A Aggregate[A]] struct {
	c         *Counter[A]
	id        crdt.ActorID
	expiresAt int64 // µs

	staged A    // committed state plus staged updates
	dirty  bool // staged holds updates not yet written

	committed []byte // last acknowledged encoding; nil before the first
	pending   []byte // unresolved encoding; nil when resolved
	lastTS    int64  // greatest write timestamp attempted
	lastSent  []byte // the bytes attempted at lastTS
	dead      bool   // expired: no new updates, no resolution

	stats sendStats // of the operation in progress, for Options.Observer
}

// NewMutator returns a mutator with a new id (Options.NewID) that expires
// Lifetime from now, without touching the store. The error wraps
// crdt.ErrInvalidActor for an invalid id, and crdt.ErrInvalidConfig for a
// clock whose now + Lifetime is not after 1970 or past what int64
// microseconds hold (about the year 294,000): no shard can carry such an
// expires_at (SPEC.md 7.3).
func (c *Counter[A]) NewMutator() (*Mutator[A], error) {
	id := c.cfg.NewID()
	if err := id.Validate(); err != nil {
		return nil, fmt.Errorf("tally: new mutator: %w", err)
	}
	now := c.cfg.Clock()
	if exp := now.Add(c.cfg.Lifetime); exp.Before(time.UnixMicro(1)) || exp.After(time.UnixMicro(math.MaxInt64)) {
		return nil, fmt.Errorf("%w: tally: new mutator: the clock reads %s, so expires_at (now + Lifetime %v) is outside (1970, %d µs]",
			crdt.ErrInvalidConfig, now.UTC().Format(time.RFC3339Nano), c.cfg.Lifetime, int64(math.MaxInt64))
	}
	return &Mutator[A]{
		c:         c,
		id:        id,
		expiresAt: now.UnixMicro() + c.cfg.Lifetime.Microseconds(),
		staged:    identity[A](),
	}, nil
}

// ID returns the mutator's id, which names its shard row (ShardRowKey).
func (m *Mutator[A]) ID() crdt.ActorID { return m.id }

// ExpiresAt returns the time after which the mutator never writes.
func (m *Mutator[A]) ExpiresAt() time.Time { return time.UnixMicro(m.expiresAt) }

// Unresolved reports whether a write with an unknown outcome awaits Retry
// or Abandon.
func (m *Mutator[A]) Unresolved() bool { return m.pending != nil }

// Stage applies fn to the mutator's in-memory state, without I/O; Flush
// writes it. fn must leave the state unchanged when it fails and must not
// keep its argument; its error is returned as is. Once now ≥ expires_at −
// Margin, Stage discards what is staged and returns an error wrapping
// crdt.ErrExpired; while a write is unresolved, ErrUnresolved.
func (m *Mutator[A]) Stage(fn func(A) error) error {
	if err := m.usable(); err != nil {
		return err
	}
	if err := fn(m.staged); err != nil {
		return err
	}
	m.dirty = true
	return nil
}

func (m *Mutator[A]) usable() error {
	switch {
	case m.pending != nil:
		return ErrUnresolved
	case m.dead:
		return fmt.Errorf("%w: tally: mutator %s", crdt.ErrExpired, m.id)
	case m.c.nowMicros() >= m.expiresAt-m.c.cfg.Margin.Microseconds():
		m.dead = true
		m.rollback()
		return fmt.Errorf("%w: tally: mutator %s is within %v of its expiry; staged updates were discarded",
			crdt.ErrExpired, m.id, m.c.cfg.Margin)
	}
	return nil
}

// Flush writes the staged state as one shard write, resending the same
// bytes at the same timestamp up to Retries times while the outcome is
// unknown. It does nothing when nothing is staged.
func (m *Mutator[A]) Flush(ctx context.Context) error {
	return m.observed(ctx, "flush", m.flush)
}

func (m *Mutator[A]) observed(ctx context.Context, op string, run func(context.Context) error) error {
	ctx, o := observe.Start(ctx, m.c.cfg.Observer, "tally", op)
	defer o.End(rowlog.Unreturned(true)) // if run panics
	m.stats = sendStats{}
	err := run(ctx)
	e := event(m.stats, err)
	if m.stats.attempts > 0 {
		e.Bytes = len(m.lastSent)
	}
	o.End(e)
	return err
}

func (m *Mutator[A]) flush(ctx context.Context) error {
	if err := m.usable(); err != nil {
		return err
	}
	if !m.dirty {
		return nil
	}
	data, err := Shard[A]{Mutator: m.id, ExpiresAt: m.expiresAt, State: m.staged}.MarshalBinary()
	if err != nil {
		m.rollback()
		return fmt.Errorf("tally: flush %s: %w", m.id, err)
	}
	ts, err := m.nextTS()
	if err != nil {
		m.rollback()
		return err
	}
	err = m.write(ctx, data, ts)
	switch {
	case err == nil:
		m.committed, m.dirty = data, false
		return nil
	case errors.Is(err, crdt.ErrAmbiguousWrite):
		m.pending = data
		return fmt.Errorf("tally: flush %s: %w", m.id, err)
	default:
		m.rollback()
		return fmt.Errorf("tally: flush %s (staged updates discarded): %w", m.id, err)
	}
}

// Update is Stage then Flush, reported as one flush (a Stage it refuses
// included).
func (m *Mutator[A]) Update(ctx context.Context, fn func(A) error) error {
	return m.observed(ctx, "flush", func(ctx context.Context) error {
		if err := m.Stage(fn); err != nil {
			return err
		}
		return m.flush(ctx)
	})
}

// Retry resends the unresolved write so that it counts once (at a fresh
// timestamp after a failed Abandon). nil means counted; an error wrapping
// crdt.ErrAmbiguousWrite means still unknown, and with crdt.ErrExpired
// (past expires_at) unknown for good. With nothing unresolved it does
// nothing.
func (m *Mutator[A]) Retry(ctx context.Context) error {
	return m.observed(ctx, "retry", m.retry)
}

func (m *Mutator[A]) retry(ctx context.Context) error {
	if m.pending == nil {
		return nil
	}
	if err := m.resolve(ctx, m.pending); err != nil {
		return fmt.Errorf("tally: retry %s: %w", m.id, err)
	}
	m.committed, m.pending, m.dirty = m.pending, nil, false
	return nil
}

// Abandon overwrites the unresolved write with the last acknowledged state
// at a greater timestamp. nil means the unresolved updates never count and
// the mutator accepts updates again; an error wrapping
// crdt.ErrAmbiguousWrite means still unknown. With nothing unresolved it
// does nothing.
func (m *Mutator[A]) Abandon(ctx context.Context) error {
	return m.observed(ctx, "abandon", m.abandon)
}

func (m *Mutator[A]) abandon(ctx context.Context) error {
	if m.pending == nil {
		return nil
	}
	target, err := m.committed, error(nil)
	if target == nil {
		target, err = Shard[A]{Mutator: m.id, ExpiresAt: m.expiresAt}.MarshalBinary()
	}
	if err == nil {
		err = m.resolve(ctx, target)
	}
	if err != nil {
		return fmt.Errorf("tally: abandon %s: %w", m.id, err)
	}
	m.committed, m.pending = target, nil
	m.rollback()
	return nil
}

// resolve makes target the shard's value: the highest-timestamped write
// that lands decides it, so target is resent at lastTS if it is what was
// last attempted there, and written at a fresh timestamp otherwise.
func (m *Mutator[A]) resolve(ctx context.Context, target []byte) error {
	if m.dead || m.c.nowMicros() >= m.expiresAt {
		m.dead = true
		return fmt.Errorf("%w: %w", crdt.ErrAmbiguousWrite, errLate)
	}
	ts := m.lastTS
	if !bytes.Equal(target, m.lastSent) {
		var err error
		if ts, err = m.nextTS(); err != nil {
			return fmt.Errorf("%w: %w", crdt.ErrAmbiguousWrite, err)
		}
	}
	// A round that certainly failed is still ambiguous: an earlier one may
	// have landed.
	return retry.AmbiguousErr(m.write(ctx, target, ts))
}

// nextTS returns a write timestamp above every earlier one, below
// expires_at.
func (m *Mutator[A]) nextTS() (int64, error) {
	ts := max(m.lastTS+1, m.c.nowMicros())
	if ts >= m.expiresAt {
		m.dead = true
		return 0, fmt.Errorf("tally: mutator %s: %w", m.id, errLate)
	}
	return ts, nil
}

// write sends data at ts, never after expires_at.
func (m *Mutator[A]) write(ctx context.Context, data []byte, ts int64) error {
	m.lastTS, m.lastSent = ts, data
	muts := []store.Mutation{{Partition: m.c.key, Op: store.OpPut, Key: ShardRowKey(m.id), Value: data, Timestamp: ts}}
	err := m.c.send(ctx,
		func() error { return m.c.store.Apply(ctx, muts) },
		func() bool { return m.c.nowMicros() < m.expiresAt }, &m.stats)
	if errors.Is(err, crdt.ErrExpired) {
		m.dead = true
	}
	return err
}

// rollback resets the staged state to the last acknowledged one.
func (m *Mutator[A]) rollback() {
	m.dirty = false
	if m.committed == nil {
		m.staged = identity[A]()
		return
	}
	s, err := DecodeShard[A](m.committed)
	if err != nil {
		panic(fmt.Sprintf("tally: mutator %s cannot decode its own shard: %v", m.id, err))
	}
	m.staged = s.State
}
