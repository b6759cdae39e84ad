package crdt_test

import (
	"errors"
	"fmt"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/pncounter"
)

// An ActorID is usually a stable name such as a host or service instance.
// Ids that come from outside (configuration, a request) are checked with
// Validate, or built with NewActorID, before a counter uses them.
func ExampleActorID() {
	for _, s := range []string{"web-1", "", "web\t2"} {
		a := crdt.ActorID(s)
		err := a.Validate()
		fmt.Printf("%q valid=%v invalid-actor=%v\n", a.String(), err == nil, errors.Is(err, crdt.ErrInvalidActor))
	}

	var c gcounter.Counter
	_ = c.Increment(crdt.ActorID("web-1"), 2)
	fmt.Println(c.Get("web-1"))
	// Output:
	// "web-1" valid=true invalid-actor=false
	// "" valid=false invalid-actor=true
	// "web\t2" valid=false invalid-actor=true
	// 2
}

// Code that stores or ships states can work with any Codec. A failed
// UnmarshalBinary wraps a sentinel and leaves the receiver as it was.
func ExampleCodec() {
	roundTrip := func(dst, src crdt.Codec) error {
		data, err := src.MarshalBinary()
		if err != nil {
			return err
		}
		return dst.UnmarshalBinary(data)
	}

	g := gcounter.New()
	_ = g.Increment("web-1", 5)
	p := pncounter.New()
	_ = p.Apply("till-1", -3)

	var g2 gcounter.Counter
	var p2 pncounter.Counter
	fmt.Println(roundTrip(&g2, g), g2.Value())
	fmt.Println(roundTrip(&p2, p), p2.Value())

	// A pncounter encoding is not a gcounter one, and truncated bytes are corrupt.
	fmt.Println(errors.Is(roundTrip(&g2, p), crdt.ErrTypeMismatch))
	var dst crdt.Codec = &g2
	err := dst.UnmarshalBinary([]byte{0x83, 0x00})
	fmt.Println(errors.Is(err, crdt.ErrCorruptEncoding), g2.Value())
	// Output:
	// <nil> 5
	// <nil> -3
	// true
	// true 5
}

// converge merges every replica into every other, written once for any
// State type.
func converge[T crdt.State[T]](replicas ...T) error {
	for _, dst := range replicas {
		for _, src := range replicas {
			if err := dst.Merge(src); err != nil {
				return err
			}
		}
	}
	return nil
}

// Generic code over counters uses State; T is the counter's pointer type.
func ExampleState() {
	a, b := gcounter.New(), gcounter.New()
	_ = a.Increment("a", 2)
	_ = b.Increment("b", 3)
	snapshot := a.Clone()

	if err := converge(a, b); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Value(), b.Value(), a.Equal(b))
	fmt.Println(snapshot.Value(), snapshot.Equal(a)) // Clone shares nothing

	x, y := pncounter.New(), pncounter.New()
	_ = x.Apply("x", 10)
	_ = y.Apply("y", -4)
	_ = converge(x, y)
	fmt.Println(x.Value(), x.Equal(y))
	// Output:
	// 5 5 true
	// 2 false
	// 6 true
}

// Reporting code that only needs a number takes a Valuer.
func ExampleValuer() {
	views := gcounter.New()
	_ = views.Increment("web-1", 120)
	stock := pncounter.New()
	_ = stock.Apply("warehouse", 40)
	_ = stock.Apply("till-1", -15)

	for _, c := range []struct {
		name string
		v    crdt.Valuer
	}{{"views", views}, {"stock", stock}} {
		fmt.Println(c.name, c.v.Value())
	}
	// Output:
	// views 120
	// stock 25
}
