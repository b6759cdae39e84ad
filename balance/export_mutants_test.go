//go:build counterkit_mutants

package balance

// BreakAmountClaims and BreakChainCompaction switch on a known-broken
// variant of the rules (the behaviour before reused ids and chain
// compaction were handled) and return a function that switches it off.
// Tests use them to show that their checks catch the broken variant; they
// must not run in parallel with other tests of the package.
func BreakAmountClaims() (restore func()) {
	brokenAmountClaims = true
	return func() { brokenAmountClaims = false }
}

func BreakChainCompaction() (restore func()) {
	brokenLevelPerMerge = true
	return func() { brokenLevelPerMerge = false }
}

// BreakTxnRecords and BreakTxnDeadline switch off Transactions' records
// and its Deadline.
func BreakTxnRecords() (restore func()) {
	brokenTxnNoRecord = true
	return func() { brokenTxnNoRecord = false }
}

func BreakTxnDeadline() (restore func()) {
	brokenTxnNoDeadline = true
	return func() { brokenTxnNoDeadline = false }
}

// BreakPlacedNeeds makes a merge of a placed partition remove rows without
// what their removal needs.
func BreakPlacedNeeds() (restore func()) {
	brokenPlacedNoNeeds = true
	return func() { brokenPlacedNoNeeds = false }
}
