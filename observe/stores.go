package observe

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// Siblings wraps a store.Siblings so that every call is reported to o as an
// operation of Component "store.siblings", nested in the calling
// operation. It implements store.SiblingDeleter and store.Expiring exactly
// when inner does (TTL is inner's, not reported), so that a ledger, bounded
// or statestore still refuses an expiring store for counter state through
// it. When inner also lists its keys and deletes in batches, as the
// memory and embedded stores do (DeleteBatch and Keys, reported as
// "delete_batch" and "keys"), and its values do not expire, so does the
// wrapper, so that ledger.ExpireAllRecords sweeps through it (a store
// whose values expire needs no sweep; without Keys, ExpireRecords deletes
// key by key). A call whose inner store
// panics ends with an error (a write's wraps crdt.ErrAmbiguousWrite: it
// may have landed) as the panic goes on.
func Siblings(inner store.Siblings, o Observer) store.Siblings {
	s := &siblings{inner: inner, calls: calls{o, "store.siblings", SystemOf(inner)}}
	d, del := inner.(store.SiblingDeleter)
	e, exp := inner.(store.Expiring)
	b, batch := inner.(store.SiblingBatchDeleter)
	k, lists := inner.(keyLister)
	switch {
	case del && batch && lists && !exp:
		return &siblingsSweeper{&siblingsDeleter{s, d}, b, k}
	case del && exp:
		return &siblingsDeleterExpiring{&siblingsDeleter{s, d}, e}
	case del:
		return &siblingsDeleter{s, d}
	case exp:
		return &siblingsExpiring{s, e}
	}
	return s
}

// siblingsExpiring and siblingsDeleterExpiring forward inner's TTL.
type siblingsExpiring struct {
	*siblings
	store.Expiring
}

type siblingsDeleterExpiring struct {
	*siblingsDeleter
	store.Expiring
}

type siblingsDeleter struct {
	*siblings
	d store.SiblingDeleter
}

func (s *siblingsDeleter) Delete(ctx context.Context, key string, token store.Token) error {
	ctx, op := s.start(ctx, "delete")
	defer op.End(unreturned(true))
	err := s.d.Delete(ctx, key, token)
	op.End(Event{Err: err})
	return err
}

// keyLister is ledger.KeyLister (the ledger imports this package).
type keyLister interface {
	Keys(ctx context.Context, prefix, after string, limit int) ([]string, error)
}

// siblingsSweeper forwards a store's batch deletes and key listing.
type siblingsSweeper struct {
	*siblingsDeleter
	b store.SiblingBatchDeleter
	k keyLister
}

func (s *siblingsSweeper) DeleteBatch(ctx context.Context, keys []string, tokens []store.Token) error {
	ctx, op := s.start(ctx, "delete_batch")
	defer op.End(unreturned(true))
	err := s.b.DeleteBatch(ctx, keys, tokens)
	op.End(Event{Err: err, Rows: len(keys)})
	return err
}

func (s *siblingsSweeper) Keys(ctx context.Context, prefix, after string, limit int) ([]string, error) {
	ctx, op := s.start(ctx, "keys")
	defer op.End(unreturned(false))
	keys, err := s.k.Keys(ctx, prefix, after, limit)
	op.End(Event{Err: err, Rows: len(keys), Bytes: size(keys, func(k string) int { return len(k) })})
	return keys, err
}

type siblings struct {
	inner store.Siblings
	calls
}

func (s *siblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	ctx, op := s.start(ctx, "fetch")
	defer op.End(unreturned(false))
	vals, tok, err := s.inner.Fetch(ctx, key)
	op.End(Event{Err: err, Rows: len(vals), Bytes: size(vals, func(v []byte) int { return len(v) })})
	return vals, tok, err
}

func (s *siblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	ctx, op := s.start(ctx, "put")
	defer op.End(unreturned(true))
	err := s.inner.Put(ctx, key, actor, value, token)
	op.End(Event{Err: err, Rows: 1, Bytes: len(value)})
	return err
}

// Partitions wraps a store.Partitions so that every call is reported to o
// as an operation of Component "store.partitions", as Siblings does.
func Partitions(inner store.Partitions, o Observer) store.Partitions {
	return &partitions{inner: inner, calls: calls{o, "store.partitions", SystemOf(inner)}}
}

type partitions struct {
	inner store.Partitions
	calls
}

func (p *partitions) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	ctx, op := p.start(ctx, "scan")
	defer op.End(unreturned(false))
	rows, bytes := 0, 0
	err := p.inner.Scan(ctx, partition, from, level, func(r store.Row) bool {
		rows++
		bytes += rowSize(r)
		return fn(r)
	})
	op.End(Event{Err: err, Rows: rows, Bytes: bytes})
	return err
}

func (p *partitions) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	ctx, op := p.start(ctx, "snapshot")
	defer op.End(unreturned(false))
	rows, err := p.inner.Snapshot(ctx, partition, limit, level)
	op.End(Event{Err: err, Rows: len(rows), Bytes: size(rows, rowSize)})
	return rows, err
}

func (p *partitions) Apply(ctx context.Context, muts []store.Mutation) error {
	ctx, op := p.start(ctx, "apply")
	defer op.End(unreturned(true))
	err := p.inner.Apply(ctx, muts)
	op.End(Event{Err: err, Rows: len(muts), Bytes: size(muts, func(m store.Mutation) int { return len(m.Key) + len(m.End) + len(m.Value) })})
	return err
}

// The errors of a store call that did not return: the inner store
// panicked (or ended its goroutine). A write may have landed.
var (
	errUnreturnedRead  = errors.New("counterkit: the store call did not return")
	errUnreturnedWrite = fmt.Errorf("%w: the store call did not return", crdt.ErrAmbiguousWrite)
)

// unreturned is the event of a store call that did not return, ended by
// a deferred End, which does nothing once the call has ended normally.
func unreturned(write bool) Event {
	if write {
		return Event{Err: errUnreturnedWrite}
	}
	return Event{Err: errUnreturnedRead}
}

func rowSize(r store.Row) int { return len(r.Key) + len(r.Value) }

// size sums f over xs: the bytes a store call read or wrote.
func size[T any](xs []T, f func(T) int) (n int) {
	for _, x := range xs {
		n += f(x)
	}
	return n
}

// The backends of this module's adapters, by package path.
var systems = map[string]string{
	"github.com/counterkit/counterkit/adapters/cassandra": "cassandra",
	"github.com/counterkit/counterkit/adapters/riak":      "riak",
	"github.com/counterkit/counterkit/adapters/embedded":  "bbolt",
	"github.com/counterkit/counterkit/adapters/memory":    "memory",
}

// SystemOf names the backend of a store for Event.System: what its System()
// method returns, else the backend of this module's adapter it is, else "".
func SystemOf(st any) string {
	if s, ok := st.(interface{ System() string }); ok {
		return s.System()
	}
	t := reflect.TypeOf(st)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	return systems[t.PkgPath()]
}
