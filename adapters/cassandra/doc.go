// Package cassandra implements counterkit's two storage shapes,
// store.Siblings and store.Partitions, on Apache Cassandra (4.0 and later)
// through the gocql v2 driver (github.com/apache/cassandra-gocql-driver/v2).
// It lives in its own Go module so that the core never depends on a
// driver.
//
// The adapter stores bytes and maps errors. It knows no counter type and
// never looks inside a value: the counter packages (statestore, ledger,
// tally, deltalog, balance) are the validating clients on top and choose
// which rows they read and write. What the adapter decides is how the
// shapes map onto tables, at which consistency level each operation runs,
// and, for Siblings, which write timestamp each row gets.
//
// # Two tables
//
// A DB wraps a *gocql.Session and one keyspace and hands out one store per
// shape. CreateSchema creates two tables (Schema prints them):
//
//	siblings   (key text, actor text, value blob, PRIMARY KEY ((key), actor))
//	partitions (partition text, key blob, value blob, PRIMARY KEY ((partition), key))
//
// Both are named with a prefix (default "counterkit_"). Keyspace and table
// names must pass CheckIdentifier and are always double-quoted; keys,
// actors and values are always bound, never formatted into CQL. Keys and
// partition keys follow crdt.ValidateKey (errors wrap crdt.ErrInvalidKey).
//
// # Siblings: one row per actor, siblings from write timestamps
//
// db.Siblings() keeps each key as one Cassandra partition of the siblings
// table, with one row per actor that has written it. Fetch reads the whole
// partition and returns every row as a sibling, with a token naming each
// row it returned by (actor, WRITETIME(value)). Put(actor, value, token)
// writes the actor's own row at a timestamp above every one in the token,
// and deletes each other row the token names USING TIMESTAMP that row's
// WRITETIME, in one single-partition batch.
//
// The semantics follow from three Cassandra rules. A single-partition
// batch is one mutation, applied atomically and in isolation, so a Fetch
// sees a Put whole or not at all. Last write wins by the write timestamp
// the client binds (USING TIMESTAMP), cell by cell. A delete USING
// TIMESTAMP t shadows exactly the versions written at t or below, so it
// removes the version the Fetch saw and nothing written after it.
//
// A version written concurrently always has a larger timestamp than the
// one in the token, because every DB's clock (microseconds, strictly
// increasing) is raised above every WRITETIME the DB has read: the other
// actor wrote or read the tokened version before writing again. So a Put
// supersedes exactly what its Fetch returned, plus the writer's own
// earlier row (one row per actor: every counterkit client writes values
// that include what the actor wrote before, reading before it writes), and
// a version written concurrently survives as a sibling.
//
// The clock rules. Timestamps come from the local clock, raised above
// every WRITETIME observed and above every timestamp handed out, so a
// restarted process whose clock is behind still supersedes its own row,
// as long as it fetches before it puts (clients do). Clock skew between
// hosts is tolerated. A Put without a token from a process whose clock is
// behind its own earlier write loses to that write.
//
// No Delete is offered (Siblings is not a store.SiblingDeleter). Every row
// delete the adapter sends is paired with an insert at a larger timestamp,
// so the newest live row of a key is always at or above every tombstone in
// it, and a Fetch lifts a restarted process's clock above all of them. A
// bare delete would leave tombstones above every live row, under which a
// restarted process with a clock behind could write invisibly.
//
// # Partitions: one Cassandra partition per partition
//
// db.Partitions() maps each store partition to one Cassandra partition of
// the partitions table, one row per row key. The clustering column is a
// blob, which Cassandra orders as unsigned bytes, ascending: the order
// store.Partitions requires, so reads never sort.
//
// Every mutation becomes one statement carrying the caller's timestamp
// (USING TIMESTAMP): OpPut an INSERT, OpDelete a row delete, OpDeleteRange
// a range delete on the clustering column (key >= ? AND key < ?, a bound
// omitted when absent; Cassandra supports these since 3.0 and records one
// range tombstone), OpDeletePartition a partition delete. Cassandra's
// reconciliation is store.Mutation's rule: greater timestamp wins, a
// tombstone at t shadows values at t or below, and of two values with equal
// timestamps the greater (compared as unsigned bytes since 4.0; 3.x
// compared them as signed bytes) wins.
//
// Apply sends one statement alone, and several as one LOGGED batch: atomic
// (a batch over several partitions is written to the batchlog first and
// replayed until every part has landed) and, when every mutation addresses
// one partition, isolated (it is one mutation). Snapshot reads the
// partition as one page of limit+1 rows with automatic paging off: one
// single-partition read, answered from one view of each replica and merged
// cell by cell, so each single-partition batch is in it wholly or not at
// all; a partition that does not fit is refused with crdt.ErrTooLarge,
// never read in pieces. Scan pages lazily (Options.ScanPageSize rows a
// request), asking for the next page only when fn has taken every row of
// the last; it is not a snapshot, as the contract allows.
//
// # Consistency levels
//
// Each operation (Op) has its own level in Options.Consistency:
//
//	OpSiblingsFetch          QUORUM  Siblings.Fetch
//	OpSiblingsPut            QUORUM  Siblings.Put
//	OpPartitionRead          QUORUM  Scan and Snapshot at store.ReadAny
//	OpPartitionReadComplete  ALL     Scan and Snapshot at store.ReadComplete
//	OpPartitionApply         QUORUM  Partitions.Apply
//
// New refuses (CheckConsistency) ANY, SERIAL and LOCAL_SERIAL; a complete
// read below ALL (a client folds and deletes rows after such a read, so it
// must see every replica, including a write that reached only one of them
// before its outcome became unknown); and a read that does not overlap the
// writes it depends on: OpSiblingsFetch with OpSiblingsPut (an actor must
// read its own last Put), OpPartitionRead with OpPartitionApply (clients
// merge from what they read). Two levels overlap when either is ALL, or
// both are in {QUORUM, EACH_QUORUM}, or both in {LOCAL_QUORUM,
// EACH_QUORUM}. QUORUM and LOCAL_QUORUM do not overlap: with several data
// centers a QUORUM write can miss a DC's local quorum. A DC-local setup
// puts every read and its writes at LOCAL_QUORUM; an actor must then stay
// in one DC, and merges must run in the DC the writes go to.
//
// # What an acknowledged write survives
//
// A write is acknowledged when as many replicas as its level needs have
// applied it to their memtable and commit log. Whether that survives a
// crash depends on the server's configuration, not on the adapter:
//
//   - commitlog_sync: periodic (the default, every 10 s) acknowledges
//     before the commit log reaches the disk, so a power loss on every
//     acknowledging replica within that period loses acknowledged writes.
//     commitlog_sync: batch (or group, with a short window) fsyncs before
//     acknowledging, at some latency cost.
//   - The replication factor and the write level: with RF 1 one disk holds
//     everything; with RF 3 and QUORUM, an acknowledged write is on two
//     replicas and survives losing any one node.
//
// For balances and other money, use commitlog_sync: batch (or group) and
// QUORUM (or LOCAL_QUORUM) with RF 3, and run repairs within
// gc_grace_seconds, so that a replica that missed a delete cannot bring
// the deleted rows back.
//
// # Retries and errors
//
// Every statement is marked idempotent (writes bind their own timestamps
// and keys, so resending one stores the same cells) and may be retried by
// the session's retry policy; the adapter sends no counter-column update
// and no other non-idempotent statement. A retry policy must never answer
// gocql.Ignore nor lower a statement's consistency: New refuses
// gocql.DowngradingConsistencyRetryPolicy as Options.RetryPolicy, and
// since gocql gives no access to the session's own policy, check
// ClusterConfig.RetryPolicy with CheckRetryPolicy before creating the
// session.
//
// Errors from the driver come back as *Error, which wraps both a crdt
// sentinel (crdt.ErrAmbiguousWrite for a write whose outcome is unknown,
// crdt.ErrUnavailable for one known not to have happened, crdt.ErrTooLarge
// for a write the server refused for its size, crdt.ErrMisconfiguredStore
// for schema or permission problems) and the driver's own error, so
// errors.Is and errors.As both work. A write the driver sent more than
// once (retry policy, speculative execution) is never reported as
// crdt.ErrUnavailable, only as crdt.ErrAmbiguousWrite: the driver reports
// the last attempt's error, and an earlier attempt may have landed.
// Likewise an Overloaded refusal of a LOGGED batch over more than one
// partition is ambiguous, since the batchlog may replay it. A done context
// is reported before anything is sent as crdt.ErrUnavailable wrapping the
// context's error.
//
// # Caveats
//
//   - Cassandra's logged batches are atomic but not isolated across
//     partitions: a reader may see part of an Apply that spans several
//     partitions until it completes. Batches on one partition are atomic
//     and isolated.
//   - Size limits. Partitions.Apply refuses a batch over more than one
//     partition whose keys and values add up to more than
//     store.MaxSpanningBatchBytes (32 KiB) before sending it, with
//     crdt.ErrTooLarge, so that it stays below the server's
//     batch_size_fail_threshold_in_kb (50 KiB of mutation data by default,
//     above which the server refuses with "Batch too large", also reported
//     as crdt.ErrTooLarge with nothing applied); a batch on one partition
//     is exempt from both. One mutation (one partition's part of a write) must stay
//     below max_mutation_size, half of commitlog_segment_size_in_mb: 16 MiB
//     with 4.0's defaults, overhead included; store.MaxBatchBytes (12 MiB
//     of keys and values in one Apply) and store.MaxValue (8 MiB) stay
//     below it. Keep values far smaller. An oversized mutation is reported as crdt.ErrTooLarge when
//     the coordinator refuses it, and otherwise (a replica refusing it) as
//     a failed, ambiguous write. A BATCH message holds at most
//     MaxApplyMutations (65,535) statements, above store.MaxBatch.
//   - Deletes leave tombstones until gc_grace_seconds has passed and
//     compaction purges them, and reads scan them. Siblings Puts leave one
//     row tombstone per superseded sibling; Partitions leave what their
//     clients delete. A read that meets more than
//     tombstone_failure_threshold (100,000 by default; warnings from 1,000)
//     tombstones fails (reported as crdt.ErrUnavailable). Range deletes
//     cost one range tombstone each, however many rows they cover.
//   - Reads of a Siblings key grow with its number of actors (at most
//     MaxSiblings); stable actor ids keep it small.
//   - CreateSchema must run from one process at a time on a multi-node
//     cluster: concurrent CREATE TABLE IF NOT EXISTS statements sent to
//     different coordinators can both create the table with different ids
//     (a schema conflict in 4.0). Create the schema once, at deploy time.
package cassandra
