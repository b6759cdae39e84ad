//go:build go1.26

package modelcheck

import (
	"testing"
	"testing/cryptotest"
)

// reseed restarts crypto/rand's stream from one seed. The drivers draw
// their writers' incarnations from it, and the ledger's retirement pass
// starts at an actor chosen by its writer's id, so an execution replays
// the same calls in the same order only when every execution draws the
// same incarnations.
func reseed(t *testing.T) { cryptotest.SetGlobalRandom(t, 1) }
