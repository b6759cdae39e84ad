package bounded_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded/boundedtest"
	"github.com/counterkit/counterkit/store"
)

// TestBehavioursOnMemory runs the Account's conformance suite over the
// in-memory sibling store.
func TestBehavioursOnMemory(t *testing.T) {
	boundedtest.Run(t, func(t *testing.T) store.Siblings { return memory.NewSiblings() })
}
