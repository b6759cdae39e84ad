// Package riakdouble runs bounded.Account's conformance suite over the Riak
// adapter, against riaktest's test double (a bucket type with allow_mult
// and dotted version vectors, as production types are created). Run it
// from this directory: go test ./...
package riakdouble

import (
	"context"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/riak"
	"github.com/counterkit/counterkit/adapters/riak/riaktest"
	"github.com/counterkit/counterkit/bounded/boundedtest"
	"github.com/counterkit/counterkit/store"
)

func TestBehavioursOnRiakDouble(t *testing.T) {
	boundedtest.Run(t, func(t *testing.T) store.Siblings {
		srv := riaktest.Start(t)
		if err := srv.CreateBucketType("counterkit", riaktest.BucketTypeProps{AllowMult: true}); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		cl, err := riak.NewCluster(ctx, 30*time.Second, srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.Stop() })
		s, err := riak.NewSiblings(ctx, cl, riak.Options{BucketType: "counterkit", Bucket: "bounded"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
