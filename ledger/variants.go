//go:build !counterkit_mutants

package ledger

import "github.com/counterkit/counterkit/crdt"

// The group commit and retirement as documented. Built with the counterkit_mutants tag,
// these become variables that tests set to known-broken variants
// (mutants.go); here they are false constants, so the branches that read
// them are compiled out.
const (
	brokenAckEarly    = false
	brokenDropOnRetry = false
	brokenKeepRefused = false
	// retirement records the transactions of the writer it retires
	brokenRetireUnrecorded = false
	// an idle writer is dated only when each of its newest txns has a record naming it
	brokenDateByAnyRecord = false
	// a copy in doubt for RetireAfter/2 is judged by its records, and a pass records none of its own in doubt
	brokenLongDoubt = false
	// a copy in doubt for RetireAfter/2 that would count beside the other copies stays
	brokenLongDoubtOwn = false
	// a pass retires a writer with its late copies, and only those, left out
	brokenLateDeclined = false
	brokenLateAll      = false
	// a retry the counter forgot is recognised by its record
	brokenCountWindow = false
	// a Put that failed with the context's error may have landed
	brokenCancelRefused = false
	// a Book continues a dropped key's incarnation
	brokenBookForgets = false
	// a sweep keeps the records that date a live writer
	brokenSweepDating = false
	// a pass dates a writer no record dates by a stored sighting of its version
	brokenSeenIgnored    = false
	brokenSeenAnyVersion = false
	// a key keeps the sightings of as many writers as the account may hold
	brokenSeenCapped = false
)

// route is Shard's routing: ShardOf (with the counterkit_mutants tag, a
// broken routing a test switches on).
func (s *Sharded) route(txn crdt.TxnID) int { return ShardOf(txn, s.n) }
