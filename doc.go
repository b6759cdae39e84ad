// Package counterkit is a library of counters that stay correct when the
// network lies: a retried credit never counts twice, two replicas always
// converge, and an increment costs one write.
//
// Its one declaration, VectorFiles, ships the test vectors (testdata/vectors)
// with the module; otherwise it is the design note for the module.
// Each counter type lives in its own package and is pure (no I/O). Storage
// is two shapes, defined once in package store: store.Siblings (a key
// holding concurrent values, for the state-based counters and the ledger)
// and store.Partitions (ordered rows written in atomic, timestamped batches,
// for the tally, the windowed log and the tombstone balance). The drivers
// (ledger, statestore, tally, deltalog, balance) validate everything they
// read and write; backends only store bytes and map errors: an in-memory
// reference in adapters/memory, and, each in its own Go module so that
// importing the core never pulls a driver or an engine, a durable embedded
// store (adapters/embedded), Apache Cassandra (adapters/cassandra) and Riak
// KV (adapters/riak). A new backend implements one or both shapes and runs
// package conformance.
//
// # Which counter
//
//   - gcounter: grow-only, one entry per actor, Merge is the per-actor max.
//   - pncounter: two GCounters (increments and decrements); Value = P − N.
//   - tpncounter and ledger: a PN counter whose actors remember their recent
//     transaction ids, so credits and debits retried by any actor count once
//     within the history window (and, with timed transactions, are refused
//     rather than counted again after it). The Ledger drives it over any store that
//     returns siblings (read, merge siblings, apply, write back).
//   - tally: a sharded counter: each mutator overwrites its own
//     expiring shard (never reads), a GC folds final shards into a tally with
//     one idempotent last-write-wins write. Generic over the aggregate (sum,
//     min, max, stats, HyperLogLog distinct counts).
//   - deltalog: a windowed log: each update is a cell keyed by a
//     client time-based id; merge cells summarise everything older than the
//     write window.
//   - balance: a tombstone log for account balances: normal (N) rows per
//     update, tombstone (T) rows and sum (S) rows written by merges that
//     need no coordination, with a deterministic rule for which rows are
//     valid.
//
// # What Merge means
//
// Every state-based type implements crdt.State: Merge is the join of a
// join-semilattice, so it is commutative, associative and idempotent; any two
// replicas that have seen the same updates, in any order and with any
// duplication, hold equal states. Merge returns an error, and leaves its
// receiver unchanged, only when the join cannot be represented (an exact int64
// would overflow, a size bound would be exceeded). Two states that hold one
// transaction with different amounts are resolved deterministically, and
// reported, as part of the join.
//
// # Guarantees and their limits
//
// Amounts are exact int64: overflow is an error wrapping crdt.ErrOverflow,
// never a wrap-around. Each type states the window inside which an
// acknowledged update is counted exactly once (the ledger's history length,
// the tally's expiry and GC grace, the log's write window); outside it, the
// API reports the limit (crdt.ErrOutsideWindow, crdt.ErrExpired, an outcome)
// instead of drifting silently. One exception is stated where it applies: a
// ledger whose transactions carry no time cannot tell a retry of a
// transaction every actor has forgotten from a new one, and counts it again;
// with tpncounter.Options.TxnTime (for example version 1 UUID ids) that retry
// is refused with crdt.ErrOutsideWindow. Writes are idempotent, so an
// ambiguous write (crdt.ErrAmbiguousWrite) is always safe to retry.
//
// # Wire format
//
// Every encoding is msgpack inside a versioned envelope
// [type tag, format version, body] (see crdt.TypeTag and SPEC.md). Encodings
// are deterministic; encoders write a type's newest version and decoders read
// every earlier one; decoders are bounded, fuzzed, and wrap
// crdt.ErrCorruptEncoding, crdt.ErrUnsupportedVersion, crdt.ErrTypeMismatch or
// crdt.ErrTooLarge.
//
// # Caveats
//
//   - Every actor that ever wrote keeps an entry in a state-based counter, so
//     states grow with the actors (and, for the ledger, with every Ledger
//     value that wrote: each is an incarnation of its actor); Stats
//     accessors report sizes so growth is visible.
//   - An actor applies its own updates serially; concurrency comes from many
//     actors.
//   - Time-based windows assume bounded clock skew, configured per type.
package counterkit
