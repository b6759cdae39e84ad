//go:build !go1.25

package ledger_test

import "testing"

func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Skip("needs Go 1.25 or newer (testing/synctest)")
}

func inTurns(intn func(int) int, lanes []*lane, fs []func()) {
	panic("inTurns needs Go 1.25 or newer")
}
