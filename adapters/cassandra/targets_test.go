package cassandra

// Where the integration bodies run. Every test that talks to a real
// Cassandra is written as one body run by eachTarget: on the model of
// Cassandra's rules (model_test.go) always, so CI checks every expectation
// the body makes, and on the cluster named by CASSANDRA_HOSTS when it is
// set. TestServerTestsHaveModelTwins (twins_test.go) fails when a test
// reaches the cluster any other way. Benchmarks measure the cluster alone
// (benchOnCluster, bench_test.go); a test runs each one's body once on the
// model (benchOnModel).

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
)

// target is one place a body runs: the model (model set) or a cluster
// (session set).
type target struct {
	session  *gocql.Session
	keyspace string
	model    *cqlModel
	// clock is the model's time for bodies that wait (now, sleep).
	clock *stepClock
	// double reports that the cluster is the wire-protocol double
	// (CASSANDRA_HOSTS=double, harness_test.go).
	double bool
}

// now is the clock a body that waits gives its DBs and ledgers
// (Options.Now, ledger.Options.Clock): the wall clock on a cluster, where
// the server's clock is real; on the model, a clock only sleep moves,
// which is also the model node's clock for those DBs.
func (tg *target) now() time.Time {
	if tg.Server() {
		return time.Now()
	}
	return tg.clock.Now()
}

// sleep waits d on a cluster and moves the model's clock by d.
func (tg *target) sleep(d time.Duration) {
	if tg.Server() {
		time.Sleep(d)
		return
	}
	tg.clock.Add(d)
}

// sleepUntil waits until tg.now() is at least at.
func (tg *target) sleepUntil(at time.Time) {
	if d := at.Sub(tg.now()); d > 0 {
		tg.sleep(d)
	}
}

// Server reports whether tg is a real cluster. A body may branch on it to
// set things up (Example connects by itself), never around an assertion:
// TestServerTestsHaveModelTwins refuses that.
func (tg *target) Server() bool { return tg.session != nil }

// newDB returns a DB with opts on tg's shared tables (the suite keyspace
// on a cluster); every DB of one target sees the same data.
func (tg *target) newDB(t testing.TB, opts Options) *DB {
	t.Helper()
	if tg.Server() {
		db, err := New(tg.session, tg.keyspace, opts)
		require.NoError(t, err)
		return db
	}
	db, err := newDB(nil, tg.keyspace, opts)
	require.NoError(t, err)
	tg.model.attach(db)
	return db
}

// sequentialOnModel skips a body's model subtest under -short (the race
// pass), for a body that runs on one goroutine there: it starts none, and
// neither the model nor the adapter code it drives (Partitions' Apply and
// Snapshot) does. The plain pass runs it; on a server it runs in both.
func sequentialOnModel(t *testing.T, tg *target) {
	t.Helper()
	if !tg.Server() {
		testsize.SkipSequential(t)
	}
}

// freshDB returns a DB with opts on two tables created for this test alone
// (a random prefix), dropped when it ends on a cluster.
func (tg *target) freshDB(t testing.TB, opts Options) *DB {
	t.Helper()
	if tg.Server() {
		return freshDB(t, opts)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	opts.TablePrefix = "kit_" + hex.EncodeToString(b[:]) + "_"
	db := tg.newDB(t, opts)
	tg.model.createTables(db)
	return db
}

// siblingRows returns the rows of key in db's siblings table as stored,
// by actor, read at QUORUM on a cluster.
func (tg *target) siblingRows(t testing.TB, db *DB, key string) map[crdt.ActorID]string {
	t.Helper()
	if !tg.Server() {
		return tg.model.siblingRows(db, key)
	}
	out := map[crdt.ActorID]string{}
	iter := tg.session.Query(fmt.Sprintf("SELECT actor, value FROM %s WHERE key = ?", db.tables[tableSiblings]), key).
		Consistency(gocql.Quorum).IterContext(context.Background())
	var (
		actor string
		value []byte
	)
	for iter.Scan(&actor, &value) {
		out[crdt.ActorID(actor)] = string(value)
	}
	require.NoError(t, iter.Close())
	return out
}

// replicationSelect reads a keyspace's replication options.
const replicationSelect = `SELECT replication FROM "system_schema"."keyspaces" WHERE keyspace_name = ?`

// replication returns the replication options of tg's keyspace from
// system_schema.keyspaces, read through a DB's one-page read on both
// targets (the model keeps that table for its keyspaces): a keyspace
// named by CASSANDRA_KEYSPACE that already existed is used as it is.
func (tg *target) replication(t testing.TB) map[string]string {
	t.Helper()
	db := tg.newDB(t, Options{})
	iter := db.openPage(context.Background(), OpPartitionRead, replicationSelect, []any{tg.keyspace}, 1, nil)
	var rep map[string]string
	found := iter.Scan(&rep)
	require.NoError(t, iter.Close())
	require.True(t, found, "keyspace %s is not in system_schema.keyspaces", tg.keyspace)
	return rep
}

// replicationFactor returns the total replication factor of replication
// options: SimpleStrategy's replication_factor, or the sum of
// NetworkTopologyStrategy's factors per data center; 0 for another
// strategy or a factor it cannot read (a transient one, "3/1").
func replicationFactor(rep map[string]string) int {
	class := rep["class"]
	class = class[strings.LastIndex(class, ".")+1:]
	total := 0
	for k, v := range rep {
		switch {
		case k == "class":
			continue
		case class == "SimpleStrategy" && k != "replication_factor":
			continue
		case class != "SimpleStrategy" && class != "NetworkTopologyStrategy":
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0
		}
		total += n
	}
	return total
}

// needSingleReplica skips t unless tg's keyspace keeps one replica of each
// partition (SimpleStrategy or NetworkTopologyStrategy, total RF 1): what
// follows relies on a write at THREE being refused as unavailable. The
// model's keyspace always does; a reused CASSANDRA_KEYSPACE may not.
func needSingleReplica(t *testing.T, tg *target, what string) {
	t.Helper()
	rep := tg.replication(t)
	if rf := replicationFactor(rep); rf != 1 {
		t.Skipf("keyspace %s has replication %v (total RF %d): %s needs RF 1, where a write at THREE is refused as unavailable; "+
			"unset CASSANDRA_KEYSPACE to let the suite create a keyspace at RF 1", tg.keyspace, rep, rf, what)
	}
}

// openModel returns a target on a fresh model with the default tables of
// keyspace "ks" created.
func openModel(t testing.TB) *target {
	// The model's clock starts late in a second, as a server's may.
	clock := &stepClock{t: time.Now().Truncate(time.Second).Add(900 * time.Millisecond)}
	db, err := newDB(nil, "ks", Options{Now: clock.Now})
	require.NoError(t, err)
	return &target{keyspace: "ks", model: newCQLModel(db), clock: clock}
}

// openCluster returns a target on the suite keyspace of the cluster named
// by CASSANDRA_HOSTS, or skips with the harness's reason.
func openCluster(t testing.TB) *target {
	t.Helper()
	s, ks := integration(t)
	return &target{session: s, keyspace: ks, double: it.double != nil}
}

// targets are where eachTarget runs a body, the model first.
var targets = []struct {
	name string
	open func(t testing.TB) *target
}{
	{"model", openModel},
	{"cassandra", openCluster},
}

// eachTarget runs body as a subtest per target: "model" always,
// "cassandra" when CASSANDRA_HOSTS is set (it skips with the reason
// otherwise).
func eachTarget(t *testing.T, body func(t *testing.T, tg *target)) {
	for _, tgt := range targets {
		t.Run(tgt.name, func(t *testing.T) { body(t, tgt.open(t)) })
	}
}

// TestReplicationFactor: the total RF of system_schema.keyspaces'
// replication options, and the model's answer for its keyspace.
func TestReplicationFactor(t *testing.T) {
	for _, c := range []struct {
		rep  map[string]string
		want int
	}{
		{map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "1"}, 1},
		{map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "3"}, 3},
		{map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "1"}, 1},
		{map[string]string{"class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "dc1": "1", "dc2": "1"}, 2},
		{map[string]string{"class": "org.apache.cassandra.locator.SimpleStrategy", "replication_factor": "3/1"}, 0},
		{map[string]string{"class": "org.apache.cassandra.locator.LocalStrategy"}, 0},
		{map[string]string{"class": "org.apache.cassandra.locator.EverywhereStrategy"}, 0},
		{map[string]string{}, 0},
	} {
		require.Equal(t, c.want, replicationFactor(c.rep), "%v", c.rep)
	}

	tg := openModel(t)
	require.Equal(t, 1, replicationFactor(tg.replication(t)))
	needSingleReplica(t, tg, "nothing") // does not skip

	// A keyspace the model does not have has no row.
	db := tg.newDB(t, Options{})
	iter := db.openPage(context.Background(), OpPartitionRead, replicationSelect, []any{"other"}, 1, nil)
	var rep map[string]string
	require.False(t, iter.Scan(&rep))
	require.NoError(t, iter.Close())

	// A keyspace at RF 3 (as a reused CASSANDRA_KEYSPACE may be) skips.
	tg.model.mu.Lock()
	tg.model.keyspaces[tg.keyspace]["replication_factor"] = "3"
	tg.model.mu.Unlock()
	skipped := false
	t.Run("keyspace at RF 3", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		needSingleReplica(t, tg, "this check")
	})
	require.True(t, skipped)
}
