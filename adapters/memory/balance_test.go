package memory_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/balance/balancetest"
)

func TestBalanceStoreConformance(t *testing.T) {
	balancetest.Run(t, func(*testing.T) balance.Store { return memory.NewBalanceStore() })
}
