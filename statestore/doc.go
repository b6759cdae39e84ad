// Package statestore is how state-based counters (gcounter, pncounter)
// persist in any store.Siblings: generic helpers that load, merge, update
// and save. Package statestoretest runs these behaviours against a backend.
//
// Load reads every sibling under a key, decodes each and merges them;
// Update is load, apply a function as one actor, put with the load's
// token; Save adds a state beside what is stored, or on a store that keeps
// one value per actor in place of that actor's (SPEC.md 10.1). Neither
// loses what is stored, as long as a Save is not older than what its
// actor stored. A sibling that is not an encoding of the expected
// type makes Load and Update fail with the decoder's sentinel, writing
// nothing, until it is restored from a backup or a Put with a Fetch's
// token of a state that replaces the siblings (the good ones merged)
// supersedes it.
//
// # Caveats
//
// GCounter and PNCounter updates are not idempotent: after an error from
// Update's write that does not wrap crdt.ErrUnavailable (Update returned
// a state with it), retry with Save and that state, not with Update
// (TestErrorContractExploreStatestore), and before the actor's next
// Update: on a store keeping one value per actor (Cassandra) a state
// re-sent after it replaces the newer state, losing its increment
// (TestLimitSaveOfAnOlderStateOnAPerActorStore). Give each concurrent
// writer its own actor: two writers updating as one actor lose an
// increment.
//
// Update counts on the store's read-your-writes (README.md, Assumptions):
// a read that misses this actor's last write (a stale replica) makes it
// count from the older state, and that write's increment is lost
// (TestLimitStaleReadLosesAnIncrement). Unlike the ledger, nothing here
// keeps the last write to merge it back.
//
// Nothing removes an actor from a G-Counter. A key whose siblings, each
// within the store's limit, merge into a state above it (store.MaxValue,
// 8 MiB: about 30,000 actors with 255-byte ids) still loads, but every
// Update fails with crdt.ErrTooLarge, writing nothing
// (TestLimitUnionAboveTheStoresLimit); gcounter's and pncounter's encoders
// refuse a state above their MaxEncodedSize (16 MiB) the same way. A
// merge holds at most gcounter.MaxMergedActors (65,536; SPEC.md 4.2):
// siblings whose union has more (writers that never saw each other, each
// with tens of thousands of actors, or Saves of such states) make Load
// and Update fail with crdt.ErrTooLarge, writing nothing, until a Put with
// a Fetch's token of a state that replaces them
// (TestLimitSiblingsPastTheMergeCap). Keep actors few: one per writer,
// not one per process start; and an actor id is not reused by a restart
// while a write of the process before may still land.
package statestore
