package statestore

import (
	"context"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// Counter is the constraint the helpers need: a state-based counter with a
// binary encoding whose zero value is an empty counter. *gcounter.Counter
// and *pncounter.Counter satisfy it.
type Counter[T any] interface {
	crdt.State[T]
	crdt.Codec
}

// Load reads every sibling stored under key, decodes each as a V and
// returns their merge. An absent key gives an empty counter and no error.
//
//	c, err := statestore.Load[gcounter.Counter](ctx, siblings, "page-views")
//
// Errors from the store are returned wrapped; an invalid key wraps
// crdt.ErrInvalidKey; a sibling that does not decode gives an error
// wrapping the decoder's sentinel (crdt.ErrCorruptEncoding,
// ErrTypeMismatch, ...), and a merge that overflows one wrapping
// crdt.ErrOverflow. Nothing is written.
func Load[V any, T interface {
	*V
	Counter[T]
}](ctx context.Context, s store.Siblings, key string) (T, error) {
	c, _, err := load[V, T](ctx, s, key)
	return c, err
}

// load is Load that also returns the token of the read.
func load[V any, T interface {
	*V
	Counter[T]
}](ctx context.Context, s store.Siblings, key string) (T, store.Token, error) {
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

// Save encodes c and stores it under key as actor, superseding nothing: it
// adds c beside whatever the key holds, and the next Load merges them.
// Saving a state twice is harmless, which makes Save the safe retry after
// an ambiguous write.
func Save[T Counter[T]](ctx context.Context, s store.Siblings, key string, actor crdt.ActorID, c T) error {
	return save(ctx, s, key, actor, c, nil)
}

func save[T Counter[T]](ctx context.Context, s store.Siblings, key string, actor crdt.ActorID, c T, token store.Token) error {
	if err := crdt.ValidateKey("counter key", key); err != nil {
		return fmt.Errorf("statestore: save: %w", err)
	}
	if err := actor.Validate(); err != nil {
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

// Update loads the counter under key, applies fn to it and stores the
// result as actor, superseding exactly the siblings it loaded: one read and
// one write. fn should update the counter as actor (for example
// c.Increment(actor, 1)); if it returns an error nothing is written and
// Update returns that error. Writers that did not see each other leave
// siblings, which the next Load merges and the next Update collapses.
//
// Update returns the state it tried to store. When the error wraps
// crdt.ErrAmbiguousWrite the update may have landed: re-send the returned
// state with Save rather than calling Update again.
func Update[V any, T interface {
	*V
	Counter[T]
}](ctx context.Context, s store.Siblings, key string, actor crdt.ActorID, fn func(T) error) (T, error) {
	if err := actor.Validate(); err != nil {
		return nil, fmt.Errorf("statestore: update %q: %w", key, err)
	}
	c, token, err := load[V, T](ctx, s, key)
	if err != nil {
		return nil, err
	}
	if err := fn(c); err != nil {
		return nil, fmt.Errorf("statestore: update %q as %q: %w", key, actor, err)
	}
	if err := save(ctx, s, key, actor, c, token); err != nil {
		return c, err
	}
	return c, nil
}
