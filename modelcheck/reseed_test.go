//go:build !go1.26

package modelcheck

import "testing"

// reseed does nothing before Go 1.26 (testing/cryptotest): incarnations
// are then random, and a scope whose calls depend on them (the ledger's
// retirement pass, when records have fates, under COUNTERKIT_CASES) may
// report a schedule that does not replay.
func reseed(*testing.T) {}
