package statestore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

type rowAt struct {
	at    uint64
	value []byte
}

// writeAtKey is the context key of a Put's write time (rowSiblings.stamp).
type writeAtKey struct{}

// rowSiblings keeps one row per key and actor, as the Cassandra adapter
// does: a Put writes its actor's row and deletes, as of the write times its
// token names, the other actors' rows; a later write time wins. A Put
// whose context carries no write time (stamp) takes one as it lands.
type rowSiblings struct {
	mu      sync.Mutex
	clock   uint64
	rows    map[string]map[crdt.ActorID]rowAt
	deleted map[string]map[crdt.ActorID]uint64
}

func newRowSiblings() *rowSiblings {
	return &rowSiblings{rows: map[string]map[crdt.ActorID]rowAt{}, deleted: map[string]map[crdt.ActorID]uint64{}}
}

// stamp returns ctx with the next write time, for a Put made now.
func (s *rowSiblings) stamp(ctx context.Context) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock++
	return context.WithValue(ctx, writeAtKey{}, s.clock)
}

func (s *rowSiblings) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := s.rows[key]
	if len(rows) == 0 {
		return nil, nil, nil
	}
	var vals [][]byte
	tok := map[crdt.ActorID]uint64{}
	for _, a := range slices.Sorted(maps.Keys(rows)) {
		vals = append(vals, rows[a].value)
		tok[a] = rows[a].at
	}
	b, _ := json.Marshal(tok)
	return vals, b, nil
}

func (s *rowSiblings) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := ctx.Value(writeAtKey{}).(uint64)
	if !ok {
		s.clock++
		at = s.clock
	}
	if s.rows[key] == nil {
		s.rows[key] = map[crdt.ActorID]rowAt{}
		s.deleted[key] = map[crdt.ActorID]uint64{}
	}
	rows, del := s.rows[key], s.deleted[key]
	if token != nil {
		var tok map[crdt.ActorID]uint64
		if err := json.Unmarshal(token, &tok); err != nil {
			return fmt.Errorf("token: %w", crdt.ErrCorruptEncoding)
		}
		for a, t := range tok {
			if a == actor {
				continue
			}
			del[a] = max(del[a], t)
			if r, ok := rows[a]; ok && r.at <= t {
				delete(rows, a)
			}
		}
	}
	if r, ok := rows[actor]; (ok && r.at >= at) || del[actor] >= at {
		return nil
	}
	rows[actor] = rowAt{at, slices.Clone(value)}
	return nil
}
