package cassandra_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	cassandra "github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/statestore"
)

// Example connects to the cluster named by CASSANDRA_HOSTS, creates the
// schema and counts page views of one page from two web servers.
//
// It has no "// Output:" line on purpose: go test compiles it (so it cannot
// rot) but does not run it, because it needs a real Cassandra. The test
// TestExampleRuns below runs it, and checks what it prints, whenever
// CASSANDRA_HOSTS is set, and runs countPageViews on the model of
// Cassandra's rules always.
func Example() {
	ctx := context.Background()
	cluster := gocql.NewCluster(strings.Split(os.Getenv("CASSANDRA_HOSTS"), ",")...)
	cluster.Consistency = gocql.Quorum
	cluster.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 2} // safe: every adapter write is idempotent
	if err := cassandra.CheckRetryPolicy(cluster.RetryPolicy); err != nil {
		fmt.Println(err) // New cannot see the session's policy
		return
	}
	session, err := cluster.CreateSession()
	if err != nil {
		fmt.Println("connect:", err)
		return
	}
	defer session.Close()

	keyspace := exampleKeyspace() // unique per run: the example drops what it created
	create, _ := cassandra.CreateKeyspaceStatement(keyspace, 1)
	if err := session.Query(create).ExecContext(ctx); err != nil {
		fmt.Println("keyspace:", err)
		return
	}
	defer session.Query(`DROP KEYSPACE IF EXISTS "` + keyspace + `"`).ExecContext(ctx)
	if err := cassandra.CreateSchema(ctx, session, keyspace); err != nil {
		fmt.Println("schema:", err)
		return
	}

	db, err := cassandra.New(session, keyspace, cassandra.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := countPageViews(ctx, os.Stdout, db); err != nil {
		fmt.Println(err)
	}
	// Output when run against a cluster:
	// rows: 1; 4 + 2 = 6
}

// countPageViews is Example's work once it has a DB. Each web server
// counts its own page views: it loads and merges every row, increments as
// itself, and writes its own row back. Each write supersedes the rows its
// Load read (they are merged into it), so the key keeps one row, the last
// writer's, holding both servers' counts.
func countPageViews(ctx context.Context, w io.Writer, db *cassandra.DB) error {
	views := db.Siblings() // a store.Siblings: one row per (key, actor)
	key := fmt.Sprintf("page-views/%d", time.Now().UnixNano())
	for i, actor := range []crdt.ActorID{"web-1", "web-2", "web-1"} {
		_, err := statestore.Update(ctx, views, key, actor, func(c *gcounter.Counter) error {
			return c.Increment(actor, int64(i+1))
		})
		if errors.Is(err, crdt.ErrAmbiguousWrite) {
			fmt.Fprintln(w, "outcome unknown; re-Save the returned state (never Update again)")
		}
		if err != nil {
			return err
		}
	}
	rows, _, err := views.Fetch(ctx, key)
	if err != nil {
		return err
	}
	c, err := statestore.Load[gcounter.Counter](ctx, views, key)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "rows: %d; %d + %d = %d\n", len(rows), c.Get("web-1"), c.Get("web-2"), c.Value())
	return nil
}

// exampleKeyspace returns a fresh keyspace name, counterkit_example_ and 8
// random hex digits, so that Example never reuses (and then drops) a
// keyspace it did not create.
func exampleKeyspace() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "counterkit_example_" + hex.EncodeToString(b[:])
}

func TestExampleKeyspaceIsUnique(t *testing.T) {
	a, b := exampleKeyspace(), exampleKeyspace()
	if a == b {
		t.Fatalf("two runs share keyspace %q", a)
	}
	for _, ks := range []string{a, b} {
		if err := cassandra.CheckIdentifier(ks); err != nil {
			t.Fatal(err)
		}
	}
}

// TestExampleRuns checks what Example prints: on a cluster it runs
// Example itself (connection, keyspace and schema included), on the model
// the same countPageViews.
func TestExampleRuns(t *testing.T) {
	cassandra.EachTarget(t, func(t *testing.T, tg *cassandra.Target) {
		var out bytes.Buffer
		if tg.Server() {
			stdoutOf(t, &out, Example)
		} else if err := countPageViews(context.Background(), &out, tg.DB(t, cassandra.Options{})); err != nil {
			fmt.Fprintln(&out, err)
		}
		if got, want := out.String(), "rows: 1; 4 + 2 = 6\n"; got != want {
			t.Fatalf("Example printed %q, want %q", got, want)
		}
	})
}

// TestExamplePrelude checks, without a cluster, the calls Example and
// openExampleDB make before they have a DB, which TestExampleRuns and
// TestExampleRunsTypes reach only on a cluster: the session's retry
// policy passes CheckRetryPolicy, and the example keyspace gives a
// CREATE KEYSPACE statement and a schema.
func TestExamplePrelude(t *testing.T) {
	if err := cassandra.CheckRetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}); err != nil {
		t.Fatalf("Example's session retry policy: %v", err)
	}
	ks := exampleKeyspace()
	create, err := cassandra.CreateKeyspaceStatement(ks, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := `CREATE KEYSPACE IF NOT EXISTS "` + ks + `"`; !strings.HasPrefix(create, want) {
		t.Fatalf("CreateKeyspaceStatement(%q, 1) = %q, want it to start with %q", ks, create, want)
	}
	if _, err := cassandra.Schema(ks, ""); err != nil {
		t.Fatal(err)
	}
}

// stdoutOf runs fn with os.Stdout going to out.
func stdoutOf(t *testing.T, out *bytes.Buffer, fn func()) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = stdout }()
	done := make(chan struct{})
	go func() { _, _ = io.Copy(out, r); close(done) }()
	fn()
	w.Close()
	<-done
}

func ExampleCheckIdentifier() {
	for _, name := range []string{"shop", "Shop", `shop"; DROP KEYSPACE shop; --`} {
		err := cassandra.CheckIdentifier(name)
		fmt.Println(name, errors.Is(err, crdt.ErrInvalidIdentifier))
	}
	// Output:
	// shop false
	// Shop true
	// shop"; DROP KEYSPACE shop; -- true
}

func ExampleSchema() {
	stmts, err := cassandra.Schema("shop", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range stmts {
		fmt.Println(s)
	}
	// Output:
	// CREATE TABLE IF NOT EXISTS "shop"."counterkit_siblings" (
	// 	key   text,
	// 	actor text,
	// 	value blob,
	// 	PRIMARY KEY ((key), actor)
	// )
	// CREATE TABLE IF NOT EXISTS "shop"."counterkit_partitions" (
	// 	partition text,
	// 	key       blob,
	// 	value     blob,
	// 	PRIMARY KEY ((partition), key)
	// )
}

func ExampleCheckConsistency() {
	fmt.Println(cassandra.DefaultConsistency(cassandra.OpSiblingsPut), cassandra.DefaultConsistency(cassandra.OpPartitionReadComplete))
	err := cassandra.CheckConsistency(map[cassandra.Op]gocql.Consistency{
		cassandra.OpSiblingsFetch: gocql.One, // would miss the actor's own last Put
	})
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	// DC-local: every read and the writes it depends on at LOCAL_QUORUM.
	err = cassandra.CheckConsistency(map[cassandra.Op]gocql.Consistency{
		cassandra.OpSiblingsFetch:  gocql.LocalQuorum,
		cassandra.OpSiblingsPut:    gocql.LocalQuorum,
		cassandra.OpPartitionRead:  gocql.LocalQuorum,
		cassandra.OpPartitionApply: gocql.LocalQuorum,
	})
	fmt.Println(err)
	// Output:
	// QUORUM ALL
	// true
	// <nil>
}

func ExampleOp() {
	fmt.Println(cassandra.OpPartitionReadComplete, "/", cassandra.OpSiblingsPut)
	// Output: partition read complete / siblings put
}

func ExampleError() {
	// What a write timeout reported by the coordinator looks like to a
	// caller: the counterkit sentinel and the driver's typed error are both
	// reachable.
	var err error = &cassandra.Error{
		Op:   "siblings put",
		Kind: crdt.ErrAmbiguousWrite,
		Err:  &gocql.RequestErrWriteTimeout{Consistency: gocql.Quorum, Received: 1, BlockFor: 2, WriteType: "SIMPLE"},
	}
	var wt *gocql.RequestErrWriteTimeout
	fmt.Println(errors.Is(err, crdt.ErrAmbiguousWrite), errors.As(err, &wt), wt.BlockFor)
	// Output: true true 2
}
