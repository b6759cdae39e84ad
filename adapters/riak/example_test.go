package riak_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/statestore"
)

// A ledger stored in Riak: credits and debits with transaction ids, a retry
// that counts once, and a write whose response was lost.
//
// This example runs against the Riak named by RIAK_ADDR (host:port of its
// protocol-buffers listener), in the bucket type named by RIAK_BUCKET_TYPE,
// and, when RIAK_ADDR is not set, against the in-process test double, so it
// always runs.
func Example() {
	ctx := context.Background()
	addr, timeout := os.Getenv("RIAK_ADDR"), 2*time.Second
	// Created once per cluster with
	//   riak admin bucket-type create counterkit '{"props":{"allow_mult":true}}'
	//   riak admin bucket-type activate counterkit
	bucketType := os.Getenv("RIAK_BUCKET_TYPE")
	var srv *riaktest.FakeServer
	if addr == "" {
		timeout = time.Second // the double answers at once, or never
		var err error
		if srv, err = riaktest.NewFakeServer(riaktest.Options{}); err != nil {
			panic(err)
		}
		defer srv.Close()
		addr, bucketType = srv.Addr(), "counterkit"
		if err := srv.CreateBucketType(bucketType, riaktest.BucketTypeProps{AllowMult: true}); err != nil {
			panic(err)
		}
	}
	cl, err := riak.NewCluster(ctx, timeout, addr)
	if err != nil {
		panic(err)
	}
	defer cl.Stop()

	opts := riak.Options{BucketType: bucketType, Bucket: "example-ledgers", RetryCount: 3}
	if bucketType == "" {
		// Riak's default type works once allow_mult=true, but without
		// dotted version vectors (see riak.ErrDefaultBucketType).
		if err := riak.ConfigureBucket(ctx, cl, "", opts.Bucket); err != nil {
			panic(err)
		}
		opts.AllowDefaultBucketType = true
	}
	siblings, err := riak.NewSiblings(ctx, cl, opts)
	if err != nil {
		panic(err)
	}
	key := "player-2-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	web1, _ := ledger.New(siblings, key, ledger.Options{Actor: "web-1"})
	web2, _ := ledger.New(siblings, key, ledger.Options{Actor: "web-2"})

	r, _ := web1.Credit(ctx, "txn1", 50)
	fmt.Println(r.Outcome, r.Value)
	// The application timed out on web-1 and hands txn1 to web-2.
	r, _ = web2.Credit(ctx, "txn1", 50)
	fmt.Println(r.Outcome, r.Value)

	if srv != nil {
		// The store applies the next write but the response is lost; the
		// adapter resends it, and the ledger still counts it once.
		srv.InjectFault(riaktest.OpPut, riaktest.DropResponse, 1)
	}
	r, _ = web2.Debit(ctx, "txn2", 20)
	fmt.Println(r.Outcome, r.Value)

	v, _ := web1.Value(ctx)
	fmt.Println("value:", v)
	if _, token, err := siblings.Fetch(ctx, key); err == nil {
		_ = siblings.Delete(ctx, key, token)
	}
	// Output:
	// applied 50
	// duplicate 50
	// applied 30
	// value: 30
}

// A state-based counter in Riak: package statestore works over any
// store.Siblings, riak.Siblings included. Each Update is one fetch and one
// store that supersedes the siblings it merged; a Save adds a state beside
// the others, and the next Load merges them.
func Example_stateCounter() {
	ctx := context.Background()
	srv, _ := riaktest.NewFakeServer(riaktest.Options{})
	defer srv.Close()
	_ = srv.CreateBucketType("counterkit", riaktest.BucketTypeProps{AllowMult: true})
	cl, _ := riak.NewCluster(ctx, time.Second, srv.Addr())
	defer cl.Stop()
	siblings, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: "counterkit", Bucket: "counters"})
	if err != nil {
		panic(err)
	}

	for _, actor := range []crdt.ActorID{"web-1", "web-2", "web-1"} {
		_, err := statestore.Update(ctx, siblings, "visits", actor, func(c *gcounter.Counter) error {
			return c.Increment(actor, 5)
		})
		if err != nil {
			panic(err)
		}
	}
	// A state saved twice (say, resent after an ambiguous write) counts once.
	c := gcounter.New()
	_ = c.Increment("batch", 100)
	_ = statestore.Save(ctx, siblings, "visits", "batch", c)
	_ = statestore.Save(ctx, siblings, "visits", "batch", c)

	total, _ := statestore.Load[gcounter.Counter](ctx, siblings, "visits")
	fmt.Println(total.Value())
	// Output:
	// 115
}

// Two writers that read the same version write concurrently: Riak keeps
// both as siblings. The next write that read both, with their vclock,
// collapses them.
func ExampleSiblings() {
	ctx := context.Background()
	srv, _ := riaktest.NewFakeServer(riaktest.Options{})
	defer srv.Close()
	// Like `riak admin bucket-type create counterkit '{"props":{"allow_mult":true}}'`.
	_ = srv.CreateBucketType("counterkit", riaktest.BucketTypeProps{AllowMult: true})
	cl, _ := riak.NewCluster(ctx, time.Second, srv.Addr())
	defer cl.Stop()
	s, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: "counterkit", Bucket: "ledgers"})
	if err != nil {
		panic(err)
	}

	_ = s.Put(ctx, "k", "a", []byte("v0"), nil)
	_, token, _ := s.Fetch(ctx, "k")
	_ = s.Put(ctx, "k", "a", []byte("from a"), token)
	_ = s.Put(ctx, "k", "b", []byte("from b"), token)
	values, token, _ := s.Fetch(ctx, "k")
	fmt.Println("siblings after the race:", len(values))

	_ = s.Put(ctx, "k", "a", []byte("merged"), token)
	values, _, _ = s.Fetch(ctx, "k")
	fmt.Printf("after writing back the merge: %q\n", values)
	// Output:
	// siblings after the race: 2
	// after writing back the merge: ["merged"]
}

// NewSiblings refuses a bucket that would silently drop concurrent writes, and
// Riak's default bucket type unless told otherwise.
func ExampleCheckBucket() {
	ctx := context.Background()
	srv, _ := riaktest.NewFakeServer(riaktest.Options{})
	defer srv.Close()
	_ = srv.CreateBucketType("counterkit", riaktest.BucketTypeProps{AllowMult: true})
	cl, _ := riak.NewCluster(ctx, time.Second, srv.Addr())
	defer cl.Stop()

	// A created bucket type: allow_mult=true and dotted version vectors.
	fmt.Println(riak.CheckBucket(ctx, cl, "counterkit", "ledgers"))

	// Riak's "default" bucket type has allow_mult=false...
	_, err := riak.NewSiblings(ctx, cl, riak.Options{Bucket: "fresh"})
	fmt.Println(errors.Is(err, crdt.ErrMisconfiguredStore), errors.Is(err, riak.ErrDefaultBucketType))

	// ...which ConfigureBucket fixes, but no dotted version vectors.
	_ = riak.ConfigureBucket(ctx, cl, "", "fresh")
	err = riak.CheckBucket(ctx, cl, "", "fresh")
	fmt.Println(errors.Is(err, crdt.ErrMisconfiguredStore), errors.Is(err, riak.ErrDefaultBucketType))
	_, err = riak.NewSiblings(ctx, cl, riak.Options{Bucket: "fresh", AllowDefaultBucketType: true})
	fmt.Println(err)
	// Output:
	// <nil>
	// true false
	// true true
	// <nil>
}

// An ambiguous failure is retried; without retries the caller learns that
// the outcome is unknown, and can still reach the driver's error.
func ExampleError() {
	ctx := context.Background()
	srv, _ := riaktest.NewFakeServer(riaktest.Options{})
	defer srv.Close()
	_ = srv.CreateBucketType("counterkit", riaktest.BucketTypeProps{AllowMult: true})
	cl, _ := riak.NewCluster(ctx, time.Second, srv.Addr())
	defer cl.Stop()
	once, _ := riak.NewSiblings(ctx, cl, riak.Options{BucketType: "counterkit", Bucket: "ledgers", RetryCount: riak.NoRetries})
	retrying, _ := riak.NewSiblings(ctx, cl, riak.Options{BucketType: "counterkit", Bucket: "ledgers", RetryCount: 3})

	// The double applies the write, then answers "timeout".
	srv.InjectFault(riaktest.OpPut, riaktest.TimeoutAfterApply, 1)
	err := once.Put(ctx, "k", "a", []byte("v"), nil)
	var rerr *riak.Error
	fmt.Println(errors.Is(err, crdt.ErrAmbiguousWrite), errors.As(err, &rerr), rerr.Attempts)

	srv.InjectFault(riaktest.OpPut, riaktest.TimeoutAfterApply, 1)
	fmt.Println(retrying.Put(ctx, "k2", "a", []byte("v"), nil))
	// Output:
	// true true 1
	// <nil>
}

// Options choose the bucket and the retry policy; zero values are defaults.
func ExampleOptions() {
	opts := riak.Options{
		BucketType: "ledgers",  // created with riak admin bucket-type create; "" means "default"
		Bucket:     "balances", // required
		RetryCount: 5,          // 0 means DefaultRetryCount, NoRetries sends once
	}
	fmt.Println(opts.Bucket, riak.DefaultRetryCount, riak.ContentType)
	// Output:
	// balances 3 application/x-counterkit+msgpack
}
