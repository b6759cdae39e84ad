package riak_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/counterkit/counterkit/conformance"
	"github.com/counterkit/counterkit/store"
)

// The behaviour suites run on every backend: the test double in a created
// bucket type and in its default type, and, with RIAK_ADDR set, a real Riak
// (in the bucket type RIAK_BUCKET_TYPE). Every subtest of a suite gets a
// fresh store.Siblings, and keys are unique, so a real bucket may be shared.

// suiteRequestTimeout is the per-request timeout of the clusters the
// suites use. They inject no faults that cost a timeout, and they store
// values of up to 16 MiB, which the double takes seconds to receive under
// the race detector on a loaded machine.
const suiteRequestTimeout = 30 * time.Second

// TestConformance runs package conformance on every backend: the
// store.Siblings checks (storetest), each on an empty store
// (emptySiblings), and the behaviour suite of every driver built on
// store.Siblings (ledger, statestore, bounded) on fresh stores
// (MakeSiblings). Riak has no store.Partitions.
//
// The checks are skipped on Riak's default bucket type: without dotted
// version vectors a Put or Delete whose token is stale (something was
// written since its Fetch) keeps every sibling it read, so it does not
// supersede exactly what its Fetch returned, which the contract requires
// (counts stay correct because the counters' merge is idempotent; see
// riak.ErrDefaultBucketType). The checks' delete check fails there;
// TestBackendContendedWrite shows the same for Put. The drivers' suites
// run there too.
func TestConformance(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		conformance.Run(t, func(context.Context, testing.TB) (conformance.Harness, error) { return harness{b}, nil })
	})
}

// harness is the conformance.Harness (and ShapeChecks) of one backend.
type harness struct{ b backend }

func (h harness) MakeSiblings(_ context.Context, t testing.TB) (store.Siblings, error) {
	tg := h.b.open(t)
	return newStore(t, newClusterTimeout(t, tg.addr, suiteRequestTimeout), tg.opts), nil
}

func (h harness) CheckSiblings(_ context.Context, t testing.TB) (store.Siblings, error) {
	switch {
	case h.b.name == "fake-default-type":
		return nil, fmt.Errorf("Riak's default bucket type has no dotted version vectors: a Put or Delete with a stale token keeps the siblings it read, which store.Siblings forbids (TestBackendContendedWrite shows it): %w", errors.ErrUnsupported)
	case h.b.name == "riak" && !realTypeHasDVV():
		return nil, fmt.Errorf("%s=%q: the checks need a bucket type with dotted version vectors (created with `riak admin bucket-type create NAME '{\"props\":{\"allow_mult\":true}}'`); in Riak's default type a Put or Delete with a stale token keeps the siblings it read: %w",
			EnvRiakBucketType, os.Getenv(EnvRiakBucketType), errors.ErrUnsupported)
	}
	return emptySiblings(t, h.b), nil
}

func (harness) MakePartitions(context.Context, testing.TB) (store.Partitions, error) {
	return nil, fmt.Errorf("Riak has no store.Partitions: %w", errors.ErrUnsupported)
}

func (h harness) CheckPartitions(ctx context.Context, t testing.TB) (store.Partitions, error) {
	return h.MakePartitions(ctx, t)
}

func (harness) Close() {}
