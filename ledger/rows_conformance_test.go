package ledger_test

import (
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

// TestConformanceOneRowPerActor runs the ledger's behaviour suite, which
// every backend runs, on a store with one row per actor (ledger.RowStore,
// as on Cassandra). Its Puts take their write time as they land: a Put
// held in flight and landing late replaces its writer's newer row, a
// stricter store than Cassandra.
func TestConformanceOneRowPerActor(t *testing.T) {
	ledgertest.Run(t, func(*testing.T) store.Siblings { return &ledger.RowStore{} })
}

// TestRetirementRecordRaceEnumerated: every scenario of the retirement
// record race, the three-writer one too (ledgertest.RetirementRecordRace),
// on a RowStore, the stricter store, and with COUNTERKIT_CASES set also on
// the memory store (the behaviour suite, ledgertest.Run, which every
// backend runs, runs the two-writer scenarios on both).
func TestRetirementRecordRaceEnumerated(t *testing.T) {
	if testing.Short() {
		t.Skip("2,585 schedules: 3.5 s, half a minute with -race; run without -short")
	}
	if proptest.Scale(1) > 1 {
		t.Run("memory", func(t *testing.T) { ledgertest.RetirementRecordRace(t, memory.NewSiblings(), "k") })
	}
	t.Run("one row per actor", func(t *testing.T) { ledgertest.RetirementRecordRace(t, &ledger.RowStore{}, "k") })
}
