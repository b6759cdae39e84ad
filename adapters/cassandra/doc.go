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
// Siblings meets SPEC.md 10.1 with write timestamps: the token names each
// row Fetch returned by its WRITETIME, and a Put deletes exactly those
// versions and writes the actor's row above them in one single-partition
// batch (the store keeps one row per actor, which 10.1 allows). Partitions
// meets SPEC.md 10.2: Cassandra's reconciliation is that section's rule,
// and the blob clustering column gives its row order. Both need reads
// that overlap the writes they depend on: New refuses levels
// (CheckConsistency) and retry policies (CheckRetryPolicy) that break
// that. Writes report what is known, as SPEC.md 10 requires:
// crdt.ErrUnavailable only when a write certainly did not happen,
// crdt.ErrAmbiguousWrite when it may have, in an *Error that also wraps
// the driver's error. Invalid input is refused before anything is sent.
//
// Example counts page views from two web servers (statestore over
// Siblings). README.md has the statements, errors, size limits, durability
// settings and how to run the tests against a real server.
package cassandra
