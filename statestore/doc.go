// Package statestore is how state-based counters (gcounter, pncounter)
// persist in any store.Siblings: generic helpers that load, merge, update
// and save. Package statestoretest runs these behaviours against a backend.
//
// Load reads every sibling under a key, decodes each and merges them;
// Update is load, apply a function as one actor, put with the load's
// token; Save adds a state beside what is stored (SPEC.md 10.1). Neither
// loses what is stored. A sibling that is not an encoding of the expected
// type makes Load and Update fail with the decoder's sentinel.
//
// # Caveats
//
// GCounter and PNCounter updates are not idempotent: after an error
// wrapping crdt.ErrAmbiguousWrite, retry with Save and the state Update
// returned, not with Update. Give each concurrent writer its own actor:
// two writers updating as one actor lose an increment.
package statestore
