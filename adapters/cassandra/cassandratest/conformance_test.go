package cassandratest_test

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
	"github.com/counterkit/counterkit/conformance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestConformance runs package conformance (the shape checks and every
// driver's suite) on the adapter's stores over a gocql session to the
// double, as the adapter's own TestConformance does on its model and on a
// cluster: the drivers share one DB per shape; each Siblings check gets
// tables of its own and is run one actor per Put; the Partitions checks
// share one DB with small scan pages, a namespace per fresh store.
func TestConformance(t *testing.T) {
	srv := cassandratest.Start(t, cassandratest.Options{})
	s := session(t, srv, "")
	keyspaceWithSchema(t, s, "conformance", 1)
	newDB := func(t testing.TB, opts cassandra.Options) *cassandra.DB {
		db, err := cassandra.New(s, "conformance", opts)
		require.NoError(t, err)
		if opts.TablePrefix != "" {
			require.NoError(t, db.CreateSchema(context.Background()))
		}
		return db
	}
	var tables atomic.Int64
	fresh := func(t testing.TB, opts cassandra.Options) *cassandra.DB {
		opts.TablePrefix = fmt.Sprintf("kit%d_", tables.Add(1))
		return newDB(t, opts)
	}
	conformance.Run(t, func(_ context.Context, tb testing.TB) (conformance.Harness, error) {
		return &harness{
			siblings: newDB(tb, cassandra.Options{}).Siblings(),
			parts:    newDB(tb, cassandra.Options{ScanPageSize: 7}).Partitions(),
			kitParts: fresh(tb, cassandra.Options{ScanPageSize: 3}).Partitions(),
			fresh:    fresh,
		}, nil
	})
}

type harness struct {
	siblings store.Siblings
	parts    store.Partitions
	kitParts store.Partitions
	fresh    func(testing.TB, cassandra.Options) *cassandra.DB
	n        atomic.Int64
}

func (h *harness) MakeSiblings(context.Context, testing.TB) (store.Siblings, error) {
	return h.siblings, nil
}

func (h *harness) MakePartitions(context.Context, testing.TB) (store.Partitions, error) {
	return h.parts, nil
}

func (h *harness) CheckSiblings(_ context.Context, t testing.TB) (store.Siblings, error) {
	return &oneActorPerPut{Siblings: h.fresh(t, cassandra.Options{}).Siblings()}, nil
}

func (h *harness) CheckPartitions(_ context.Context, t testing.TB) (store.Partitions, error) {
	if path.Base(t.Name()) == "limits" {
		if why := partitionLimitsBlocked(); why != "" {
			t.Skip("storetest's limits check cannot pass on Cassandra: " + why)
		}
	}
	return namespaced{Partitions: h.kitParts, prefix: fmt.Sprintf("ns%d/", h.n.Add(1))}, nil
}

func (*harness) Close() {}

// partitionLimitsBlocked names the limits of package store Cassandra
// cannot meet (as the adapter's kitPartitionsBlocked does), or "".
func partitionLimitsBlocked() string {
	var why []string
	if store.MaxBatch > cassandra.MaxApplyMutations {
		why = append(why, fmt.Sprintf("store.MaxBatch is %d, a Cassandra BATCH holds %d statements", store.MaxBatch, cassandra.MaxApplyMutations))
	}
	if store.MaxValue+store.MaxRowKey+16 > 16<<20 {
		why = append(why, fmt.Sprintf("store.MaxValue is %d bytes, Cassandra 4.0 refuses mutations above 16 MiB", store.MaxValue))
	}
	return strings.Join(why, "; ")
}

// oneActorPerPut sends every Put of storetest's Siblings checks as its own
// actor: the checks assume any number of values per actor, this store
// keeps one row per actor (see the adapter's kitActors). An invalid actor
// passes unchanged, so refusals stay the adapter's.
type oneActorPerPut struct {
	store.Siblings
	n atomic.Int64
}

func (k *oneActorPerPut) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if actor.Validate() == nil {
		if own := crdt.ActorID(fmt.Sprintf("%s#%d", actor, k.n.Add(1))); own.Validate() == nil {
			actor = own
		}
	}
	return k.Siblings.Put(ctx, key, actor, value, token)
}

// namespaced prefixes every valid partition name, so that a shared table
// looks empty to each of storetest's fresh stores.
type namespaced struct {
	store.Partitions
	prefix string
}

func (n namespaced) name(p string) string {
	if crdt.ValidateKey("partition key", p) != nil || crdt.ValidateKey("partition key", n.prefix+p) != nil {
		return p
	}
	return n.prefix + p
}

func (n namespaced) Scan(ctx context.Context, partition string, from []byte, level store.Read, fn func(store.Row) bool) error {
	return n.Partitions.Scan(ctx, n.name(partition), from, level, fn)
}

func (n namespaced) Snapshot(ctx context.Context, partition string, limit int, level store.Read) ([]store.Row, error) {
	return n.Partitions.Snapshot(ctx, n.name(partition), limit, level)
}

func (n namespaced) Apply(ctx context.Context, muts []store.Mutation) error {
	out := make([]store.Mutation, len(muts))
	for i, m := range muts {
		m.Partition = n.name(m.Partition)
		out[i] = m
	}
	return n.Partitions.Apply(ctx, out)
}
