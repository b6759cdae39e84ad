package riak

import (
	"context"
	"fmt"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/statestore"
)

// MergeFunc decodes each encoded state, joins them with the CRDT Merge and
// returns the encoding of the join. It must not modify its input. An error
// (corrupt bytes, overflow, a size limit) must wrap a crdt sentinel; Save
// then writes nothing. A StateStore calls it from every goroutine that
// saves, so it must be safe for concurrent use.
type MergeFunc func(states [][]byte) ([]byte, error)

// MergeCounters is the MergeFunc for the counters package statestore
// supports (gcounter and pncounter): it folds the states with
// statestore.MergeEncoded, so every state is checked, and states of
// different types give an error wrapping crdt.ErrTypeMismatch.
func MergeCounters(states [][]byte) ([]byte, error) {
	var acc []byte
	for _, st := range states {
		var err error
		if acc, err = statestore.MergeEncoded(acc, st); err != nil {
			return nil, err
		}
	}
	if acc == nil {
		return nil, fmt.Errorf("%w: no state to merge", crdt.ErrCorruptEncoding)
	}
	return acc, nil
}

// StateStore keeps state-based counters (GCounter, PNCounter and the like)
// in a Riak bucket with merge on write: Save fetches the siblings and the
// vclock, joins them with the new state using the MergeFunc given at
// construction, and stores the join with the vclock, so the siblings it read
// collapse (in the default bucket type, only if nothing was written in
// between; see Store.Put). Load returns the siblings for the caller to
// merge.
//
// A StateStore is safe for concurrent use.
type StateStore struct {
	store *Store
	merge MergeFunc
}

var _ statestore.Store = (*StateStore)(nil)

// NewStateStore returns a StateStore on a started cluster; opts and the
// bucket check are as for New. merge joins encoded states; use
// MergeCounters for gcounter and pncounter.
func NewStateStore(ctx context.Context, cl *riakc.Cluster, opts Options, merge MergeFunc) (*StateStore, error) {
	if merge == nil {
		return nil, fmt.Errorf("%w: nil MergeFunc", crdt.ErrInvalidConfig)
	}
	s, err := New(ctx, cl, opts)
	if err != nil {
		return nil, err
	}
	return &StateStore{store: s, merge: merge}, nil
}

// Load returns the encoded states of all live siblings of key; none if the
// key does not exist. Errors are as for Store.Fetch.
func (s *StateStore) Load(ctx context.Context, key string) ([][]byte, error) {
	sibs, _, err := s.store.Fetch(ctx, key)
	return sibs, err
}

// Save merges state into key: one fetch, one merge, one store with the
// fetched vclock. A concurrent Save that raced with this one leaves a
// sibling, which the next Save folds in. state is checked (by the MergeFunc)
// before anything is sent, so a bad state is refused with the MergeFunc's
// error and the key is left as it was. Other errors are as for Store.Fetch
// and Store.Put; an error wrapping crdt.ErrAmbiguousWrite means the state
// may or may not be stored, and saving it again is safe. An invalid key
// (crdt.ErrInvalidKey) or actor is refused first.
func (s *StateStore) Save(ctx context.Context, key string, actor crdt.ActorID, state []byte) error {
	if err := crdt.ValidateKey("key", key); err != nil {
		return err
	}
	if err := actor.Validate(); err != nil {
		return err
	}
	checked, err := s.merge([][]byte{state})
	if err != nil {
		return err
	}
	sibs, tok, err := s.store.Fetch(ctx, key)
	if err != nil {
		return err
	}
	all := make([][]byte, 0, len(sibs)+1)
	all = append(all, sibs...)
	all = append(all, checked)
	merged, err := s.merge(all)
	if err != nil {
		return err
	}
	return s.store.Put(ctx, key, actor, merged, tok)
}
