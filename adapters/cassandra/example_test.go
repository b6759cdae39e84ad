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
// schema and stores two actors' rows of one counter.
//
// It has no "// Output:" line on purpose: go test compiles it (so it cannot
// rot) but does not run it, because it needs a real Cassandra. The test
// TestExampleRuns below runs it, and checks what it prints, whenever
// CASSANDRA_HOSTS is set.
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
	states := db.States()
	key := fmt.Sprintf("page-views/%d", time.Now().UnixNano())
	// Each web server counts its own page views: it loads and merges every
	// row, increments as itself, and saves its own row.
	for i, actor := range []crdt.ActorID{"web-1", "web-2", "web-1"} {
		_, err := statestore.Update(ctx, states, key, actor, func(c *gcounter.Counter) error {
			return c.Increment(actor, int64(i+1))
		})
		if errors.Is(err, crdt.ErrAmbiguousWrite) {
			fmt.Println("outcome unknown; re-Save the returned state (never Update again)")
		}
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	rows, _ := states.Load(ctx, key)
	views, err := statestore.Load[gcounter.Counter](ctx, states, key)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(rows), "rows;", views.Get("web-1"), "+", views.Get("web-2"), "=", views.Value())
	// Output when run against a cluster:
	// 2 rows; 4 + 2 = 6
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

// TestExampleRuns runs Example against the cluster and checks its output.
func TestExampleRuns(t *testing.T) {
	if os.Getenv("CASSANDRA_HOSTS") == "" {
		t.Skip("CASSANDRA_HOSTS is not set: Example needs a real Cassandra")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	Example()
	os.Stdout = stdout
	w.Close()
	var buf bytes.Buffer
	_, _ = io.Copy(&buf, r)
	if got, want := buf.String(), "2 rows; 4 + 2 = 6\n"; got != want {
		t.Fatalf("Example printed %q, want %q", got, want)
	}
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
	fmt.Println(stmts[0])
	// Output:
	// CREATE TABLE IF NOT EXISTS "shop"."counterkit_state" (
	// 	key   text,
	// 	actor text,
	// 	state blob,
	// 	PRIMARY KEY ((key), actor)
	// )
}

func ExampleCheckConsistency() {
	fmt.Println(cassandra.DefaultConsistency(cassandra.OpLedgerPut), cassandra.DefaultConsistency(cassandra.OpTallyGCRead))
	err := cassandra.CheckConsistency(map[cassandra.Op]gocql.Consistency{
		cassandra.OpLedgerFetch: gocql.One, // would miss the actor's own last Put
	})
	fmt.Println(errors.Is(err, crdt.ErrInvalidConfig))
	// DC-local ledgers: their fetch must also overlap transaction commits,
	// which EACH_QUORUM does for LOCAL_QUORUM and QUORUM reads alike.
	err = cassandra.CheckConsistency(map[cassandra.Op]gocql.Consistency{
		cassandra.OpLedgerFetch: gocql.LocalQuorum,
		cassandra.OpLedgerPut:   gocql.LocalQuorum,
		cassandra.OpTxCommit:    gocql.EachQuorum,
	})
	fmt.Println(err)
	// Output:
	// QUORUM ALL
	// true
	// <nil>
}

func ExampleOp() {
	fmt.Println(cassandra.OpLogRead, "/", cassandra.OpTallyGCWrite)
	// Output: log read / tally gc write
}

func ExampleError() {
	// What a write timeout reported by the coordinator looks like to a
	// caller: the counterkit sentinel and the driver's typed error are both
	// reachable.
	var err error = &cassandra.Error{
		Op:   "ledger put",
		Kind: crdt.ErrAmbiguousWrite,
		Err:  &gocql.RequestErrWriteTimeout{Consistency: gocql.Quorum, Received: 1, BlockFor: 2, WriteType: "SIMPLE"},
	}
	var wt *gocql.RequestErrWriteTimeout
	fmt.Println(errors.Is(err, crdt.ErrAmbiguousWrite), errors.As(err, &wt), wt.BlockFor)
	// Output: true true 2
}
