//go:build counterkit_mutants

package balance

// Known-broken variants of the rules, built only with the
// counterkit_mutants build tag, so that tests can show that their checks
// catch them (export_mutants_test.go). Without the tag they are false
// constants (variants.go) and the branches that read them are compiled out.
var (
	// brokenAmountClaims: a settled merge's tombstone cancels only an N
	// row of its own amount, so an id reused with another amount counts
	// twice.
	brokenAmountClaims bool
	// brokenLevelPerMerge: a covered sum row with tombstones is never
	// deleted in the merge that collects them, so a chain unwinds one level
	// per merge.
	brokenLevelPerMerge bool
	// brokenTxnNoRecord: Transactions.Merge does not record the
	// transactions it sums, so a retry after settling counts again.
	brokenTxnNoRecord bool
	// brokenTxnNoDeadline: a call writes its row however long after it
	// read the record, so one that stalled past settling counts again.
	brokenTxnNoDeadline bool
	// brokenPlacedNoNeeds: a merge of a placed partition removes the
	// oldest rows without the rows their removal needs (a tombstone's
	// targets at other places, a sum row's tombstones), so a copy of a
	// transaction's row, or a sum's covered rows, can count again.
	brokenPlacedNoNeeds bool
)
