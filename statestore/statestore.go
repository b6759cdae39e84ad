package statestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
)

// Store persists encoded states. An adapter may keep one row per actor
// (Cassandra), siblings (Riak) or a single merged value (memory).
//
// Implementations must be safe for concurrent use, honour ctx (an error
// for a cancelled context wraps ctx.Err()), and reject bad input before
// storing anything: Save returns the error Check returns for state (or one
// wrapping crdt.ErrInvalidActor for an invalid actor) and leaves the key as
// it was. storetest.Run checks all of this.
type Store interface {
	// Load returns every encoding stored under key; none if the key is
	// absent.
	Load(ctx context.Context, key string) ([][]byte, error)
	// Save records actor's encoded state under key. Saving never loses
	// information already stored (merge-on-write or per-actor rows).
	Save(ctx context.Context, key string, actor crdt.ActorID, state []byte) error
}

// Counter is the constraint the helpers need: a state-based counter with a
// binary encoding whose zero value is an empty counter. *gcounter.Counter
// and *pncounter.Counter satisfy it.
type Counter[T any] interface {
	crdt.State[T]
	crdt.Codec
}

// Load reads every encoding stored under key, decodes each as a V and
// returns their merge. An absent key gives an empty counter and no error.
//
//	c, err := statestore.Load[gcounter.Counter](ctx, store, "page-views")
//
// Errors from the store are returned wrapped; an encoding that does not
// decode gives an error wrapping the decoder's sentinel
// (crdt.ErrCorruptEncoding, ErrTypeMismatch, ...), and a merge that
// overflows one wrapping crdt.ErrOverflow.
func Load[V any, T interface {
	*V
	Counter[T]
}](ctx context.Context, s Store, key string) (T, error) {
	encs, err := s.Load(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("statestore: load %q: %w", key, err)
	}
	acc := T(new(V))
	for i, b := range encs {
		part := T(new(V))
		if err := part.UnmarshalBinary(b); err != nil {
			return nil, fmt.Errorf("statestore: load %q: encoding %d of %d: %w", key, i+1, len(encs), err)
		}
		if err := acc.Merge(part); err != nil {
			return nil, fmt.Errorf("statestore: load %q: merging encoding %d of %d: %w", key, i+1, len(encs), err)
		}
	}
	return acc, nil
}

// Save encodes c and saves it under key as actor. Saving a state twice is
// harmless, which makes Save the safe retry after an ambiguous write.
func Save[T Counter[T]](ctx context.Context, s Store, key string, actor crdt.ActorID, c T) error {
	if err := actor.Validate(); err != nil {
		return fmt.Errorf("statestore: save %q: %w", key, err)
	}
	b, err := c.MarshalBinary()
	if err != nil {
		return fmt.Errorf("statestore: save %q: %w", key, err)
	}
	if err := s.Save(ctx, key, actor, b); err != nil {
		return fmt.Errorf("statestore: save %q as %q: %w", key, actor, err)
	}
	return nil
}

// Update loads the counter under key, applies fn to it and saves the result
// as actor: one load and one save. fn should update the counter as actor
// (for example c.Increment(actor, 1)); if it returns an error nothing is
// saved and Update returns that error.
//
// Update returns the state it tried to save. When the error wraps
// crdt.ErrAmbiguousWrite the update may have landed: re-send the returned
// state with Save rather than calling Update again.
func Update[V any, T interface {
	*V
	Counter[T]
}](ctx context.Context, s Store, key string, actor crdt.ActorID, fn func(T) error) (T, error) {
	if err := actor.Validate(); err != nil {
		return nil, fmt.Errorf("statestore: update %q: %w", key, err)
	}
	c, err := Load[V, T](ctx, s, key)
	if err != nil {
		return nil, err
	}
	if err := fn(c); err != nil {
		return nil, fmt.Errorf("statestore: update %q as %q: %w", key, actor, err)
	}
	if err := Save(ctx, s, key, actor, c); err != nil {
		return c, err
	}
	return c, nil
}

// Check reports whether state is an encoding a Store may accept: a complete,
// canonical gcounter or pncounter encoding within the decoders' bounds. The
// error wraps crdt.ErrCorruptEncoding, ErrTypeMismatch,
// ErrUnsupportedVersion or ErrTooLarge. Stores call it in Save so that a bad
// write is refused instead of poisoning the key for every later Load.
func Check(state []byte) error {
	_, err := decodeAny(state)
	return err
}

// decoded is a state of one of the supported types; exactly one field is
// set.
type decoded struct {
	g *gcounter.Counter
	p *pncounter.Counter
}

// decodeAny decodes state as whichever supported type its envelope names.
func decodeAny(state []byte) (decoded, error) {
	g := gcounter.New()
	err := g.UnmarshalBinary(state)
	if err == nil {
		return decoded{g: g}, nil
	}
	if !errors.Is(err, crdt.ErrTypeMismatch) {
		return decoded{}, fmt.Errorf("statestore: %w", err)
	}
	p := pncounter.New()
	if err := p.UnmarshalBinary(state); err != nil {
		if errors.Is(err, crdt.ErrTypeMismatch) {
			return decoded{}, fmt.Errorf("statestore: state is neither %s nor %s: %w", crdt.TagGCounter, crdt.TagPNCounter, err)
		}
		return decoded{}, fmt.Errorf("statestore: %w", err)
	}
	return decoded{p: p}, nil
}

// MergeEncoded returns the encoding of the join of two encodings of the
// same counter type, for stores that merge on write. An empty stored stands
// for "nothing stored yet": the result is state, checked and re-encoded.
// The result never shares memory with either argument. Errors
// wrap the decoder's sentinel, crdt.ErrTypeMismatch when the types differ,
// or crdt.ErrOverflow / ErrTooLarge when the join cannot be represented.
func MergeEncoded(stored, state []byte) ([]byte, error) {
	b, err := decodeAny(state)
	if err != nil {
		return nil, err
	}
	if len(stored) == 0 {
		return b.encode()
	}
	a, err := decodeAny(stored)
	if err != nil {
		return nil, fmt.Errorf("statestore: stored state: %w", err)
	}
	switch {
	case a.g != nil && b.g != nil:
		err = a.g.Merge(b.g)
	case a.p != nil && b.p != nil:
		err = a.p.Merge(b.p)
	default:
		return nil, fmt.Errorf("statestore: cannot merge %s into %s: %w", tagOf(b), tagOf(a), crdt.ErrTypeMismatch)
	}
	if err != nil {
		return nil, fmt.Errorf("statestore: merge: %w", err)
	}
	return a.encode()
}

// encode returns the canonical encoding, in a fresh buffer.
func (d decoded) encode() ([]byte, error) {
	if d.g != nil {
		return d.g.MarshalBinary()
	}
	return d.p.MarshalBinary()
}

func tagOf(d decoded) crdt.TypeTag {
	if d.g != nil {
		return crdt.TagGCounter
	}
	return crdt.TagPNCounter
}
