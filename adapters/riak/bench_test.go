package riak_test

import (
	"context"
	"testing"

	riakc "github.com/basho/riak-go-client"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/statestore"
)

// BenchmarkUpdate measures one read-modify-write against the test double on
// loopback: the adapter (Siblings.Fetch + Siblings.Put) next to the same two
// requests issued with the bare driver, so the ratio between the two rows is
// the adapter's overhead. statestore.Update adds a gcounter
// decode/merge/encode.
// Loopback timings are noisy on a shared machine; compare rows of one run.
func BenchmarkUpdate(b *testing.B) {
	_, cl := fakeCluster(b)
	value := []byte("0123456789abcdef0123456789abcdef")

	b.Run("driver", func(b *testing.B) {
		key := uniqueKey("bench-driver")
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			get, _ := riakc.NewFetchValueCommandBuilder().WithBucketType(fakeType).WithBucket(testBucket).WithKey(key).Build()
			if err := cl.Execute(get); err != nil {
				b.Fatal(err)
			}
			vclock := get.(*riakc.FetchValueCommand).Response.VClock
			put, _ := riakc.NewStoreValueCommandBuilder().WithBucketType(fakeType).WithBucket(testBucket).WithKey(key).
				WithContent(&riakc.Object{Value: value, ContentType: riak.ContentType, VClock: vclock}).Build()
			if err := cl.Execute(put); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, withCancel := range []bool{false, true} {
		name := "Siblings"
		if withCancel {
			// A cancellable context runs each request on the driver's
			// async path so that the call can return when ctx ends.
			name = "Siblings/cancellable-ctx"
		}
		b.Run(name, func(b *testing.B) {
			s := newStore(b, cl, riak.Options{})
			key := uniqueKey("bench-store")
			c, cancel := context.WithCancel(ctx)
			defer cancel()
			if !withCancel {
				c = ctx
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_, tok, err := s.Fetch(c, key)
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Put(c, key, "bench", value, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("statestore.Update", func(b *testing.B) {
		s := newStore(b, cl, riak.Options{})
		key := uniqueKey("bench-state")
		inc := func(c *gcounter.Counter) error { return c.Increment("bench", 1) }
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := statestore.Update(ctx, s, key, "bench", inc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
