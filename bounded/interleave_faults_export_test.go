//go:build counterkit_mutants

package bounded

// SetBrokenNoRecordLookup switches the known-broken variant that
// answers calls from the state alone (mutants.go), for
// TestAccountInterleavingCatchesBrokenRetry.
func SetBrokenNoRecordLookup(on bool) { brokenNoRecordLookup = on }
