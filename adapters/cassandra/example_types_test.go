package cassandra_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	cassandra "github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// ExampleDB, ExampleSiblings and ExamplePartitions have no "// Output:"
// line on purpose, as Example: they need a real Cassandra, so go test
// compiles them but does not run them. TestExampleRunsTypes below runs
// each, and checks what it prints, on the model of Cassandra's rules
// always and on the cluster named by CASSANDRA_HOSTS when it is set.

// openExampleDB connects to the cluster named by CASSANDRA_HOSTS, creates
// a fresh keyspace with the schema, and returns a DB with opts on it and a
// function that drops the keyspace and closes the session.
// TestExampleRunsTypes replaces it on the model.
var openExampleDB = func(ctx context.Context, opts cassandra.Options) (*cassandra.DB, func(), error) {
	cluster := gocql.NewCluster(strings.Split(os.Getenv("CASSANDRA_HOSTS"), ",")...)
	cluster.Consistency = gocql.Quorum
	session, err := cluster.CreateSession()
	if err != nil {
		return nil, nil, fmt.Errorf("connect: %w", err)
	}
	keyspace := exampleKeyspace() // unique per run: done drops what it created
	create, _ := cassandra.CreateKeyspaceStatement(keyspace, 1)
	done := func() {
		_ = session.Query(`DROP KEYSPACE IF EXISTS "` + keyspace + `"`).ExecContext(ctx)
		session.Close()
	}
	err = session.Query(create).ExecContext(ctx)
	if err == nil {
		err = cassandra.CreateSchema(ctx, session, keyspace)
	}
	var db *cassandra.DB
	if err == nil {
		db, err = cassandra.New(session, keyspace, opts)
	}
	if err != nil {
		done()
		return nil, nil, err
	}
	return db, done, nil
}

// A DB is one session and one keyspace with every operation's consistency
// level settled when New checks them; the stores it hands out use them.
// Here reads and writes stay in the local data center, and a complete read
// stays at ALL, as it must.
func ExampleDB() {
	ctx := context.Background()
	local := map[cassandra.Op]gocql.Consistency{
		cassandra.OpSiblingsFetch: gocql.LocalQuorum, cassandra.OpSiblingsPut: gocql.LocalQuorum,
		cassandra.OpPartitionRead: gocql.LocalQuorum, cassandra.OpPartitionApply: gocql.LocalQuorum,
	}
	db, done, err := openExampleDB(ctx, cassandra.Options{Consistency: local})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	for _, op := range []cassandra.Op{cassandra.OpSiblingsFetch, cassandra.OpSiblingsPut,
		cassandra.OpPartitionRead, cassandra.OpPartitionReadComplete, cassandra.OpPartitionApply} {
		fmt.Printf("%s: %v\n", op, db.Consistency(op))
	}
	err = db.Siblings().Put(ctx, "account-1", "web-1", []byte("+10"), nil)
	vals, _, _ := db.Siblings().Fetch(ctx, "account-1")
	fmt.Printf("%v %q\n", err, vals)
	// Output when run against a cluster:
	// siblings fetch: LOCAL_QUORUM
	// siblings put: LOCAL_QUORUM
	// partition read: LOCAL_QUORUM
	// partition read complete: ALL
	// partition apply: LOCAL_QUORUM
	// <nil> ["+10"]
}

// Siblings keeps one row per actor: two actors that read the same (empty)
// key both keep their rows, and a Put with the token of a Fetch that read
// both deletes exactly those rows.
func ExampleSiblings() {
	ctx := context.Background()
	db, done, err := openExampleDB(ctx, cassandra.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	sib := db.Siblings()
	_, tok, _ := sib.Fetch(ctx, "account-2")
	err = errors.Join(sib.Put(ctx, "account-2", "web-1", []byte("+10"), tok),
		sib.Put(ctx, "account-2", "web-2", []byte("-3"), tok))
	vals, tok, _ := sib.Fetch(ctx, "account-2")
	fmt.Printf("%v %q\n", err, vals)
	err = sib.Put(ctx, "account-2", "web-1", []byte("+7"), tok) // merged by web-1
	vals, _, _ = sib.Fetch(ctx, "account-2")
	fmt.Printf("%v %q\n", err, vals)
	// Output when run against a cluster:
	// <nil> ["+10" "-3"]
	// <nil> ["+7"]
}

// Partitions writes every mutation at the caller's timestamp: the greater
// timestamp wins, a range delete removes the older rows in its range, and
// Scan reads on from a row key.
func ExamplePartitions() {
	ctx := context.Background()
	db, done, err := openExampleDB(ctx, cassandra.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer done()
	parts := db.Partitions()
	put := func(key, value string, ts int64) store.Mutation {
		return store.Mutation{Partition: "views", Op: store.OpPut, Key: []byte(key), Value: []byte(value), Timestamp: ts}
	}
	err = errors.Join(
		parts.Apply(ctx, []store.Mutation{put("a", "1", 10), put("b", "2", 10), put("c", "3", 10), put("d", "4", 10)}),
		parts.Apply(ctx, []store.Mutation{put("a", "old", 5), put("b", "new", 20)}),
		parts.Apply(ctx, []store.Mutation{{Partition: "views", Op: store.OpDeleteRange, Key: []byte("c"), End: []byte("d"), Timestamp: 15}}))
	rows, _ := parts.Snapshot(ctx, "views", 100, store.ReadComplete)
	for _, r := range rows {
		fmt.Printf("%s=%s\n", r.Key, r.Value)
	}
	var from []string
	_ = parts.Scan(ctx, "views", []byte("b"), store.ReadAny, func(r store.Row) bool {
		from = append(from, string(r.Key))
		return true
	})
	fmt.Println("from b:", from, err)
	// Output when run against a cluster:
	// a=1
	// b=new
	// d=4
	// from b: [b d] <nil>
}

// Options are checked by New, and its checks also run without a session,
// so a service can refuse a bad configuration before it connects: here a
// prefix for the tables, DC-local levels and a retry policy. A fetch at
// LOCAL_QUORUM against puts at QUORUM is refused: with several data
// centers the two need not overlap.
func ExampleOptions() {
	opts := cassandra.Options{
		TablePrefix: "shop_",
		Consistency: map[cassandra.Op]gocql.Consistency{
			cassandra.OpSiblingsFetch: gocql.LocalQuorum, cassandra.OpSiblingsPut: gocql.LocalQuorum,
		},
		RetryPolicy: &gocql.SimpleRetryPolicy{NumRetries: 2},
	}
	fmt.Println(cassandra.CheckConsistency(opts.Consistency), cassandra.CheckRetryPolicy(opts.RetryPolicy))
	stmts, err := cassandra.Schema("shop", opts.TablePrefix)
	for _, s := range stmts {
		fmt.Println(strings.TrimSpace(s[:strings.Index(s, "(")]))
	}
	fmt.Println(err)

	opts.Consistency[cassandra.OpSiblingsPut] = gocql.Quorum
	err = cassandra.CheckConsistency(opts.Consistency)
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	// Output:
	// <nil> <nil>
	// CREATE TABLE IF NOT EXISTS "shop"."shop_siblings"
	// CREATE TABLE IF NOT EXISTS "shop"."shop_partitions"
	// <nil>
	// true
}

// TestExampleRunsTypes checks what ExampleDB, ExampleSiblings and
// ExamplePartitions print: on a cluster each connects by itself, on the
// model it gets a DB of the model.
func TestExampleRunsTypes(t *testing.T) {
	examples := []struct {
		name string
		run  func()
		want string
	}{
		{"DB", ExampleDB, "siblings fetch: LOCAL_QUORUM\nsiblings put: LOCAL_QUORUM\npartition read: LOCAL_QUORUM\n" +
			"partition read complete: ALL\npartition apply: LOCAL_QUORUM\n<nil> [\"+10\"]\n"},
		{"Siblings", ExampleSiblings, "<nil> [\"+10\" \"-3\"]\n<nil> [\"+7\"]\n"},
		{"Partitions", ExamplePartitions, "a=1\nb=new\nd=4\nfrom b: [b d] <nil>\n"},
	}
	cassandra.EachTarget(t, func(t *testing.T, tg *cassandra.Target) {
		if !tg.Server() {
			open := openExampleDB
			t.Cleanup(func() { openExampleDB = open })
			openExampleDB = func(_ context.Context, opts cassandra.Options) (*cassandra.DB, func(), error) {
				return tg.DB(t, opts), func() {}, nil
			}
		}
		for _, ex := range examples {
			var out bytes.Buffer
			stdoutOf(t, &out, ex.run)
			if got := out.String(); got != ex.want {
				t.Errorf("Example%s printed %q, want %q", ex.name, got, ex.want)
			}
		}
	})
}
