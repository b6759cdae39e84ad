// Package cassandra stores counterkit counters in Apache Cassandra (4.0 and
// later) through the gocql v2 driver
// (github.com/apache/cassandra-gocql-driver/v2). It lives in its own Go
// module so that the core never depends on a driver.
//
// # Basics
//
// A DB wraps a *gocql.Session and one keyspace. It hands out one store per
// storage shape, each implementing the store interface its core package
// defines; all merging logic stays in the core, the adapter only decides
// which rows are read and written, at which consistency level and with
// which write timestamp:
//
//   - States (statestore.Store): one row per (counter key, actor). An actor
//     overwrites only its own row, with a write timestamp above every
//     WRITETIME the DB has read, so there is no read-modify-write race
//     between actors; a read returns every actor's row and the core merges
//     them. "Merge" is the core type's join, so the order in which rows come
//     back does not matter. Save refuses anything statestore.Check refuses.
//   - Ledger (ledger.Store): the same rows, with Riak-like siblings. Fetch's
//     token names each row it returned by (actor, WRITETIME); Put writes the
//     actor's row above all of them and deletes each other named row USING
//     TIMESTAMP its WRITETIME, in one single-partition batch. A row version
//     written concurrently has a larger timestamp and survives as a sibling;
//     the versions read are superseded. Put refuses values that are not
//     tpncounter encodings.
//   - Tally (tally.Store, seed 001): one shard row per mutator, overwritten
//     without reading; the tally lives in a static column of the same
//     partition. A GC reads at ALL and writes its fold as one batch whose
//     USING TIMESTAMP derives from the largest expires_at it folded, so
//     repeated and concurrent GCs converge.
//   - Log (deltalog.Store, seed 003): one cell per update, clustered by
//     timeuuid DESC and kind ('m' merge before 'r' regular), which is
//     exactly deltalog.CompareCells; reads page lazily and stop at the first
//     merge cell; a compaction is one range delete.
//   - Balance (balance.Store, seed 000): seller_balance-style N/T/S rows
//     clustered by updateid DESC.
//
// Every write carries an explicit timestamp (USING TIMESTAMP): the
// caller's for the tally, otherwise the DB's clock, which is strictly
// increasing, raised above every WRITETIME read back, and consecutive
// within one multi-statement write so a later statement on the same cell
// wins. Every statement is marked idempotent (writes carry their own
// timestamps and client-chosen keys, so resending one stores the same
// cells) and so may be retried by the session's retry policy; the adapter sends no counter
// column update and no other non-idempotent statement. Values are always
// bound; only validated, double-quoted identifiers (see CheckIdentifier) are
// formatted into CQL.
//
// Errors from the driver come back as *Error, which wraps both a crdt
// sentinel (crdt.ErrAmbiguousWrite for a write whose outcome is unknown,
// crdt.ErrUnavailable for one known not to have happened,
// crdt.ErrMisconfiguredStore for schema or permission problems) and the
// driver's own error, so errors.Is and errors.As both work.
//
// Consistency levels are chosen per operation (Op) in Options; defaults are
// QUORUM, and ALL for the tally GC read. New refuses levels that would break
// a guarantee (see CheckConsistency).
//
// A Tx collects writes of several counters into one LOGGED batch: the
// transaction context of seed 000.
//
// # Caveats
//
//   - The per-actor stores rely on an actor reading its own last write
//     before overwriting it: reads and writes must overlap (QUORUM/QUORUM by
//     default). With LOCAL_QUORUM, an actor must stay in one data center.
//   - Write timestamps are microseconds from the local clock, raised above
//     every WRITETIME observed. Clock skew between hosts is tolerated by the
//     per-actor stores; the tally's expiry and the log's write window assume
//     skew well below their margins, as the seeds do.
//   - Reads slow linearly with the number of actors (per-actor stores,
//     bounded by MaxActorRows) or shards (tally) of a key. Stable actor ids
//     keep that number small.
//   - The tally GC needs every replica up (reads at ALL). It is an
//     optimisation; when it cannot run, values stay correct.
//   - Cassandra's logged batches are atomic but not isolated across
//     partitions: a reader may see part of a Tx (or a multi-counter log or
//     balance write) that spans several keys until it completes. Batches on
//     one key are atomic and isolated.
//   - Deletes leave tombstones until gc_grace_seconds has passed and
//     compaction purges them, and reads scan them. The balance table gets one
//     row tombstone per merged row; an account that merges more than about
//     100,000 rows within gc_grace_seconds hits Cassandra's
//     tombstone_failure_threshold, reported as crdt.ErrUnavailable. The log
//     uses one range tombstone per compaction, below the merge cell where
//     reads stop, so it does not have this problem.
package cassandra
