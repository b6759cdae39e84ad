package memory_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/deltalog/deltalogtest"
)

func TestDeltaLogStoreConformance(t *testing.T) {
	deltalogtest.Run(t, func(*testing.T) deltalog.Store { return memory.NewDeltaLogStore(0) })
}

// Small pages exercise the resume-after-last-cell logic.
func TestDeltaLogStoreConformanceSmallPages(t *testing.T) {
	deltalogtest.Run(t, func(*testing.T) deltalog.Store { return memory.NewDeltaLogStore(3) })
}
