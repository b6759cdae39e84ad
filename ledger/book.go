package ledger

import (
	"cmp"
	"container/list"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// DefaultMaxOpen is the number of ledgers a Book keeps when
// BookOptions.MaxOpen is zero.
const DefaultMaxOpen = 1024

// BookOptions configure a Book.
type BookOptions struct {
	// Options configure every key's Ledger: the actor, retries, backoff,
	// counter options and observer, as for New.
	Options

	// MaxOpen is how many ledgers (decoded states) the Book keeps; zero
	// means DefaultMaxOpen. Idle ledgers beyond it are dropped, least
	// recently used first, but not those the Book must keep (see Book).
	MaxOpen int
}

// Book keeps many keys' balances as one actor in one shared store: one
// Ledger per key, created on the key's first operation. Operations on
// different keys run concurrently, on one key serially (never two Ledgers
// for one key at once).
//
// The Book keeps at most MaxOpen Ledgers, dropping the least recently used
// idle one beyond that, but never one in use or holding what a Ledger
// opened in its place would not know (SPEC.md 6.11): it may hold more, and
// never refuses an operation for the bound. A key opened again continues
// the dropped Ledger's incarnation unless its first read is stale (SPEC.md
// 6.9). The Book remembers 16 × MaxOpen dropped keys (at least 1,024) and
// forgets any one beyond; a key forgotten writes a new incarnation. Stats
// reports the counts; LandPending writes what it can.
//
// A Book starts no goroutines and has no Close: a service calls
// LandPending every few seconds, well within RetireAfter (Ledger.Pending
// says why), and when it stops. It is safe for concurrent use: create one per actor when
// the process starts and reuse it.
type Book struct {
	store store.Siblings
	opts  Options // as given; New validates and normalises them per key
	max   int

	// open creates key's Ledger and keep reports whether an idle one must
	// stay open: New and mustStay, except in tests of broken variants.
	open func(key string) (*Ledger, error)
	keep func(*Ledger) bool

	mu      sync.Mutex
	entries map[string]*bookEntry
	// idle holds the droppable ledgers, least recently used first (not
	// simplelru, which bounds only its own entries and keeps a second map).
	idle    list.List // of *bookEntry
	inUse   int
	pending int // idle ledgers kept (keep)
	opened  uint64
	evicted uint64
	// dropped remembers, for keys whose idle Ledger was dropped, its
	// incarnation and that incarnation's version in its last write, so
	// that the key's next Ledger can continue it (at most remembered()).
	dropped map[string]resume
}

// remembered is how many dropped keys' incarnations b keeps: a resume is
// a few hundred bytes, much less than an open Ledger's state, and a key
// opened again without one writes a new incarnation, an actor entry more
// until it retires (RetireAfter), so churn past MaxOpen must not reach
// the account's MaxActors.
func (b *Book) remembered() int { return 16 * max(b.max, 64) }

// resume is a dropped Ledger's incarnation, its version, when its entry
// last changed (so that the grace rule, renewStale, still applies), and
// since when it saw other writers idle (keptSightings), so that the key's
// next Ledger dates them as this one did: their records may be gone.
type resume struct {
	writer  crdt.ActorID
	version uint64
	own     ownEntry
	seen    map[crdt.ActorID]sighting
}

// maxKeptSightings bounds the sightings a resume keeps, those seen idle
// longest, so that a resume stays small.
const maxKeptSightings = 16

// keptSightings returns, of a dropped Ledger's sightings, at most
// maxKeptSightings seen idle longest: each other writer's version and
// since when, to be checked and recorded again by the next Ledger.
func keptSightings(all map[crdt.ActorID]sighting) map[crdt.ActorID]sighting {
	if len(all) == 0 {
		return nil
	}
	// The oldest maxKeptSightings, kept in order as they are found: one
	// pass over every live actor, under the Book's lock, without sorting
	// them all.
	older := func(a, b crdt.ActorID) int { return cmp.Or(all[a].since.Compare(all[b].since), cmp.Compare(a, b)) }
	oldest := make([]crdt.ActorID, 0, maxKeptSightings+1)
	for a := range all {
		i, _ := slices.BinarySearchFunc(oldest, a, older)
		if i < maxKeptSightings {
			oldest = slices.Insert(oldest, i, a)[:min(len(oldest)+1, maxKeptSightings)]
		}
	}
	kept := make(map[crdt.ActorID]sighting, len(oldest))
	for _, a := range oldest {
		s := all[a]
		kept[a] = sighting{version: s.version, since: s.since, dated: s.dated}
	}
	return kept
}

// bookEntry is one open key. It is in exactly one state: in use (refs >
// 0), idle and pending, or idle in the Book's idle list (idle not nil).
type bookEntry struct {
	key     string
	l       *Ledger
	refs    int           // operations running or waiting on l
	pending bool          // idle, kept because b.keep(l)
	idle    *list.Element // e's element of Book.idle, or nil
}

// NewBook returns a Book over st writing as opts.Actor. It does no I/O.
// Errors wrap crdt.ErrInvalidActor or crdt.ErrInvalidConfig, as New's do.
func NewBook(st store.Siblings, opts BookOptions) (*Book, error) {
	if opts.MaxOpen < 0 {
		return nil, fmt.Errorf("%w: MaxOpen %d is negative", crdt.ErrInvalidConfig, opts.MaxOpen)
	}
	opts.MaxOpen = cmp.Or(opts.MaxOpen, DefaultMaxOpen)
	if _, err := New(st, "book", opts.Options); err != nil { // validates st and the options
		return nil, err
	}
	b := &Book{store: st, opts: opts.Options, max: opts.MaxOpen, entries: map[string]*bookEntry{}}
	b.open = func(key string) (*Ledger, error) { return New(b.store, key, b.opts) }
	b.keep = (*Ledger).mustStay
	return b, nil
}

// Actor returns Options.Actor.
func (b *Book) Actor() crdt.ActorID { return b.opts.Actor }

// MaxOpen returns how many ledgers the Book keeps when none is in use or
// pending: BookOptions.MaxOpen, or DefaultMaxOpen for zero.
func (b *Book) MaxOpen() int { return b.max }

// BookResult is a Book write's Result and the writer that made it.
type BookResult struct {
	Result
	// Writer is the incarnation that ran the write (Ledger.Writer of the
	// key's Ledger at the time). The Book may since have dropped that
	// Ledger, and a later write of the key has another Writer.
	Writer crdt.ActorID
}

// Credit adds amount (> 0) to key under transaction txn (Ledger.Credit).
func (b *Book) Credit(ctx context.Context, key string, txn crdt.TxnID, amount int64) (BookResult, error) {
	if amount <= 0 {
		return BookResult{}, refused(ctx, b.opts.Observer, positive("credit", amount))
	}
	return b.Update(ctx, key, txn, amount)
}

// Debit subtracts amount (> 0) from key under transaction txn
// (Ledger.Debit).
func (b *Book) Debit(ctx context.Context, key string, txn crdt.TxnID, amount int64) (BookResult, error) {
	if amount <= 0 {
		return BookResult{}, refused(ctx, b.opts.Observer, positive("debit", amount))
	}
	return b.Update(ctx, key, txn, -amount)
}

// Update applies a signed amount to key under transaction txn, as
// Ledger.Update does; an invalid key, txn or amount is refused before any
// Ledger opens (crdt.ErrInvalidKey, ErrInvalidTxnID, ErrInvalidAmount).
func (b *Book) Update(ctx context.Context, key string, txn crdt.TxnID, amount int64) (BookResult, error) {
	if err := checkUpdate(txn, amount); err != nil {
		return BookResult{}, refused(ctx, b.opts.Observer, err)
	}
	e, err := b.acquire(key)
	if err != nil {
		return BookResult{}, refused(ctx, b.opts.Observer, err)
	}
	defer b.release(e)
	res, err := e.l.Update(ctx, txn, amount)
	return BookResult{Result: res, Writer: e.l.Writer()}, err
}

// Value returns key's value as Ledger.Value does: the merged siblings plus
// this Book's own writes to key while its Ledger is open (after that, the
// store's read-your-writes). It writes nothing.
func (b *Book) Value(ctx context.Context, key string) (int64, error) {
	return with(ctx, b, key, "read", func(l *Ledger) (int64, error) { return l.Value(ctx) })
}

// HasTransaction reports whether txn is held in some actor's history of
// key (Ledger.HasTransaction).
func (b *Book) HasTransaction(ctx context.Context, key string, txn crdt.TxnID) (bool, error) {
	if err := txn.Validate(); err != nil {
		return false, refusedOp(ctx, b.opts.Observer, "read", err)
	}
	return with(ctx, b, key, "read", func(l *Ledger) (bool, error) { return l.HasTransaction(ctx, txn) })
}

// Find runs Ledger.Find on key: it reads, merges, compacts and writes back
// the key, landing a pending write, and returns a copy of the counter.
func (b *Book) Find(ctx context.Context, key string) (*tpncounter.Counter, error) {
	return with(ctx, b, key, "find", func(l *Ledger) (*tpncounter.Counter, error) { return l.Find(ctx) })
}

// LandPending runs Ledger.Land on every idle key whose Ledger the Book
// keeps (see BookStats.Pending), so that the writes land and the ledgers
// may be dropped. It returns the failed keys' errors, joined; their
// ledgers stay kept, as do ledgers watching a copy until a read ends it.
func (b *Book) LandPending(ctx context.Context) error {
	b.mu.Lock()
	var keys []*bookEntry
	for _, e := range b.entries {
		if e.pending {
			b.take(e)
			keys = append(keys, e)
		}
	}
	b.mu.Unlock()
	var errs []error
	for i, e := range keys {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			for _, e := range keys[i:] {
				b.release(e)
			}
			break
		}
		if err := e.l.Land(ctx); err != nil {
			errs = append(errs, err)
		}
		b.release(e)
	}
	return errors.Join(errs...)
}

// BookStats describe a Book's ledgers at one moment.
type BookStats struct {
	// Open is the number of ledgers held: InUse + Pending + the idle ones.
	// It exceeds MaxOpen only while InUse + Pending does.
	Open int
	// InUse is the number running or waiting for an operation.
	InUse int
	// Pending is the number idle and kept: a pending write, a take-out
	// (of a copy another writer counted, or given up) or an owed record,
	// until a write or Find on their key (or LandPending) lands it; a
	// watched copy, until a read ends it.
	Pending int
	// Opened counts the Ledgers created since NewBook: each writes its key
	// as a new incarnation, one more actor entry in the key's state, unless
	// it continues a dropped Ledger's (see Book).
	Opened uint64
	// Evicted counts the idle Ledgers dropped to stay within MaxOpen.
	Evicted uint64
}

// Stats returns the current counts.
func (b *Book) Stats() BookStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BookStats{Open: len(b.entries), InUse: b.inUse, Pending: b.pending,
		Opened: b.opened, Evicted: b.evicted}
}

// acquire returns key's entry, opening its Ledger if needed, with a
// reference the caller must release.
func (b *Book) acquire(key string) (*bookEntry, error) {
	b.mu.Lock()
	if e := b.entries[key]; e != nil {
		b.take(e)
		b.mu.Unlock()
		return e, nil
	}
	b.mu.Unlock()
	// New checks the key and draws the incarnation outside the lock; a
	// Ledger that loses the race below is dropped before it wrote anything.
	l, err := b.open(key)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.entries[key]
	if e == nil {
		if r, ok := b.dropped[key]; ok {
			delete(b.dropped, key)
			l.setWriter(r.writer, r.own)
			l.resume = r.version // checked by its first read
			l.sightings = r.seen
		}
		e = &bookEntry{key: key, l: l}
		b.entries[key] = e
		b.opened++
	}
	b.take(e)
	b.evict()
	return e, nil
}

// with runs fn, an operation named op, on key's Ledger, held for the call;
// a key refused (acquire) is reported as op refused.
func with[T any](ctx context.Context, b *Book, key, op string, fn func(*Ledger) (T, error)) (T, error) {
	e, err := b.acquire(key)
	if err != nil {
		var zero T
		return zero, refusedOp(ctx, b.opts.Observer, op, err)
	}
	defer b.release(e)
	return fn(e.l)
}

// take adds a reference to e; b.mu is held.
func (b *Book) take(e *bookEntry) {
	if e.refs == 0 {
		if e.pending {
			e.pending = false
			b.pending--
		} else if e.idle != nil {
			b.idle.Remove(e.idle)
			e.idle = nil
		}
		b.inUse++
	}
	e.refs++
}

// release drops a reference to e. When e turns idle it is kept as pending
// or queued as the most recently used, and idle ledgers beyond the bound
// are dropped.
func (b *Book) release(e *bookEntry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e.refs--
	if e.refs > 0 {
		return
	}
	b.inUse--
	// No operation runs on e.l now, and none can start while b.mu is
	// held, so its pending state cannot change under us.
	if b.keep(e.l) {
		e.pending = true
		b.pending++
	} else {
		e.idle = b.idle.PushBack(e)
	}
	b.evict()
}

// evict drops least recently used idle ledgers while more than b.max are
// open; b.mu is held.
func (b *Book) evict() {
	for len(b.entries) > b.max {
		front := b.idle.Front()
		if front == nil {
			return // the rest are in use or pending
		}
		e := b.idle.Remove(front).(*bookEntry)
		e.idle = nil
		delete(b.entries, e.key)
		b.evicted++
		b.remember(e)
	}
}

// remember keeps the incarnation of e's Ledger, being dropped idle, for the
// key's next Ledger: only one that wrote and holds nothing unwritten (no
// pending write, no unwritten transaction record), or one that took a
// remembered incarnation and has not read since (its first read failed).
// b.mu is held, and no operation runs on e.l.
func (b *Book) remember(e *bookEntry) {
	l := e.l
	v := l.stored // a state ahead of the store was not written
	if l.cyc.Local == nil {
		v = l.resume // still to be checked by a first read
	}
	if v == 0 || l.cyc.Pending || len(l.unindexed) > 0 || brokenBookForgets {
		return
	}
	if b.dropped == nil {
		b.dropped = map[string]resume{}
	}
	for k := range b.dropped {
		if len(b.dropped) < b.remembered() {
			break
		}
		delete(b.dropped, k) // any one: a key not remembered gets a new incarnation
	}
	b.dropped[e.key] = resume{l.writer, v, l.own, keptSightings(l.sightings)}
}
