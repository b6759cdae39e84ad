package memory_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance/balancetest"
	"github.com/counterkit/counterkit/store"
)

func TestPartitionsBalance(t *testing.T) {
	balancetest.Run(t, func(*testing.T) store.Partitions { return memory.NewPartitions() })
}
