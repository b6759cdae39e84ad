package faulty

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// Siblings wraps a store.Siblings with injected faults. It is safe for
// concurrent use.
//
// *Siblings always has a Delete method; when the wrapped store is not a
// store.SiblingDeleter, Delete fails with crdt.ErrMisconfiguredStore. Hand
// Store() to code that probes for a capability: Delete, or the key listing
// a ledger probes its records store for (ledger.KeyLister), which
// *Siblings does not offer. TTL is the wrapped
// store's (store.Expiring; zero when it keeps values for good), so that a
// ledger still refuses an expiring store for its accounts through it.
type Siblings struct {
	inner  store.Siblings
	record bool
	core
	hist history[sibState]
}

type sibState struct {
	values [][]byte
	token  store.Token
}

func (a sibState) equal(b sibState) bool {
	return bytes.Equal(a.token, b.token) && slices.EqualFunc(a.values, b.values, bytes.Equal)
}

func (a sibState) clone() sibState {
	vs := make([][]byte, len(a.values))
	for i, v := range a.values {
		vs[i] = slices.Clone(v)
	}
	return sibState{values: vs, token: slices.Clone(a.token)}
}

var (
	_ store.Siblings       = (*Siblings)(nil)
	_ store.SiblingDeleter = (*Siblings)(nil)
	_ store.Expiring       = (*Siblings)(nil)
)

// NewSiblings wraps inner.
func NewSiblings(inner store.Siblings, o Options) *Siblings {
	return &Siblings{inner: inner, record: o.RecordWrites, core: newCore(o), hist: newHistory(o, sibState.equal, nil)}
}

// Store returns s as a store.Siblings that is a store.SiblingDeleter exactly
// when the wrapped store is one, keeps its TTL (store.Expiring), and lists
// keys (a Keys method, as ledger.KeyLister) exactly when the wrapped store
// does: a ledger behind it then names its key in its records, and a sweep
// finds the writers they date, as behind the wrapped store itself. Keys
// goes to the wrapped store directly, with no fault and no Hook.
func (s *Siblings) Store() store.Siblings {
	_, deletes := s.inner.(store.SiblingDeleter)
	lister, lists := s.inner.(keyLister)
	switch {
	case deletes && lists:
		return struct {
			*Siblings
			keyLister
		}{s, lister}
	case deletes:
		return s
	case lists:
		return struct {
			store.Siblings
			store.Expiring
			keyLister
		}{s, s, lister} // the embedded interfaces hide Delete
	}
	return struct {
		store.Siblings
		store.Expiring
	}{s, s} // the embedded interfaces hide Delete
}

// keyLister is a store that lists its keys (ledger.KeyLister, which
// imports this package's store).
type keyLister interface {
	Keys(ctx context.Context, prefix, after string, limit int) ([]string, error)
}

// TTL returns the wrapped store's TTL (store.TTL): how long it keeps a
// value after its Put, zero for good.
func (s *Siblings) TTL() time.Duration { return store.TTL(s.inner) }

// readBack records the state of key after a write.
func (s *Siblings) readBack(key string) func(ctx context.Context) {
	if !s.record {
		return nil
	}
	return func(ctx context.Context) {
		if vs, tok, err := s.inner.Fetch(ctx, key); err == nil {
			s.hist.add(key, sibState{vs, tok}.clone())
		}
	}
}

// Fetch is the wrapped store's Fetch, with faults.
func (s *Siblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	call, f, err := s.beforeRead(ctx, Call{Method: MethodFetch, Key: key})
	if err != nil {
		return nil, nil, err
	}
	vs, tok, err := s.inner.Fetch(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	fresh := sibState{vs, tok}.clone()
	served := Pass
	if old, ok := s.hist.older(key, &fresh, f.Age(), nil); ok {
		old = old.clone()
		vs, tok, served = old.values, old.token, Stale
	}
	s.count(served)
	if err := s.runHook(ctx, call, true); err != nil {
		return nil, nil, err
	}
	return vs, tok, nil
}

// Put is the wrapped store's Put, with faults.
func (s *Siblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	call, f, err := s.before(ctx, Call{Method: MethodPut, Key: key})
	if err != nil {
		return err
	}
	if f.Kind() == Hold {
		value, token = slices.Clone(value), slices.Clone(token)
	}
	return s.write(ctx, call, f, func(ctx context.Context) error {
		return s.inner.Put(ctx, key, actor, value, token)
	}, s.readBack(key))
}

// Delete is the wrapped store's Delete, with faults. It fails with
// crdt.ErrMisconfiguredStore if the wrapped store cannot delete.
func (s *Siblings) Delete(ctx context.Context, key string, token store.Token) error {
	d, ok := s.inner.(store.SiblingDeleter)
	if !ok {
		return fmt.Errorf("faulty: %T has no Delete: %w", s.inner, crdt.ErrMisconfiguredStore)
	}
	call, f, err := s.before(ctx, Call{Method: MethodDelete, Key: key})
	if err != nil {
		return err
	}
	if f.Kind() == Hold {
		token = slices.Clone(token)
	}
	return s.write(ctx, call, f, func(ctx context.Context) error {
		return d.Delete(ctx, key, token)
	}, s.readBack(key))
}
