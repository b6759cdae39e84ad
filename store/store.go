// Package store defines the two storage shapes every counterkit driver is
// built on. A backend implements them by storing bytes and mapping its errors;
// the counter packages (ledger, statestore, tally, deltalog, balance) are the
// validating clients on top and are the only code that knows what the bytes
// mean. Nothing here knows a concrete counter type.
//
// # The shapes
//
// Siblings is a key holding one or more concurrent values: a write that read
// the key supersedes exactly what it read, and writes that did not see each
// other survive side by side, as in Riak with allow_mult or Cassandra rows
// keyed by writer. State-based counters and the ledger use it.
//
// Partitions is an ordered set of rows per partition key, written in atomic
// batches with explicit write timestamps (last write wins per row, deletes
// and range deletes shadow older writes), as in one Cassandra partition. The
// windowed delta log, the tombstone balance and the sharded tally use it.
//
// A new backend implements Siblings, Partitions, or both, and a
// conformance.Harness, and calls conformance.Run: the shapes' contract
// checks (store/storetest) and the behaviour suites of every driver built
// on them. Package store/faulty wraps either shape with seeded faults for
// tests.
//
// # Errors
//
// A write that certainly did not take effect returns an error wrapping
// crdt.ErrUnavailable. A write whose outcome is unknown (a timeout after
// sending, a lost connection) returns an error wrapping
// crdt.ErrAmbiguousWrite. A write refused for what it is, before anything
// was written, returns crdt.ErrCorruptEncoding (a malformed token),
// crdt.ErrInvalidKey (an invalid key) or crdt.ErrTooLarge (a value or
// batch over the limits); a backend never returns these three for a write
// that may have landed, reporting crdt.ErrAmbiguousWrite instead (say,
// when an earlier attempt of its own timed out). Callers treat every other
// error from a write as ambiguous. Backends wrap driver errors so that
// errors.As still reaches the driver's type, and a done context's error so
// that errors.Is(err, context.Canceled) holds.
package store

import (
	"context"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// Token names the siblings one Fetch returned. It is opaque to callers; a
// backend encodes whatever it needs (dots, vector clocks, write times).
type Token []byte

// Siblings is a key-value store whose keys hold sibling values.
// Implementations are safe for concurrent use.
type Siblings interface {
	// Fetch returns every sibling stored under key (none if absent, with
	// no error) and a token covering exactly those siblings. The order of
	// siblings is unspecified. The values are read-only: a store may
	// return bytes it keeps (the in-memory store does), so a caller must
	// not modify them.
	Fetch(ctx context.Context, key string) (values [][]byte, token Token, err error)

	// Put stores value under key as written by actor. With the token of a
	// Fetch, value supersedes the siblings that Fetch returned; siblings
	// written concurrently (not covered by token) survive alongside it.
	// With a nil token nothing that Fetch returned is superseded.
	//
	// A store may keep one value per actor (Cassandra keeps a row per
	// writer): a Put then also supersedes the value the same actor wrote
	// before, token or not. So every Put of an actor must contain
	// everything that actor wrote before, as a state-based counter's
	// does; the ledger and statestore write that way. Values are
	// non-empty, at most MaxValue bytes. A store may keep value itself
	// rather than a copy (the in-memory store does), so a caller must not
	// modify it after the call.
	Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token Token) error
}

// SiblingDeleter is an optional capability of a Siblings store: Delete
// removes the siblings the token covers (all of them when it comes from the
// latest Fetch); siblings written since survive.
type SiblingDeleter interface {
	Delete(ctx context.Context, key string, token Token) error
}

// SiblingBatchDeleter is an optional capability of a SiblingDeleter:
// DeleteBatch removes, for each i, the siblings tokens[i] covers under
// keys[i], as Delete does, in one write (one fsync on the embedded
// store). It refuses bad input (an invalid key, a malformed token, keys
// and tokens of different lengths) before deleting anything; after an
// error wrapping crdt.ErrUnavailable nothing was deleted, after any other
// some of the siblings may be gone.
type SiblingBatchDeleter interface {
	DeleteBatch(ctx context.Context, keys []string, tokens []Token) error
}

// Expiring is an optional capability of a Siblings store whose values
// expire: TTL returns the shortest time a value is kept after its Put
// (zero: for good; the function TTL, and so CheckKeeps, takes a negative
// one as zero). Only transaction records belong in such a store
// (ledger.Options.Records): a counter's state there would vanish from an
// idle key, so the ledger, bounded and statestore refuse one for it.
type Expiring interface {
	TTL() time.Duration
}

// Row is one row of a partition: its clustering key and value. A Row handed
// out by a store shares no memory with the store.
type Row struct {
	Key   []byte
	Value []byte
}

// Op is what a Mutation does.
type Op uint8

// The mutation kinds.
const (
	// OpPut writes Value as the row Key.
	OpPut Op = iota + 1
	// OpDelete deletes the row Key.
	OpDelete
	// OpDeleteRange deletes every row whose key k has Key ≤ k < End (End
	// nil: no upper bound).
	OpDeleteRange
	// OpDeletePartition deletes every row of the partition.
	OpDeletePartition
)

var opNames = [...]string{OpPut: "put", OpDelete: "delete", OpDeleteRange: "delete-range", OpDeletePartition: "delete-partition"}

// String names the op.
func (o Op) String() string {
	if o == 0 || int(o) >= len(opNames) {
		return "op?"
	}
	return opNames[o]
}

// Mutation is one write of a batch. Its write timestamp, in microseconds,
// is chosen by the caller, never by the store or by arrival order (CQL:
// USING TIMESTAMP); rows resolve last write wins, deletes shadowing values
// at or below their timestamp, by the rules of SPEC.md 10.2, so applying
// any set of mutations, in any order, any number of times, yields the same
// rows.
type Mutation struct {
	Partition string
	Op        Op
	Key       []byte // the row (OpPut, OpDelete), the first key (OpDeleteRange)
	End       []byte // OpDeleteRange: the first key not deleted; nil for no bound
	Value     []byte // OpPut: the row's value, non-empty
	Timestamp int64  // write time, µs; positive
}

// Read selects how complete a partition read must be.
type Read uint8

// The read levels.
const (
	// ReadAny reflects every mutation acknowledged before the call, but a
	// mutation that took effect without being acknowledged (an ambiguous
	// write) may be seen by one read and missed by a later one (Cassandra:
	// a read level that overlaps the write level, QUORUM by default). A
	// reader that tolerates more (tally's Read tolerates rows older than
	// acknowledged) says so.
	ReadAny Read = iota
	// ReadComplete also reflects every mutation that took effect anywhere
	// before the call, acknowledged or not (Cassandra: ALL, so such a read
	// fails while a replica is down).
	ReadComplete
)

// Partitions is a store of ordered partitions. Keys within a partition are
// ordered as unsigned bytes, ascending. Implementations are safe for
// concurrent use.
type Partitions interface {
	// Scan calls fn with the live rows of partition in key order, starting
	// at the first key ≥ from (nil: the first row), until fn returns false
	// or the rows run out. It fetches pages lazily and does not read far
	// past the point where fn stopped. A scan is not a snapshot: rows
	// written or deleted during it may or may not be seen. fn must not
	// call the store.
	Scan(ctx context.Context, partition string, from []byte, level Read, fn func(Row) bool) error

	// Snapshot returns every live row of partition in key order, read in
	// isolation: each batch applied to the partition is either wholly in
	// it or wholly absent. A partition of more than limit rows is refused
	// with an error wrapping crdt.ErrTooLarge (math.MaxInt: no limit); a
	// negative limit with one wrapping crdt.ErrInvalidConfig.
	Snapshot(ctx context.Context, partition string, limit int, level Read) ([]Row, error)

	// Apply applies muts atomically: either every mutation takes effect
	// or none does. Mutations of one partition are also isolated from
	// Snapshot. A batch may address several partitions. Invalid
	// mutations are refused before anything is written, with an error
	// wrapping crdt.ErrInvalidKey (partition), crdt.ErrInvalidAmount (a
	// timestamp ≤ 0, an empty value, an unknown op) or crdt.ErrTooLarge.
	Apply(ctx context.Context, muts []Mutation) error
}
