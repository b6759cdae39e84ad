package main

import (
	"fmt"
	"testing"
)

// TestRunVerifiesBalances runs the example's workload, with its injected
// faults and duplicate deliveries, for several seeds; run returns an error
// when any balance differs from the sum of its distinct transactions.
func TestRunVerifiesBalances(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			if err := run(seed, 300, 5, 0.3); err != nil {
				t.Fatalf("replay: go run ./examples/ledger -seed %d -txns 300: %v", seed, err)
			}
		})
	}
}
