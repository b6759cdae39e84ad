package statestore

import (
	"context"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/store"
)

// Counter is a state-based counter with a binary encoding whose zero value
// is empty, such as *gcounter.Counter and *pncounter.Counter.
type Counter[T any] interface {
	crdt.State[T]
	crdt.Codec
}

// counterPtr is the constraint of Load and Update: T is *V and a Counter.
type counterPtr[V, T any] interface {
	*V
	Counter[T]
}

// Load reads every sibling stored under key, decodes each as a V and
// returns their merge (empty for an absent key), writing nothing:
//
//	c, err := statestore.Load[gcounter.Counter](ctx, siblings, "page-views")
//
// Errors wrap the store's, crdt.ErrInvalidKey, the decoder's sentinel or a
// merge's (crdt.ErrTooLarge); siblings whose sum passes int64 merge (SPEC.md
// 4.1). Save and Update refuse a store whose values expire
// (store.Expiring) with crdt.ErrInvalidConfig, writing nothing.
func Load[V any, T counterPtr[V, T]](ctx context.Context, s store.Siblings, key string) (T, error) {
	c, _, err := load[V, T](ctx, s, key)
	return c, err
}

func load[V any, T counterPtr[V, T]](ctx context.Context, s store.Siblings, key string) (T, store.Token, error) {
	if storekit.Nil(s) {
		return nil, nil, errNilStore
	}
	if err := crdt.ValidateKey("counter key", key); err != nil {
		return nil, nil, fmt.Errorf("statestore: load: %w", err)
	}
	encs, token, err := s.Fetch(ctx, key)
	if err != nil {
		return nil, nil, fmt.Errorf("statestore: load %q: %w", key, err)
	}
	acc := T(new(V))
	for i, b := range encs {
		part := T(new(V))
		if err := part.UnmarshalBinary(b); err != nil {
			return nil, nil, fmt.Errorf("statestore: load %q: sibling %d of %d: %w", key, i+1, len(encs), err)
		}
		if err := acc.Merge(part); err != nil {
			return nil, nil, fmt.Errorf("statestore: load %q: merging sibling %d of %d: %w", key, i+1, len(encs), err)
		}
	}
	return acc, token, nil
}

// errNilStore refuses a nil store (or one holding a nil pointer).
var errNilStore = fmt.Errorf("statestore: %w: nil store", crdt.ErrInvalidConfig)

// Save stores c under key as actor beside whatever the key holds,
// superseding none of it, except on a store that keeps one value per actor
// (store.Siblings; the Cassandra adapter), where c replaces what actor
// stored before and so must hold it. Saving a state twice is harmless,
// which makes Save the safe retry after an ambiguous write, before the
// actor's next Update: there, a state sent after a newer one was stored as
// actor replaces it (TestLimitSaveOfAnOlderStateOnAPerActorStore).
func Save[T Counter[T]](ctx context.Context, s store.Siblings, key string, actor crdt.ActorID, c T) error {
	return save(ctx, s, key, actor, c, nil) // no token: supersedes nothing
}

func save[T Counter[T]](ctx context.Context, s store.Siblings, key string, actor crdt.ActorID, c T, token store.Token) error {
	if storekit.Nil(s) {
		return errNilStore
	}
	if err := crdt.ValidateKey("counter key", key); err != nil {
		return fmt.Errorf("statestore: save: %w", err)
	}
	if err := actor.Validate(); err != nil {
		return fmt.Errorf("statestore: save %q: %w", key, err)
	}
	if err := store.CheckKeeps(s, "counter states"); err != nil {
		return fmt.Errorf("statestore: save %q: %w", key, err)
	}
	b, err := c.MarshalBinary()
	if err != nil {
		return fmt.Errorf("statestore: save %q: %w", key, err)
	}
	if err := s.Put(ctx, key, actor, b, token); err != nil {
		return fmt.Errorf("statestore: save %q as %q: %w", key, actor, err)
	}
	return nil
}

// Update loads the counter under key, applies fn to it as actor (for
// example c.Increment(actor, 1)) and stores the result, superseding exactly
// the siblings it loaded; if fn fails nothing is written. It returns the
// state it tried to store: after an error from the write that does not
// wrap crdt.ErrUnavailable (it may have landed), re-send that with Save
// rather than calling Update again.
func Update[V any, T counterPtr[V, T]](ctx context.Context, s store.Siblings, key string, actor crdt.ActorID, fn func(T) error) (T, error) {
	if storekit.Nil(s) {
		return nil, errNilStore
	}
	if err := actor.Validate(); err != nil {
		return nil, fmt.Errorf("statestore: update %q: %w", key, err)
	}
	if err := store.CheckKeeps(s, "counter states"); err != nil {
		return nil, fmt.Errorf("statestore: update %q: %w", key, err)
	}
	c, token, err := load[V, T](ctx, s, key)
	if err != nil {
		return nil, err
	}
	if err := fn(c); err != nil {
		return nil, fmt.Errorf("statestore: update %q as %q: %w", key, actor, err)
	}
	return c, save(ctx, s, key, actor, c, token)
}
