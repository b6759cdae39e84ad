package faulty

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// Siblings wraps a store.Siblings with injected faults. It is safe for
// concurrent use.
//
// *Siblings always has a Delete method; when the wrapped store is not a
// store.SiblingDeleter, Delete fails with crdt.ErrMisconfiguredStore. Hand
// Store() to code that probes for the capability.
type Siblings struct {
	inner  store.Siblings
	record bool
	core

	hmu  sync.Mutex
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
)

// NewSiblings wraps inner.
func NewSiblings(inner store.Siblings, o Options) *Siblings {
	s := &Siblings{inner: inner, record: o.RecordWrites, core: newCore(o)}
	s.hist.depth = s.core.hist
	return s
}

// Store returns s as a store.Siblings that is a store.SiblingDeleter exactly
// when the wrapped store is one.
func (s *Siblings) Store() store.Siblings {
	if _, ok := s.inner.(store.SiblingDeleter); ok {
		return s
	}
	return noDelete{s}
}

type noDelete struct{ s *Siblings }

func (n noDelete) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	return n.s.Fetch(ctx, key)
}

func (n noDelete) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	return n.s.Put(ctx, key, actor, value, token)
}

// SetPolicy replaces the policy (nil: pass every call).
func (s *Siblings) SetPolicy(p Policy) { s.setPolicy(p) }

// SetHook replaces the hook (nil: none).
func (s *Siblings) SetHook(h Hook) { s.setHook(h) }

// Held returns how many writes are held in flight.
func (s *Siblings) Held() int { return s.numHeld() }

// HeldCalls returns the calls of the held writes, oldest first.
func (s *Siblings) HeldCalls() []Call { return s.heldCalls() }

// Deliver applies the i-th held write (0: the oldest still held) to the
// wrapped store now, with its original token, and forgets it; the others
// keep their order. The after hook then runs with the original call. It
// returns the wrapped store's error, or one wrapping crdt.ErrNotFound if
// there is no such held write.
func (s *Siblings) Deliver(i int) error { return s.deliver(i) }

// DeliverAll delivers every held write, oldest first, and returns the
// errors of those that failed (they are forgotten too).
func (s *Siblings) DeliverAll() error { return s.deliverAll() }

// DropHeld forgets every held write, which then never takes effect, and
// returns how many there were.
func (s *Siblings) DropHeld() int { return s.dropHeld() }

// Counts returns how many calls received each fault so far (a copy).
func (s *Siblings) Counts() map[Fault]int { return s.countsCopy() }

// remember records a fresh Fetch result.
func (s *Siblings) remember(key string, st sibState) {
	s.hmu.Lock()
	s.hist.add(key, st.clone(), sibState.equal, nil)
	s.hmu.Unlock()
}

// readBack records the state of key after a write.
func (s *Siblings) readBack(key string) func(ctx context.Context) {
	if !s.record {
		return nil
	}
	return func(ctx context.Context) {
		if vs, tok, err := s.inner.Fetch(ctx, key); err == nil {
			s.remember(key, sibState{vs, tok})
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
	fresh := sibState{vs, tok}
	s.hmu.Lock()
	s.hist.add(key, fresh.clone(), sibState.equal, nil)
	served := Pass
	if f.Kind() == Stale {
		if old, ok := s.hist.older(key, f.Age(), nil); ok {
			old = old.clone()
			vs, tok, served = old.values, old.token, Stale
		}
	}
	s.hmu.Unlock()
	s.count(served)
	if err := s.after(ctx, call); err != nil {
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
