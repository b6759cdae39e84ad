package gcounter_test

import (
	"fmt"

	"github.com/counterkit/counterkit/gcounter"
)

// Stats tracks size as actors join: an actor costs space forever, while
// more increments by a known actor cost (almost) none.
func ExampleStats() {
	var c gcounter.Counter
	_ = c.Increment("web-1", 1)
	before := c.Stats()
	_ = c.Increment("web-1", 1)
	same := c.Stats()
	_ = c.Increment("web-2", 1)
	after := c.Stats()
	data, _ := c.MarshalBinary()
	fmt.Printf("%+v\n%+v\n%+v\n", before, same, after)
	fmt.Println(after.EncodedSize == len(data))
	// Output:
	// {Actors:1 EncodedSize:21}
	// {Actors:1 EncodedSize:21}
	// {Actors:2 EncodedSize:26}
	// true
}
