// Package memory is counterkit's in-memory backend: [Siblings] and
// [Partitions] implement the two storage shapes, store.Siblings (the
// ledger, statestore) and store.Partitions (tally, deltalog, balance),
// behind a mutex: Siblings in maps, Partitions' rows in sorted blocks
// per partition (a lookup costs about log2 of the partition's rows in
// integer compares, a scan the rows it reads).
//
// It is the default for tests, examples and single-process programs. Both
// stores pass the conformance kit of package store/storetest, as the other
// adapters do: they refuse what a real backend must refuse and keep the
// semantics of a real database that the counters must survive (siblings as
// in Riak, timestamps and tombstones as in Cassandra). For network faults,
// wrap either store with package store/faulty. Nothing is persisted.
package memory
