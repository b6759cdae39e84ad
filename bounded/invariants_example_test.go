package bounded_test

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
)

// A well-formed encoding of a state no writer produces (an actor that
// credited 1 and debited 5: the value −4 is below the bound 0) is refused,
// and the error names the invariant it breaks.
func ExampleInvariantError() {
	data, _ := hex.DecodeString("93a7626f756e646564019300a09197a161010105009090")
	_, err := bounded.Decode(data, 0)
	var ie *bounded.InvariantError
	fmt.Println(errors.Is(err, crdt.ErrCorruptEncoding), errors.As(err, &ie) && ie.Invariant == bounded.InvValueAtLeastBound)
	fmt.Println(ie.Invariant)
	// Output:
	// true true
	// value-at-least-bound
}
