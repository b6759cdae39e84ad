//go:build counterkit_mutants

package bounded

// SetBrokenNoRecordLookupForReview switches the known-broken variant that
// answers calls from the state alone (mutants.go), for
// TestBoundedReviewInterleaveCatchesBrokenRetry.
func SetBrokenNoRecordLookupForReview(on bool) { brokenNoRecordLookup = on }
