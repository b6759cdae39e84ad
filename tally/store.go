package tally

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// The row layout of a counter in a store.Partitions (see Storage in the
// package documentation): a shard row per mutator, keyed 's' + mutator id,
// and at most one tally row, keyed 't'. The keys cannot collide: a shard key
// is at least two bytes and starts with 's', the tally key is one byte. In
// key order every shard row comes before the tally row. Any other key in a
// counter's partition is corruption, and reads refuse it.
const shardPrefix = 's'

// TallyRowKey is the row key of a counter's tally row: the byte 't'.
const TallyRowKey = "t"

// DefaultMaxRows is the default Options.MaxRows.
const DefaultMaxRows = 1 << 20

// ShardRowKey returns the row key of mutator id's shard row: the byte 's'
// followed by the id.
func ShardRowKey(id crdt.ActorID) []byte {
	return append(append(make([]byte, 0, 1+len(id)), shardPrefix), id...)
}

// GCBatch is one GC write: the new tally and the shards it folded, written
// at WriteTS in one atomic batch of the counter's partition (Mutations).
type GCBatch struct {
	// WriteTS (µs) is the largest expires_at folded into Tally, above every
	// write timestamp of every deleted shard.
	WriteTS int64
	Tally   []byte         // the encoded Tally
	Delete  []crdt.ActorID // the mutators whose rows are deleted, sorted
}

// Mutations returns the batch for the counter key: a put of the tally row,
// then a delete of each folded shard row, all at WriteTS. Applying them
// again, or after a newer GC's, changes nothing.
func (b GCBatch) Mutations(key string) []store.Mutation {
	muts := make([]store.Mutation, 0, 1+len(b.Delete))
	muts = append(muts, store.Mutation{Partition: key, Op: store.OpPut, Key: []byte(TallyRowKey), Value: b.Tally, Timestamp: b.WriteTS})
	for _, id := range b.Delete {
		muts = append(muts, store.Mutation{Partition: key, Op: store.OpDelete, Key: ShardRowKey(id), Timestamp: b.WriteTS})
	}
	return muts
}

// parseRow names a row of a counter's partition: a shard row (its mutator
// id) or the tally row. Any other key is an error wrapping
// crdt.ErrCorruptEncoding.
func parseRow(k []byte) (id crdt.ActorID, isTally bool, err error) {
	switch {
	case string(k) == TallyRowKey:
		return "", true, nil
	case len(k) > 1 && k[0] == shardPrefix:
		id = crdt.ActorID(k[1:])
		if err := id.Validate(); err != nil {
			return "", false, fmt.Errorf("%w: shard row %q: %w", crdt.ErrCorruptEncoding, k, err)
		}
		return id, false, nil
	}
	return "", false, fmt.Errorf("%w: row key %q is neither a shard row nor the tally row", crdt.ErrCorruptEncoding, k)
}
