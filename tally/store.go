package tally

import (
	"context"

	"github.com/counterkit/counterkit/crdt"
)

// Store is the storage a tally counter needs, shaped after Apache
// Cassandra's data model. Implementations must be safe for concurrent use.
//
// # Data model
//
// A counter key is one partition holding one row per shard (clustering key:
// the mutator id; value: the encoded shard) and one tally cell. The store
// treats every []byte as opaque and never interprets it.
//
// # Last write wins, by explicit timestamp
//
// Every write and every delete carries an explicit write timestamp in
// microseconds (CQL: USING TIMESTAMP writeTS), chosen by the caller, never by
// the server or the arrival order. For each cell (a shard row, or the tally):
//
//   - the value with the greater timestamp wins;
//   - a delete (tombstone) with timestamp ≥ a value's timestamp shadows it,
//     so a late write with a smaller timestamp than a delete stays invisible
//     forever, while a write with a greater timestamp is visible again;
//   - two values with equal timestamps: the greater value, compared as
//     unsigned bytes, wins (Cassandra's tie-break).
//
// So applying any set of writes and deletes, in any order, any number of
// times, yields the same state.
//
// # Errors
//
// A write that certainly did not take effect returns an error wrapping
// crdt.ErrUnavailable (for example: not enough replicas, refused before
// sending). A write whose outcome is unknown (a timeout after sending)
// returns an error wrapping crdt.ErrAmbiguousWrite. Callers treat every
// other error from a write as ambiguous. Adapters wrap driver errors so that
// errors.As still reaches the driver's type, and a done context's error so
// that errors.Is(err, context.Canceled) holds.
//
// # Input
//
// Write timestamps are positive, shard and tally bytes non-empty, and at
// most MaxEncodedSize long. A call with an invalid mutator id returns an
// error wrapping crdt.ErrInvalidActor and writes nothing.
type Store interface {
	// PutShard writes s.Data as the row of mutator s.Mutator under key,
	// with write timestamp writeTS (µs). It never reads; the mutator that
	// owns a row is its only writer.
	PutShard(ctx context.Context, key string, s EncodedShard, writeTS int64) error

	// Read returns the live shard rows of key (in any order) and the tally
	// cell, nil when it has none. With complete set, the result must
	// reflect every write acknowledged before the call and every ApplyGC
	// batch either entirely or not at all (Cassandra: consistency ALL on
	// the single partition). Without it the result may be stale: each cell
	// may show any value it held before (Cassandra: ONE or QUORUM); the
	// package's readers tolerate that without double counting.
	Read(ctx context.Context, key string, complete bool) (shards []EncodedShard, tally []byte, err error)

	// ApplyGC atomically writes b.Tally as key's tally cell and deletes
	// the rows of every mutator in b.Delete, all with write timestamp
	// b.WriteTS: a complete Read sees all of it or none of it (Cassandra:
	// one single-partition batch, which is atomic and isolated). Applying
	// the same batch again changes nothing.
	ApplyGC(ctx context.Context, key string, b GCBatch) error
}

// EncodedShard is one shard row as the store sees it: the mutator id (the
// row key) and the encoded Shard (opaque to the store). It is a plain
// value, safe to share if nobody mutates Data.
type EncodedShard struct {
	Mutator crdt.ActorID
	Data    []byte
}

// GCBatch is one GC write: the new tally and the shards it folded, all
// written at WriteTS. It is a plain value, safe to share if nobody mutates
// it.
type GCBatch struct {
	// WriteTS is the write timestamp (µs) of the tally and of every
	// delete. It equals the largest expires_at folded into Tally, which is
	// above every write timestamp of every deleted shard.
	WriteTS int64
	// Tally is the encoded Tally.
	Tally []byte
	// Delete lists the mutator ids whose rows are deleted, sorted.
	Delete []crdt.ActorID
}
