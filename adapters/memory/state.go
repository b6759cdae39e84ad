package memory

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/statestore"
)

// States is an in-memory statestore.Store that merges on write: each key
// holds one encoded state, the join of everything saved under it, so Load
// returns at most one encoding.
//
// The zero value is an empty store ready to use. A States is safe for
// concurrent use; it must not be copied after first use.
type States struct {
	mu   sync.Mutex
	data map[string][]byte
}

var _ statestore.Store = (*States)(nil)

// NewStates returns an empty store. It is equivalent to new(States).
func NewStates() *States { return new(States) }

// Load returns the merged encoding stored under key, or none when the key
// is absent. The slice is a copy the caller may keep.
func (s *States) Load(ctx context.Context, key string) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memory: load %q: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.data[key]
	if !ok {
		return nil, nil
	}
	return [][]byte{bytes.Clone(b)}, nil
}

// Save merges state into what key holds (statestore.MergeEncoded). The
// state must pass statestore.Check and be of the same type as the stored
// one (crdt.ErrTypeMismatch otherwise); the merge must fit
// (crdt.ErrOverflow, crdt.ErrTooLarge). On any error nothing changes.
// Merging is a join, so saving the same state twice, or an older state
// after a newer one, changes nothing.
func (s *States) Save(ctx context.Context, key string, actor crdt.ActorID, state []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memory: save %q: %w", key, err)
	}
	if err := actor.Validate(); err != nil {
		return fmt.Errorf("memory: save %q: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	merged, err := statestore.MergeEncoded(s.data[key], state)
	if err != nil {
		return fmt.Errorf("memory: save %q as %q: %w", key, actor, err)
	}
	if s.data == nil {
		s.data = make(map[string][]byte)
	}
	s.data[key] = merged
	return nil
}
