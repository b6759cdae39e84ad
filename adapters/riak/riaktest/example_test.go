package riaktest_test

import (
	"fmt"
	"time"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// A FakeServer is driven through the real riak-go-client. Here a write that
// lands but whose response is dropped reaches the client as a timeout.
func ExampleFakeServer() {
	srv, err := riaktest.NewFakeServer(riaktest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	_ = srv.CreateBucketType("ledgers", riaktest.BucketTypeProps{AllowMult: true})

	node, _ := riakc.NewNode(&riakc.NodeOptions{RemoteAddress: srv.Addr(), RequestTimeout: 500 * time.Millisecond})
	cl, _ := riakc.NewCluster(&riakc.ClusterOptions{Nodes: []*riakc.Node{node}, ExecutionAttempts: 1})
	_ = cl.Start()
	defer cl.Stop()

	srv.InjectFault(riaktest.OpPut, riaktest.DropResponse, 1)
	cmd, _ := riakc.NewStoreValueCommandBuilder().WithBucketType("ledgers").WithBucket("b").WithKey("k").
		WithContent(&riakc.Object{Value: []byte("v")}).Build()
	err = cl.Execute(cmd)
	fmt.Println("client error:", err != nil)
	fmt.Printf("stored anyway: %q\n", srv.Values("ledgers", "b", "k"))
	fmt.Println("puts received:", srv.Requests(riaktest.OpPut))
	// Output:
	// client error: true
	// stored anyway: ["v"]
	// puts received: 1
}

// VClock is the version vector the double encodes into vclock bytes.
func ExampleVClock() {
	a := riaktest.VClock{"vnode-0": 2, "vnode-1": 1}
	b := riaktest.VClock{"vnode-0": 1, "vnode-1": 3}
	fmt.Println(a.Descends(b), b.Descends(a), a.Join(b))
	fmt.Println(a.Covers(riaktest.Dot{Vnode: "vnode-0", Counter: 2}))

	bytes, _ := a.MarshalBinary()
	var back riaktest.VClock
	_ = back.UnmarshalBinary(bytes)
	fmt.Println(back.Equal(a))
	// Output:
	// false false {vnode-0:2 vnode-1:3}
	// true
	// true
}

// Faults say whether the request takes effect before the failure.
func ExampleFault() {
	for _, f := range []riaktest.Fault{riaktest.Refuse, riaktest.CloseBeforeApply, riaktest.DropResponse, riaktest.CloseAfterApply, riaktest.TimeoutAfterApply} {
		fmt.Println(f, f.Applies())
	}
	// Output:
	// refuse false
	// close-before-apply false
	// drop-response true
	// close-after-apply true
	// timeout-after-apply true
}

// SetFaultFunc injects faults by rule, for example on one key only.
func ExampleFakeServer_SetFaultFunc() {
	srv, _ := riaktest.NewFakeServer(riaktest.Options{})
	defer srv.Close()
	srv.SetFaultFunc(func(op riaktest.Op, key string) riaktest.Fault {
		if op == riaktest.OpPut && key == "hot" {
			return riaktest.Refuse
		}
		return riaktest.NoFault
	})
	node, _ := riakc.NewNode(&riakc.NodeOptions{RemoteAddress: srv.Addr()})
	cl, _ := riakc.NewCluster(&riakc.ClusterOptions{Nodes: []*riakc.Node{node}, ExecutionAttempts: 1})
	_ = cl.Start()
	defer cl.Stop()
	for _, key := range []string{"hot", "cold"} {
		cmd, _ := riakc.NewStoreValueCommandBuilder().WithBucket("b").WithKey(key).
			WithContent(&riakc.Object{Value: []byte("v")}).Build()
		err := cl.Execute(cmd)
		fmt.Println(key, err != nil, len(srv.Values("default", "b", key)))
	}
	fmt.Println(srv.Requests(riaktest.OpPut), "puts")
	// Output:
	// hot true 0
	// cold false 1
	// 2 puts
}
