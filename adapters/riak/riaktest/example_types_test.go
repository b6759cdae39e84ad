package riaktest_test

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/adapters/riak/riaktest"
)

// exampleCluster starts a riak-go-client cluster of one node on srv that
// tries each command once; stop it with Stop.
func exampleCluster(srv *riaktest.FakeServer) *riakc.Cluster {
	node, err := riakc.NewNode(&riakc.NodeOptions{RemoteAddress: srv.Addr(), RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		panic(err)
	}
	cl, err := riakc.NewCluster(&riakc.ClusterOptions{Nodes: []*riakc.Node{node}, ExecutionAttempts: 1})
	if err != nil {
		panic(err)
	}
	if err := cl.Start(); err != nil {
		panic(err)
	}
	return cl
}

// blindPut stores value under typ/b/key with no vclock, as a writer that
// never read the key, and returns the client's error.
func blindPut(cl *riakc.Cluster, typ, key, value string) error {
	cmd, err := riakc.NewStoreValueCommandBuilder().WithBucketType(typ).WithBucket("b").WithKey(key).
		WithContent(&riakc.Object{Value: []byte(value)}).Build()
	if err != nil {
		return err
	}
	return cl.Execute(cmd)
}

// BucketTypeProps decide what concurrent writes leave: with AllowMult both
// blind writes survive as siblings, without it the last one wins; Riak's
// creation rules are checked.
func ExampleBucketTypeProps() {
	srv, err := riaktest.NewFakeServer(riaktest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	fmt.Println(srv.CreateBucketType("siblings", riaktest.BucketTypeProps{AllowMult: true}))
	fmt.Println(srv.CreateBucketType("lww", riaktest.BucketTypeProps{LastWriteWins: true, DisableDVV: true}))
	err = srv.CreateBucketType("bad", riaktest.BucketTypeProps{LastWriteWins: true})
	fmt.Println("last_write_wins with dvv refused:", err != nil)

	cl := exampleCluster(srv)
	defer cl.Stop()
	for _, typ := range []string{"siblings", "lww"} {
		_ = blindPut(cl, typ, "k", "from a")
		_ = blindPut(cl, typ, "k", "from b")
		fmt.Printf("%s: %q\n", typ, srv.Values(typ, "b", "k"))
	}
	// Output:
	// <nil>
	// <nil>
	// last_write_wins with dvv refused: true
	// siblings: ["from a" "from b"]
	// lww: ["from b"]
}

// A Dot names the write that made a sibling; the client sees it as the
// sibling's vtag, and a vclock covers it once the holder has seen it.
func ExampleDot() {
	srv, err := riaktest.NewFakeServer(riaktest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	_ = srv.CreateBucketType("ledgers", riaktest.BucketTypeProps{AllowMult: true})
	cl := exampleCluster(srv)
	defer cl.Stop()

	_ = blindPut(cl, "ledgers", "k", "first")
	_, seen := srv.Siblings("ledgers", "b", "k") // the context after the first write
	_ = blindPut(cl, "ledgers", "k", "second")
	n, now := srv.Siblings("ledgers", "b", "k")

	cmd, _ := riakc.NewFetchValueCommandBuilder().WithBucketType("ledgers").WithBucket("b").WithKey("k").Build()
	if err := cl.Execute(cmd); err != nil {
		panic(err)
	}
	fmt.Println(n, "siblings")
	for _, v := range cmd.(*riakc.FetchValueCommand).Response.Values {
		vnode, counter, _ := strings.Cut(v.VTag, ".") // the vtag is Dot.String
		c, _ := strconv.ParseUint(counter, 10, 64)
		d := riaktest.Dot{Vnode: vnode, Counter: c}
		fmt.Println(string(v.Value), d, "seen before:", seen.Covers(d), "seen now:", now.Covers(d))
	}
	// Output:
	// 2 siblings
	// first vnode-0@1.1 seen before: true seen now: true
	// second vnode-1@1.1 seen before: false seen now: true
}

// Op classifies requests: the double counts each kind and injects faults
// by kind, here refusing the next get only.
func ExampleOp() {
	srv, err := riaktest.NewFakeServer(riaktest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	cl := exampleCluster(srv)
	defer cl.Stop()

	srv.InjectFault(riaktest.OpGet, riaktest.Refuse, 1)
	_ = blindPut(cl, "default", "k", "v")
	for range 2 {
		cmd, _ := riakc.NewFetchValueCommandBuilder().WithBucket("b").WithKey("k").Build()
		fmt.Println("get failed:", cl.Execute(cmd) != nil)
	}
	del, _ := riakc.NewDeleteValueCommandBuilder().WithBucket("b").WithKey("k").Build()
	_ = cl.Execute(del)
	for _, op := range []riaktest.Op{riaktest.OpGet, riaktest.OpPut, riaktest.OpDelete} {
		fmt.Println(op, srv.Requests(op))
	}
	// Output:
	// get failed: true
	// get failed: false
	// get 2
	// put 1
	// delete 1
}

// Options bound what the double accepts as Riak does: here at most two
// siblings per object, and a deleted key reaped at once.
func ExampleOptions() {
	srv, err := riaktest.NewFakeServer(riaktest.Options{MaxSiblings: 2, DeleteMode: riaktest.ReapImmediately})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	_ = srv.CreateBucketType("ledgers", riaktest.BucketTypeProps{AllowMult: true})
	cl := exampleCluster(srv)
	defer cl.Stop()

	for _, v := range []string{"a", "b", "c"} {
		err := blindPut(cl, "ledgers", "k", v)
		n, _ := srv.Siblings("ledgers", "b", "k")
		fmt.Println("put", v, "refused:", err != nil, "siblings:", n)
	}
	fetch, _ := riakc.NewFetchValueCommandBuilder().WithBucketType("ledgers").WithBucket("b").WithKey("k").Build()
	_ = cl.Execute(fetch)
	del, _ := riakc.NewDeleteValueCommandBuilder().WithBucketType("ledgers").WithBucket("b").WithKey("k").
		WithVClock(fetch.(*riakc.FetchValueCommand).Response.VClock).Build()
	_ = cl.Execute(del)
	n, _ := srv.Siblings("ledgers", "b", "k")
	fmt.Println("after delete:", n)
	// Output:
	// put a refused: false siblings: 1
	// put b refused: false siblings: 2
	// put c refused: true siblings: 2
	// after delete: 0
}
