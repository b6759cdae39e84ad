// Package memory is counterkit's in-memory reference backend: it implements
// every store interface the core defines (statestore.Store, and the ledger,
// tally, delta-log and balance stores) with plain maps behind a mutex.
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
// # Caveats
//
// Nothing is persisted: state lives as long as the value. There is no
// network, so the failures real stores add (timeouts, ambiguous writes,
// siblings, replicas that lag) never happen here; test those with the
// adapters' own fault-injecting doubles. Every store is safe for concurrent
// use.
package memory
