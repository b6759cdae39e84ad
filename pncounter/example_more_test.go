package pncounter_test

import (
	"fmt"

	"github.com/counterkit/counterkit/pncounter"
)

// Stats counts actors per half: an actor that only decrements appears in
// N alone, one that does both appears in both halves but once in Actors.
func ExampleStats() {
	var c pncounter.Counter
	_ = c.Increment("shop", 10)
	_ = c.Decrement("shop", 3)
	_ = c.Decrement("returns", 2)
	s := c.Stats()
	data, _ := c.MarshalBinary()
	fmt.Println(s.Actors, s.PActors, s.NActors, s.EncodedSize == len(data), c.Value())
	// Output: 2 1 2 true 5
}
