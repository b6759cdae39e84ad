package ledger_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/store"
)

// TestBehavioursOnMemory runs the ledger's behaviours over the in-memory
// sibling store; every other backend runs the same suite.
func TestBehavioursOnMemory(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T) store.Siblings { return memory.NewSiblings() })
}
