//go:build counterkit_mutants

package bounded

// Known-broken variants of the Account's records (counterkit_mutants tag
// only), switched on by tests to show the simulation catches them;
// process-wide, so those tests do not run in parallel. Untagged, they are
// false constants (variants.go).
var (
	// brokenNoRecordLookup answers calls from the state alone: a retry
	// after its transaction left every holder's window applies again.
	brokenNoRecordLookup bool
	// brokenNoHoldBack applies a transaction however many of this
	// account's writes in doubt are unrecorded, so the oldest can leave
	// its window before its record is written.
	brokenNoHoldBack bool
)
