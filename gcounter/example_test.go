package gcounter_test

import (
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
)

func ExampleCounter() {
	var c gcounter.Counter // the zero value is ready to use
	_ = c.Increment("web-1", 3)
	_ = c.Increment("web-2", 4)
	_ = c.Increment("web-1", 1)
	fmt.Println(c.Value(), c.Get("web-1"), c.Actors())

	err := c.Increment("web-1", -1)
	fmt.Println(err)
	// Output:
	// 8 4 [web-1 web-2]
	// gcounter: increment of -1 by "web-1": counterkit: invalid amount (must be >= 0)
}

// Three replicas count page views independently, then gossip their states
// in different orders. Merging is idempotent, so replica a receiving b's
// state twice does no harm, and all three end with the same value.
func ExampleCounter_Merge() {
	a, b, c := gcounter.New(), gcounter.New(), gcounter.New()
	_ = a.Increment("a", 2)
	_ = b.Increment("b", 5)
	_ = c.Increment("c", 1)
	_ = c.Increment("c", 1)

	_ = a.Merge(b) // a hears from b
	_ = c.Merge(a) // c hears from a (and so, indirectly, b)
	_ = b.Merge(c) // b hears everything from c
	_ = a.Merge(c) // a catches up on c
	_ = a.Merge(b) // a duplicate delivery: no effect

	fmt.Println(a.Value(), b.Value(), c.Value())
	fmt.Println(a.Equal(b), b.Equal(c))
	// Output:
	// 9 9 9
	// true true
}

func ExampleCounter_MarshalBinary() {
	c := gcounter.New()
	_ = c.Increment("b", 7)
	_ = c.Increment("a", 3)
	data, _ := c.MarshalBinary()
	fmt.Printf("%d bytes, Stats says %d\n", len(data), c.Stats().EncodedSize)

	var d gcounter.Counter
	if err := d.UnmarshalBinary(data); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Value(), d.Equal(c))
	// Output:
	// 22 bytes, Stats says 22
	// 10 true
}

// Stats reports size without encoding, for watching actor growth.
func ExampleCounter_Stats() {
	var c gcounter.Counter
	for _, a := range []crdt.ActorID{"web-1", "web-2", "web-3"} {
		_ = c.Increment(a, 1000)
	}
	fmt.Printf("%+v\n", c.Stats())
	// Output: {Actors:3 EncodedSize:37}
}

// A writer that increments its own actor many times takes a Handle once:
// Add skips the lookup of the actor that Increment makes.
func ExampleCounter_Handle() {
	c := gcounter.New()
	h := c.Handle("web-1")
	for range 1000 {
		if err := h.Add(1); err != nil {
			panic(err)
		}
	}
	_ = c.Increment("web-2", 5)
	fmt.Println(c.Value(), c.Get("web-1"), h.Actor())
	// Output:
	// 1005 1000 web-1
}
