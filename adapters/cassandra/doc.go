// Package cassandra implements counterkit's two storage shapes,
// store.Siblings and store.Partitions, on Apache Cassandra (4.0 and later)
// through the gocql v2 driver (github.com/apache/cassandra-gocql-driver/v2).
// It lives in its own Go module so that the core never depends on a
// driver.
//
// The adapter stores bytes and maps errors; it never looks inside a value.
// The counter packages (statestore, ledger, bounded, tally, deltalog,
// balance) are the validating clients on top. A DB wraps a *gocql.Session
// and one keyspace; CreateSchema creates its two tables (Schema prints
// them), and DB.Siblings and DB.Partitions hand out the stores.
//
// # The guarantee
//
// Siblings meets SPEC.md 10.1: a Put supersedes exactly the siblings its
// token covers (and the writer's own earlier row: the store keeps one row
// per actor, which 10.1 allows), and siblings written concurrently survive
// alongside it. It does so with write timestamps: the token names each row
// Fetch returned by its WRITETIME, the Put deletes exactly those versions
// and writes the actor's row above them, in one single-partition batch,
// and every DB's clock is raised above every WRITETIME it reads.
//
// Partitions meets SPEC.md 10.2: Cassandra's reconciliation (greater
// timestamp wins, a tombstone at t shadows values at t or below, equal
// timestamps go to the greater value as unsigned bytes since 4.0) is that
// section's rule, and the blob clustering column gives its row order.
// Apply is one statement or one LOGGED batch, atomic across partitions and
// isolated within one; Snapshot is one single-partition read, so each
// single-partition batch is in it wholly or not at all.
//
// Both need reads that overlap the writes they depend on. Each operation
// (Op) has its own level in Options.Consistency; New refuses
// (CheckConsistency) ANY, SERIAL and LOCAL_SERIAL, a complete read
// (store.ReadComplete) below ALL, and a read that does not overlap its
// writes. A retry policy that lowers a level or ignores an error is
// refused too (CheckRetryPolicy).
//
// Writes report what is known, as SPEC.md 10 requires: an error wrapping
// crdt.ErrUnavailable only when the write certainly did not happen (never
// sent, or sent once and refused), crdt.ErrAmbiguousWrite when it may
// have. Every driver error comes back as an *Error that wraps both the
// crdt sentinel and the driver's error. Invalid input is refused before
// anything is sent.
//
// # Use
//
// Example connects to CASSANDRA_HOSTS, creates the schema and counts page
// views from two web servers (statestore over Siblings). README.md has the
// schema and the statements, the error table, the size limits
// (max_mutation_size, batch_size_fail_threshold_in_kb), tombstones, what
// an acknowledged write survives for each commitlog_sync and replication
// factor, the settings for money, and how to run the tests against a real
// server.
package cassandra
