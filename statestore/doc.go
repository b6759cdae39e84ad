// Package statestore is how state-based counters (gcounter, pncounter)
// persist in any store.Siblings: generic helpers that load, merge, update
// and save through it. Package statestoretest runs these behaviours against
// a backend.
//
// # Basics
//
// A sibling store keeps, under each key, one or more encoded states whose
// merge is the counter: Riak and the memory and embedded stores keep
// siblings, the Cassandra adapter one row per writer. Load reads every
// sibling, decodes each and merges them; because Merge is a join, the
// result does not depend on how the backend split the state. Update is
// load → apply a function as one actor → put with the token of the load,
// the one write an increment costs: it supersedes exactly the siblings it
// merged, so a key that one writer updates stays one value, and writers
// that did not see each other leave siblings that the next Load merges.
// Save adds a state beside what is stored, superseding nothing.
//
// Saving never loses information already stored: Update replaces only what
// it read and merged, and Save replaces nothing.
//
// Statestore is the validating client: it encodes what it writes and
// decodes what it reads, so a sibling that is not a counter encoding of the
// expected type makes Load and Update fail with the decoder's sentinel, and
// Update writes nothing over it.
//
// # Caveats
//
// GCounter and PNCounter updates are not idempotent. If Update's save fails
// with an error wrapping crdt.ErrAmbiguousWrite, the increment may or may
// not be stored. Retry with Save and the state Update returned (merging
// the same state twice is harmless); do not call Update again, which would
// apply the increment a second time. Callers that cannot keep the state
// around need a transaction-tracking counter (tpncounter).
//
// Give each concurrent writer its own actor. Two goroutines or processes
// updating as the same actor at once each increment that actor's entry from
// what they read, and the join keeps the larger, so one increment is lost;
// in a per-writer store (Cassandra) the later write also replaces the
// earlier row.
package statestore
