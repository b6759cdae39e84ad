package ledger

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// RowStore is a store.Siblings shaped as the Cassandra adapter's table
// (SPEC.md 10.1): one row per key and actor, each written at a write time.
// A Put writes its actor's row, superseding that actor's earlier row, and
// deletes, as of the write times the token names, the other actors' rows;
// a row or delete with an earlier write time than a row's loses to it
// (last write wins). Fetch returns the rows in actor order.
//
// A Put's write time is taken when the ledger makes the call (StampPuts),
// so that a Put held in flight and landing late keeps its original time,
// as a Cassandra write does; a Put reaching the store unstamped takes one
// as it lands, and so does every Put with Untimed (a broken double, whose
// late Puts replace newer rows). Times come from one clock for every
// RowStore: clocks in step. The zero value is ready to use.
type RowStore struct {
	Untimed bool
	mu      sync.Mutex
	keys    map[string]*actorRows
	// actorOf names the actor of each write time a token may name.
	actorOf map[uint64]crdt.ActorID
}

type actorRows struct {
	rows    map[crdt.ActorID]timedRow
	deleted map[crdt.ActorID]uint64 // the latest delete of each actor's row
}

type timedRow struct {
	at    uint64
	value []byte
}

var (
	writeClock    atomic.Uint64
	rowStoreToken = store.DotTokens('r')
)

type writeTimeKey struct{}

// StampPuts returns s whose Puts carry a write time taken now.
func StampPuts(s store.Siblings) store.Siblings { return stamped{s} }

type stamped struct{ store.Siblings }

func (s stamped) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	return s.Siblings.Put(context.WithValue(ctx, writeTimeKey{}, writeClock.Add(1)), key, actor, value, token)
}

func (s *RowStore) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if err := crdt.ValidateKey("key", key); err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keys[key]
	if k == nil || len(k.rows) == 0 {
		return nil, nil, nil
	}
	var vals [][]byte
	var times []uint64
	for _, a := range slices.Sorted(maps.Keys(k.rows)) {
		vals, times = append(vals, k.rows[a].value), append(times, k.rows[a].at)
	}
	return vals, rowStoreToken.Encode(times), nil
}

func (s *RowStore) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckPut(key, actor, value); err != nil {
		return err
	}
	named, err := rowStoreToken.Decode(token)
	if err != nil {
		return err
	}
	at, ok := ctx.Value(writeTimeKey{}).(uint64)
	if !ok || s.Untimed {
		at = writeClock.Add(1)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys, s.actorOf = map[string]*actorRows{}, map[uint64]crdt.ActorID{}
	}
	k := s.keys[key]
	if k == nil {
		k = &actorRows{rows: map[crdt.ActorID]timedRow{}, deleted: map[crdt.ActorID]uint64{}}
		s.keys[key] = k
	}
	for _, t := range named {
		a := s.actorOf[t]
		if a == actor {
			continue // the new row supersedes it
		}
		k.deleted[a] = max(k.deleted[a], t)
		if r, ok := k.rows[a]; ok && r.at <= t {
			delete(k.rows, a)
		}
	}
	if r, ok := k.rows[actor]; at <= k.deleted[actor] || ok && r.at >= at {
		return nil // an earlier write than what the row holds: lost
	}
	s.actorOf[at] = actor
	k.rows[actor] = timedRow{at, slices.Clone(value)}
	return nil
}

// Count returns the number of rows of key.
func (s *RowStore) Count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.keys[key]; k != nil {
		return len(k.rows)
	}
	return 0
}
