package crdt_test

import (
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
)

func ExampleNewActorID() {
	a, err := crdt.NewActorID("checkout-service-1")
	fmt.Println(a, err)
	_, err = crdt.NewActorID("")
	fmt.Println(errors.Is(err, crdt.ErrInvalidActor))
	// Output:
	// checkout-service-1 <nil>
	// true
}

func ExampleTxnID_Validate() {
	fmt.Println(crdt.TxnID("order-1042/payment").Validate())
	err := crdt.TxnID("bad\nid").Validate()
	fmt.Println(errors.Is(err, crdt.ErrInvalidTxnID), err)
	// Output:
	// <nil>
	// true counterkit: invalid transaction id: "bad\nid" contains a control character
}

func ExampleTypeTag() {
	// Every encoding starts with the envelope [tag, version, body].
	fmt.Println(crdt.TagGCounter, crdt.TagTPNCounter, crdt.EnvelopeLen)
	// Output: gcounter tpncounter 3
}
