package cassandra

// Where the integration bodies run. Every test that talks to a real
// Cassandra is written as one body run by eachTarget: on the model of
// Cassandra's rules (model_test.go) always, so CI checks every expectation
// the body makes, and on the cluster named by CASSANDRA_HOSTS when it is
// set. TestServerTestsHaveModelTwins (twins_test.go) fails when a test
// reaches the cluster any other way.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

// target is one place a body runs: the model (model set) or a cluster
// (session set).
type target struct {
	session  *gocql.Session
	keyspace string
	model    *cqlModel
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

// openModel returns a target on a fresh model with the default tables of
// keyspace "ks" created.
func openModel(t testing.TB) *target {
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	return &target{keyspace: "ks", model: newCQLModel(db)}
}

// openCluster returns a target on the suite keyspace of the cluster named
// by CASSANDRA_HOSTS, or skips with the harness's reason.
func openCluster(t testing.TB) *target {
	t.Helper()
	s, ks := integration(t)
	return &target{session: s, keyspace: ks}
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
