package pncounter_test

import (
	"fmt"

	"github.com/counterkit/counterkit/pncounter"
)

func ExampleCounter() {
	var stock pncounter.Counter // the zero value is ready to use
	_ = stock.Increment("warehouse", 10)
	_ = stock.Decrement("shop", 3)
	_ = stock.Apply("shop", -2) // a signed delta
	fmt.Println(stock.Value(), stock.Positive(), stock.Negative())
	fmt.Println(stock.Get("shop"), stock.Actors())
	// Output:
	// 5 10 5
	// -5 [shop warehouse]
}

// Three replicas take credits and debits independently, then gossip their
// states in different orders, one message twice. All three end equal.
func ExampleCounter_Merge() {
	a, b, c := pncounter.New(), pncounter.New(), pncounter.New()
	_ = a.Apply("a", 100)
	_ = b.Apply("b", -30)
	_ = b.Apply("b", 5)
	_ = c.Apply("c", -1)

	_ = b.Merge(c)
	_ = a.Merge(b)
	_ = c.Merge(a)
	_ = b.Merge(a)
	_ = b.Merge(a) // duplicate delivery: no effect

	fmt.Println(a.Value(), b.Value(), c.Value())
	fmt.Println(a.Equal(b), b.Equal(c))
	// Output:
	// 74 74 74
	// true true
}

func ExampleCounter_Apply() {
	var c pncounter.Counter
	fmt.Println(c.Apply("a", -9223372036854775808)) // math.MinInt64 has no positive twin
	fmt.Println(c.Apply("a", -9223372036854775807), c.Value())
	// Output:
	// pncounter: decrement of -9223372036854775808 by "a": counterkit: invalid amount (must be >= 0; math.MinInt64 cannot be negated)
	// <nil> -9223372036854775807
}

func ExampleCounter_Stats() {
	var c pncounter.Counter
	_ = c.Apply("a", 5)
	_ = c.Apply("a", -2)
	_ = c.Apply("b", -1)
	fmt.Printf("%+v\n", c.Stats())
	// Output: {Actors:2 PActors:1 NActors:2 EncodedSize:25}
}

// A writer that updates its own actor many times takes a Handle once: Add
// skips the lookups Increment makes.
func ExampleCounter_Handle() {
	c := pncounter.New()
	h := c.Handle("till-1")
	for _, amount := range []int64{50, -20, 5} {
		if err := h.Add(amount); err != nil {
			panic(err)
		}
	}
	fmt.Println(c.Value(), c.Positive(), c.Negative())
	// Output:
	// 35 55 20
}
