// Package memory is counterkit's in-memory reference backend: it implements
// every store interface the core defines (statestore.Store, and the ledger
// store; the tally, delta-log and balance counters run on Partitions) with
// plain maps behind a mutex.
//
// # Basics
//
// It is the default for tests, examples, property tests and single-process
// programs. Every store here passes the same conformance suite as the
// Cassandra and Riak adapters, which also makes it the suite's own test:
// behaviour the suite demands of a real database is demanded here too.
// Stores validate input exactly as a real backend must (bad encodings and
// invalid ids are refused and change nothing) and honour context
// cancellation, so code tested against memory does not meet new errors in
// production.
//
// # Fault injection
//
// The stores keep the semantics real databases have and the core must
// survive: Ledgers keeps siblings (two writers that fetched the same state
// both survive, as in Riak with allow_mult), and Partitions orders writes
// by their timestamps. On top of that, each store can inject the
// faults of a network, for tests and examples:
//
//   - Faulty wraps Ledgers: Puts that land but lose their acknowledgement
//     (ErrAmbiguousWrite), Puts lost with an ambiguous error, refused Puts
//     (ErrUnavailable), and Fetches served from an older snapshot (a stale
//     replica), each by rate (SetRates) or one by one (FailPuts,
//     StaleFetches); Injected counts them.
//   - Partitions, which the tally, delta-log and balance counters use,
//     gets its faults from package store/faulty.
//
// # Caveats
//
// Nothing is persisted: state lives as long as the value. Every store is
// safe for concurrent use.
package memory
