package ledgertest_test

import (
	"fmt"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/store"
)

// A SweepStore is a Siblings store that also deletes siblings
// (store.SiblingDeleter), which ledger.ExpireRecords needs and
// ExpireInterleavings runs on. A store that cannot delete, such as a
// records store whose values expire by a TTL, is not one.
func ExampleSweepStore() {
	plain := struct{ store.Siblings }{memory.NewSiblings()} // Siblings methods only
	for _, st := range []store.Siblings{memory.NewSiblings(), plain} {
		_, ok := st.(ledgertest.SweepStore)
		fmt.Println(ok)
	}
	// Output:
	// true
	// false
}
