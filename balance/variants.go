//go:build !counterkit_mutants

package balance

// The rules as documented. Built with the counterkit_mutants tag, these
// become variables that tests set to known-broken variants (mutants.go);
// here they are false constants, so the branches that read them are
// compiled out.
const (
	brokenAmountClaims  = false
	brokenLevelPerMerge = false
	brokenTxnNoRecord   = false
	brokenTxnNoDeadline = false
	brokenPlacedNoNeeds = false
)
