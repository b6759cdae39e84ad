package tpncounter_test

import (
	"fmt"
	"time"

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
