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
// cells) and so may be retried by the session's retry policy; the adapter
// sends no counter column update and no other non-idempotent statement.
// A retry policy must never answer gocql.Ignore nor lower a statement's
// consistency: New refuses gocql.DowngradingConsistencyRetryPolicy as
// Options.RetryPolicy, and since gocql gives no access to the session's own
// policy, check ClusterConfig.RetryPolicy with CheckRetryPolicy before
// creating the session. Values are always bound; only validated,
// double-quoted identifiers (see CheckIdentifier) are formatted into CQL.
//
// Errors from the driver come back as *Error, which wraps both a crdt
// sentinel (crdt.ErrAmbiguousWrite for a write whose outcome is unknown,
// crdt.ErrUnavailable for one known not to have happened,
// crdt.ErrTooLarge for a write the server refused for its size,
// crdt.ErrMisconfiguredStore for schema or permission problems) and the
// driver's own error, so errors.Is and errors.As both work. A write the
// driver sent more than once (retry policy, speculative execution) is never
// reported as crdt.ErrUnavailable, only as crdt.ErrAmbiguousWrite: the
// driver reports the last attempt's error, and an earlier attempt may have
// landed. Likewise an Overloaded refusal of a LOGGED batch over more than
// one partition is ambiguous, since the batchlog may replay it.
//
// Consistency levels are chosen per operation (Op) in Options; defaults are
// QUORUM, and ALL for the tally GC read. New refuses levels that would break
// a guarantee (see CheckConsistency): every read must overlap the writes it
// depends on, transaction commits (OpTxCommit) included. Two levels overlap
// when either is ALL or both are in {QUORUM, EACH_QUORUM} or both in
// {LOCAL_QUORUM, EACH_QUORUM}; QUORUM and LOCAL_QUORUM do not.
//
// Whole-partition reads (state Load, ledger Fetch, tally Read, balance
// Rows) are one request: one page of the adapter's row cap plus one, with
// the driver's automatic paging off, so that a batch landing during the
// read (a tally GC, a ledger Put, a balance merge) is seen entirely or not
// at all. A partition that does not fit is refused with crdt.ErrTooLarge,
// never read in pieces. Log scans page lazily (Options.LogPageSize), as
// deltalog.Store allows: a scan is not a snapshot.
//
// A Tx collects writes of several counters into one LOGGED batch: the
// transaction context of seed 000.
//
// # Caveats
//
//   - The per-actor stores rely on an actor reading its own last write
//     before overwriting it: reads and writes must overlap (QUORUM/QUORUM by
//     default). With LOCAL_QUORUM, an actor must stay in one data center,
//     and the reads must be LOCAL_QUORUM too (a QUORUM write can miss a
//     DC's local quorum), as must transaction commits (or EACH_QUORUM).
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
//   - Size limits. A batch over more than one partition (a Tx, a transfer,
//     a multi-counter log Insert) above the server's
//     batch_size_fail_threshold_in_kb (50 KiB of mutation data by default)
//     is refused by the server ("Batch too large", InvalidRequest),
//     reported as crdt.ErrTooLarge with nothing applied; a batch on one
//     partition is exempt. One mutation (one partition's part of a write)
//     must stay below max_mutation_size, half of
//     commitlog_segment_size_in_mb: 16 MiB with 4.0's defaults. The adapter
//     accepts values up to crdt.DefaultMaxEncodedSize (also 16 MiB), so
//     keep stored values far smaller; an oversized mutation is reported as
//     crdt.ErrTooLarge when the coordinator refuses it, and otherwise (a
//     replica refusing it) as a failed, ambiguous write.
//   - Deletes leave tombstones until gc_grace_seconds has passed and
//     compaction purges them, and whole-partition reads scan them: ledger
//     Puts leave one row tombstone per superseded sibling, tally GCs one per
//     folded shard, balance merges one per merged row. A partition that
//     collects more than tombstone_failure_threshold (100,000 by default;
//     warnings from 1,000) tombstones within gc_grace_seconds can no longer
//     be read (a read failure, reported as crdt.ErrUnavailable). The log
//     uses one range tombstone per compaction, below the merge cell where
//     reads stop, so it does not have this problem.
//   - CreateSchema must run from one process at a time on a multi-node
//     cluster: concurrent CREATE TABLE IF NOT EXISTS statements sent to
//     different coordinators can both create the table with different ids
//     (a schema conflict in 4.0). Create the schema once, at deploy time.
package cassandra
