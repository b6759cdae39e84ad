package tpncounter_test

import (
	"fmt"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

// Actors retired with a time are folded into the half's base once the
// grace period has passed: the state no longer carries them, and the value
// is unchanged.
func ExampleCounter_Fold() {
	c, _ := tpncounter.New(tpncounter.Options{})
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, _ = c.Apply("process-1", "deposit-1", 100)
	_, _ = c.Apply("process-2", "withdrawal-1", -30)
	_, _ = c.RetireAllAt(day, "process-1", "process-2")

	grace := 10 * 24 * time.Hour
	fmt.Println("folded:", c.Fold(day.Add(grace)))
	p, n := c.Bases()
	fmt.Println("value:", c.Value(), "retired:", c.Stats().Retired)
	fmt.Println("P base:", p.Cutoff.Format(time.DateOnly), p.Total)
	fmt.Println("N base:", n.Cutoff.Format(time.DateOnly), n.Total)
	// Output:
	// folded: 2
	// value: 70 retired: 0
	// P base: 2026-01-11 100
	// N base: 2026-01-11 30
}

// A base's total is a half's lifetime credits (or debits), which may pass
// int64 while the value stays small: Total then reads math.MaxInt64, and
// BigTotal the exact total.
func ExampleBase_BigTotal() {
	c, _ := tpncounter.New(tpncounter.Options{})
	day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []crdt.ActorID{"process-1", "process-2", "process-3"} {
		_, _ = c.Apply(p, crdt.TxnID("in-"+p), 1<<62)
		_, _ = c.Apply(p, crdt.TxnID("out-"+p), -1<<62)
	}
	_, _ = c.RetireAllAt(day, "process-1", "process-2", "process-3")

	fmt.Println("folded:", c.Fold(day.Add(10*24*time.Hour)))
	p, _ := c.Bases()
	fmt.Println("value:", c.Value())
	fmt.Println("P base:", p.Total, p.BigTotal())
	// Output:
	// folded: 6
	// value: 0
	// P base: 9223372036854775807 13835058055282163712
}
