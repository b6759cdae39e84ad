package cassandra

// Package conformance (the shape checks and every driver's suite), through
// eachTarget: on the model of Cassandra's rules in CI, and on the real
// cluster named by CASSANDRA_HOSTS (see harness_test.go), whose subtest
// skips with the harness's reason when it is not set. The drivers'
// subtests share tables and use keys of their own. model_conformance_test.go
// runs two driver suites on the model again with small scan pages.

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/counterkit/counterkit/conformance"
	"github.com/counterkit/counterkit/store"
)

// TestConformance runs package conformance on each target: the shape
// checks (storetest) and the suite of every driver of each shape. The
// drivers share one DB per shape (long scans cross many pages); each
// Siblings check gets freshly created tables and is run one actor per Put
// (kitActors), and the Partitions checks share one DB, a namespace per
// fresh store (kitPartitions, which also skips the one check Cassandra's
// limits block).
func TestConformance(t *testing.T) {
	eachTarget(t, func(t *testing.T, tg *target) {
		conformance.Run(t, func(_ context.Context, tb testing.TB) (conformance.Harness, error) {
			return &harness{
				tg:       tg,
				siblings: tg.newDB(tb, Options{}).Siblings(),
				parts:    tg.newDB(tb, Options{ScanPageSize: 97}).Partitions(),
				kitParts: tg.freshDB(tb, Options{ScanPageSize: 3}).Partitions(),
			}, nil
		})
	})
}

// harness is the conformance.Harness (and ShapeChecks) of one target.
type harness struct {
	tg       *target
	siblings store.Siblings
	parts    store.Partitions
	kitParts store.Partitions
	n        atomic.Int64
}

func (h *harness) MakeSiblings(context.Context, testing.TB) (store.Siblings, error) {
	return h.siblings, nil
}

func (h *harness) MakePartitions(context.Context, testing.TB) (store.Partitions, error) {
	return h.parts, nil
}

func (h *harness) CheckSiblings(_ context.Context, t testing.TB) (store.Siblings, error) {
	return &kitActors{Siblings: h.tg.freshDB(t, Options{}).Siblings()}, nil
}

func (h *harness) CheckPartitions(_ context.Context, t testing.TB) (store.Partitions, error) {
	return kitPartitions(t, namespaced{Partitions: h.kitParts, prefix: fmt.Sprintf("ns%d/", h.n.Add(1))}), nil
}

func (*harness) Close() {}
