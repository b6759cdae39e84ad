package riaktest_test

import (
	"fmt"
	"sync"
	"time"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// A Backend is a named storage backend of the fake server, listed in
// Options.Backends; a bucket type picks one with BucketTypeProps.Backend.
// A backend with an Expiry drops objects not written for that long. Here
// the bucket type "sessions" uses the backend "expiring" (one minute), and
// Options.Clock gives the server a clock moved by hand: the value written
// is read back, still read a minute later, and gone one second after that
// (the server counts whole seconds).
func ExampleBackend() {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }

	srv, err := riaktest.NewFakeServer(riaktest.Options{
		Clock:    clock,
		Backends: map[string]riaktest.Backend{"expiring": {Expiry: time.Minute}},
	})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	if err := srv.CreateBucketType("sessions", riaktest.BucketTypeProps{AllowMult: true, Backend: "expiring"}); err != nil {
		panic(err)
	}
	cl := exampleCluster(srv)
	defer cl.Stop()

	if err := blindPut(cl, "sessions", "k", "alice"); err != nil {
		panic(err)
	}
	read := func() {
		cmd, err := riakc.NewFetchValueCommandBuilder().WithBucketType("sessions").WithBucket("b").WithKey("k").Build()
		if err != nil {
			panic(err)
		}
		if err := cl.Execute(cmd); err != nil {
			panic(err)
		}
		resp := cmd.(*riakc.FetchValueCommand).Response
		if resp.IsNotFound {
			fmt.Println("not found")
			return
		}
		fmt.Printf("found %q\n", resp.Values[0].Value)
	}
	read()
	advance(time.Minute)
	read()
	advance(time.Second)
	read()
	// Output:
	// found "alice"
	// found "alice"
	// not found
}
