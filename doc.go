// Package counterkit is a library of counters that stay correct when the
// network lies: a retried credit never counts twice, two replicas always
// converge, and an increment costs about one write.
//
// Its one declaration, VectorFiles, ships the test vectors
// (testdata/vectors) with the module; otherwise it is the map of the
// module. Each counter type lives in its own package and is pure (Apply,
// Merge, Value; no I/O):
//
//   - gcounter, pncounter: grow-only and increment/decrement counters, one
//     entry per actor.
//   - tpncounter: a PN counter whose actors remember their recent
//     transaction ids; ledger drives it over a store, with transaction
//     records that recognise a retry within ledger.Options.RetryWindow.
//   - tally: a sharded counter whose mutators overwrite their own expiring
//     shards, generic over the aggregate (sum, min, max, stats, distinct).
//   - deltalog: a windowed log of cells keyed by time-based update ids.
//   - balance: a tombstone log for account balances (N, S and T rows).
//   - bounded: a counter with a floor, each actor debiting within its
//     rights.
//
// Storage is two shapes, defined once in package store: store.Siblings (a
// key holding concurrent values) and store.Partitions (ordered rows written
// in atomic, timestamped batches). Backends only store bytes and map
// errors: adapters/memory for tests, and, each in its own Go module, the
// durable embedded store (adapters/embedded), Apache Cassandra
// (adapters/cassandra) and Riak KV (adapters/riak). A new backend runs
// package conformance.
//
// # Guarantees
//
// SPEC.md states each one once, with its limits, in each type's section:
// Merge is commutative, associative and idempotent (for example SPEC.md
// 4.3), amounts are exact int64 and overflow is an error
// (crdt.ErrOverflow), and each type has its exactly-once window (the ledger's in
// 6.11, the tally's in 7.5, the log's in 8.4–8.5, the tombstone log's in
// 9.3, Transactions' in 9.4, a bounded Account's in 13.5). Outside
// a window the API reports the limit (crdt.ErrOutsideWindow,
// crdt.ErrExpired, an outcome) rather than drift silently. Writes are
// idempotent, so an ambiguous write (crdt.ErrAmbiguousWrite) is always safe
// to retry.
//
// # Wire format
//
// Every encoding is msgpack inside a versioned envelope [type tag, format
// version, body] (crdt.TypeTag, SPEC.md 3). Encoders are deterministic and
// write the oldest version that represents the state; decoders read every
// earlier version, are bounded and fuzzed, and wrap crdt.ErrCorruptEncoding,
// crdt.ErrUnsupportedVersion, crdt.ErrTypeMismatch or crdt.ErrTooLarge.
package counterkit
