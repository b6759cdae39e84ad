// Package statestore is how state-based counters (gcounter, pncounter)
// persist: a two-method Store interface that backends implement, generic
// helpers that load, merge, update and save through it, and (in storetest)
// the conformance suite every backend runs.
//
// # Basics
//
// A Store keeps, under each key, enough encoded states that their merge is
// the counter: the Cassandra adapter keeps one row per actor, Riak keeps
// siblings, the memory adapter merges on write and keeps one value. Load
// (the helper) reads every encoding under a key, decodes each and merges
// them; because Merge is a join, the result does not depend on how the
// backend split the state. Update is load → apply a function as one actor
// → save, the one write an increment costs; Save re-sends a state.
//
// Saving never loses information already stored: a merge-on-write store
// joins the new state into the old one, and a per-actor store overwrites
// only the saving actor's own entry, which that actor's previous save is
// contained in (each actor applies its updates serially, loading before
// updating).
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
// A Store is only as safe as its actors are distinct: two goroutines or
// processes saving as the same actor at once can overwrite each other's
// update in a per-actor store. Give each concurrent writer its own actor.
package statestore
