package tpncounter_test

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

func show(c *tpncounter.Counter, actors ...crdt.ActorID) {
	p := c.Positive()
	for _, a := range actors {
		e, _ := p.Entry(a)
		fmt.Printf("  %s: total %d, history %v\n", a, e.Total, e.History)
	}
}

// Six credits of 10 with a history of 3: the oldest fold into the total.
// Apply folds before it appends, so txn3 is still held after the sixth
// credit; a Find (Compact) folds it.
func ExampleCounter_historyLength() {
	c, _ := tpncounter.New(tpncounter.Options{HistoryLength: 3})
	for i := 1; i <= 6; i++ {
		c.Apply("player_2", crdt.TxnID(fmt.Sprintf("txn%d", i)), 10)
	}
	fmt.Println(c.Value(), c.HasTransaction("txn1"), c.HasTransaction("txn2"), c.HasTransaction("txn3"))
	c.Compact("player_2")
	fmt.Println(c.Value(), c.HasTransaction("txn3"), c.HasTransaction("txn4"), c.HasTransaction("txn5"), c.HasTransaction("txn6"))
	// A late retry of a folded transaction is still recognised.
	out, _ := c.Apply("player_2", "txn1", 10)
	fmt.Println(out, c.Value())
	// Output:
	// 60 false false true
	// 60 false true true true
	// duplicate (folded) 60
}

// Two actors write txn1 concurrently (siblings); the
// merged value counts it once. 150.
func ExampleCounter_approach1() {
	actor1, actor2 := &tpncounter.Counter{}, &tpncounter.Counter{}
	actor1.Apply("actor1", "txn1", 50)
	actor2.Apply("actor2", "txn1", 50)
	actor2.Apply("actor2", "txn2", 100)
	actor1.Merge(actor2)
	fmt.Println(actor1.Value())
	// Output: 150
}

// One transaction kept per actor (history length 1). Apply keeps
// history+1 entries until the next write or Find, so the one-per-actor shape
// appears after Compact; the total, 160, is the same either way.
func ExampleCounter_approach2a() {
	c, _ := tpncounter.New(tpncounter.Options{HistoryLength: 1})
	c.Apply("Actor1", "txn1", 50)
	out, _ := c.Apply("Actor2", "txn1", 50) // already written: ignored
	fmt.Println(out)
	c.Apply("Actor2", "txn2", 100)
	c.Apply("Actor2", "txn3", 10)
	c.Compact("Actor2")
	show(c, "Actor1", "Actor2")
	fmt.Println(c.Value())
	// Output:
	// duplicate
	//   Actor1: total 0, history [{txn1 50}]
	//   Actor2: total 100, history [{txn3 10}]
	// 160
}

// A history of 5 transactions per actor: 330.
func ExampleCounter_approach2b() {
	c, _ := tpncounter.New(tpncounter.Options{HistoryLength: 5})
	c.Apply("Actor1", "txn1", 50)
	c.Apply("Actor1", "txn2", 10)
	c.Apply("Actor1", "txn3", 100)
	c.Apply("Actor2", "txn1", 50) // duplicate
	c.Apply("Actor2", "txn4", 100)
	c.Apply("Actor1", "txn5", 20)
	c.Apply("Actor1", "txn6", 20)
	c.Apply("Actor1", "txn7", 30)
	c.Compact("Actor1")
	show(c, "Actor1", "Actor2")
	fmt.Println(c.Value())
	// Output:
	//   Actor1: total 50, history [{txn2 10} {txn3 100} {txn5 20} {txn6 20} {txn7 30}]
	//   Actor2: total 0, history [{txn4 100}]
	// 330
}

// Request ids unique only per actor. Transaction ids are
// global, so each actor namespaces its own; the retry of request1 is
// ignored. 260.
func ExampleCounter_approach3() {
	c, _ := tpncounter.New(tpncounter.Options{HistoryLength: 1})
	c.Apply("Actor1", "Actor1/request1", 50)
	out, _ := c.Apply("Actor1", "Actor1/request1", 50) // the retry after an error
	c.Apply("Actor1", "Actor1/request2", 100)
	c.Apply("Actor2", "Actor2/request3", 10)
	c.Apply("Actor2", "Actor2/request4", 100)
	fmt.Println(out, c.Value())
	// Output: duplicate 260
}

// Debits live in the N half; the value is P − N.
func ExampleCounter_debit() {
	var c tpncounter.Counter
	c.Apply("till-1", "sale-1", 250)
	c.Apply("till-1", "refund-1", -40)
	_, err := c.Apply("till-2", "refund-1", 40) // same id, other sign
	fmt.Println(c.Value(), err)
	// Output: 210 counterkit: conflicting amounts for one transaction id: transaction "refund-1" has amount -40, retried with 40
}

// A GCounter on its own counts grow-only transactions.
func ExampleGCounter() {
	var g tpncounter.GCounter
	g.Apply("a", "t1", 5)
	g.Apply("b", "t1", 5) // the same transaction through another actor
	g.Apply("b", "t2", 3)
	fmt.Println(g.Value(), g.Status("t1"), g.Actors())
	// Output: 8 in history [a b]
}

// Outcomes and statuses print their names.
func ExampleOutcome() {
	fmt.Println(tpncounter.Applied, tpncounter.Duplicate, tpncounter.DuplicateFolded)
	// Output: applied duplicate duplicate (folded)
}

// Status reports where a transaction is known.
func ExampleStatus() {
	c, _ := tpncounter.New(tpncounter.Options{HistoryLength: 1})
	c.Apply("a", "t1", 1)
	c.Apply("a", "t2", 1)
	c.Apply("a", "t3", 1)
	fmt.Println(c.Status("t1"), c.Status("t3"), c.Status("t9"))
	// Output: folded in history unknown
}

// Options select the history length; the zero value means the defaults.
func ExampleOptions() {
	c, _ := tpncounter.New(tpncounter.Options{})
	fmt.Println(c.Options().HistoryLength, c.Options().FoldedLength, c.Options().MaxActors)
	// Output: 10 10 4096
}

// Entry and Txn describe one actor's part of a half.
func ExampleEntry() {
	var g tpncounter.GCounter
	g.Apply("a", "t1", 5)
	e, _ := g.Entry("a")
	fmt.Printf("seq %d, total %d, history %+v, folded %+v, forgot anything timed: %t\n", e.Seq, e.Total, e.History, e.Folded, !e.Forgot.IsZero())
	// Output: seq 1, total 0, history [{ID:t1 Amount:5}], folded [], forgot anything timed: false
}
