// Package memory is counterkit's in-memory backend: [Siblings] and
// [Partitions] implement the two storage shapes, store.Siblings (the
// ledger, statestore) and store.Partitions (tally, deltalog, balance),
// with maps behind a mutex.
//
// It is the default for tests, examples and single-process programs. Both
// stores pass the conformance kit of package store/storetest, as the
// Cassandra, Riak and embedded adapters do: they refuse what a real backend
// must refuse (invalid keys, actors and tokens; batches that fail
// store.CheckMutations) without changing anything, honour context
// cancellation, and keep the semantics of a real database that the
// counters must survive. Siblings
// keeps concurrent writes as siblings, as Riak does with allow_mult;
// Partitions orders writes by their timestamps and keeps tombstones, as
// Cassandra does.
//
// For network faults (refused, lost, ambiguous and held writes; stale
// reads), wrap either store with package store/faulty: faulty.NewSiblings,
// faulty.NewPartitions.
//
// Nothing is persisted: state lives as long as the value. Every store is
// safe for concurrent use.
package memory
