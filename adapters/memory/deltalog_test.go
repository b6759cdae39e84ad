package memory_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog/deltalogtest"
	"github.com/counterkit/counterkit/store"
)

func TestPartitionsDeltaLog(t *testing.T) {
	deltalogtest.Run(t, func(*testing.T) store.Partitions { return memory.NewPartitions() })
}

// Small pages exercise scans that resume after the last row of a page.
func TestPartitionsDeltaLogSmallPages(t *testing.T) {
	deltalogtest.Run(t, func(*testing.T) store.Partitions { return &memory.Partitions{PageSize: 3} })
}
