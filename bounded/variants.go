//go:build !counterkit_mutants

package bounded

// The broken variants (mutants.go) off: false constants, compiled out.
const (
	brokenNoRecordLookup = false
	brokenNoHoldBack     = false
)
