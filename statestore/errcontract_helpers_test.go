package statestore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// errKind is one error a store may answer a write with. The store
// contract (package store, "Errors") says every error other than
// crdt.ErrUnavailable is to be taken as ambiguous: the write may have
// landed.
type errKind struct {
	name string
	err  error
}

var errKinds = []errKind{
	{"too-large", fmt.Errorf("injected batch too large: %w", crdt.ErrTooLarge)},
	{"misconfigured", fmt.Errorf("injected server config refusal: %w", crdt.ErrMisconfiguredStore)},
	{"corrupt", fmt.Errorf("injected bad token answer: %w", crdt.ErrCorruptEncoding)},
	{"invalid-key", fmt.Errorf("injected key refusal: %w", crdt.ErrInvalidKey)},
	{"deadline", context.DeadlineExceeded},
	{"canceled", context.Canceled},
	{"boom", errors.New("boom")},
	{"ambiguous", fmt.Errorf("injected: %w", crdt.ErrAmbiguousWrite)},
}

// injection is what the nth write call does: apply it or not, then
// answer err.
type injection struct {
	apply bool
	err   error
}

// errSiblings wraps a store.Siblings: write calls (Put, Delete) are
// numbered from 1, and the ones in plan are applied or not and answered
// with the plan's error.
type errSiblings struct {
	inner store.Siblings
	mu    sync.Mutex
	n     int
	plan  map[int]injection
	log   []string
}

func newErrSiblings(inner store.Siblings) *errSiblings {
	return &errSiblings{inner: inner, plan: map[int]injection{}}
}

func (s *errSiblings) setPlan(p map[int]injection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plan = p
}

func (s *errSiblings) writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *errSiblings) next(what string) (int, injection, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	in, ok := s.plan[s.n]
	s.log = append(s.log, fmt.Sprintf("#%d %s", s.n, what))
	if ok {
		s.log[len(s.log)-1] += fmt.Sprintf(" [apply=%v err=%v]", in.apply, in.err)
	}
	return s.n, in, ok
}

func (s *errSiblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	return s.inner.Fetch(ctx, key)
}

func (s *errSiblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	_, in, ok := s.next(fmt.Sprintf("put %q as %q", key, actor))
	if !ok {
		return s.inner.Put(ctx, key, actor, value, token)
	}
	if in.apply {
		if err := s.inner.Put(ctx, key, actor, value, token); err != nil {
			return err
		}
	}
	return in.err
}

func (s *errSiblings) Delete(ctx context.Context, key string, token store.Token) error {
	d, ok := s.inner.(store.SiblingDeleter)
	if !ok {
		return errors.New("no delete")
	}
	_, in, planned := s.next(fmt.Sprintf("delete %q", key))
	if !planned {
		return d.Delete(ctx, key, token)
	}
	if in.apply {
		if err := d.Delete(ctx, key, token); err != nil {
			return err
		}
	}
	return in.err
}
