package cassandratest_test

import (
	"errors"
	"fmt"
	"sync"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
)

// exampleSession connects the real gocql driver to srv, with no keyspace
// selected, and returns the session; close it with Close.
func exampleSession(srv *cassandratest.Server) *gocql.Session {
	c := gocql.NewCluster(srv.Addr())
	c.Consistency = gocql.Quorum
	c.Timeout, c.ConnectTimeout = 10*time.Second, 10*time.Second
	c.WriteCoalesceWaitTime = 0 // otherwise each request waits 200µs
	s, err := c.CreateSession()
	if err != nil {
		panic(err)
	}
	return s
}

// exampleExec runs one CQL statement on s and panics if it fails.
func exampleExec(s *gocql.Session, stmt string, values ...any) {
	if err := s.Query(stmt, values...).Exec(); err != nil {
		panic(err)
	}
}

// A Server is a fake one-node Cassandra that the real gocql driver talks to
// over the network. Here a program creates a keyspace and a table, inserts
// a row and reads it back.
func ExampleServer() {
	srv, err := cassandratest.NewServer(cassandratest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	cluster := gocql.NewCluster(srv.Addr())
	cluster.WriteCoalesceWaitTime = 0 // otherwise each request waits 200µs
	session, err := cluster.CreateSession()
	if err != nil {
		panic(err)
	}
	defer session.Close()

	exampleExec(session, `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	exampleExec(session, `CREATE TABLE shop.stock (item text PRIMARY KEY, count bigint)`)
	exampleExec(session, `INSERT INTO shop.stock (item, count) VALUES (?, ?)`, "apples", int64(12))

	var count int64
	if err := session.Query(`SELECT count FROM shop.stock WHERE item = ?`, "apples").Scan(&count); err != nil {
		panic(err)
	}
	fmt.Println("apples:", count)
	// Output:
	// apples: 12
}

// exampleClock is a clock that only moves when told to; it is safe for
// concurrent use.
type exampleClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *exampleClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *exampleClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// Options.Now replaces the server's clock. Here the clock is moved by hand:
// a row written with a 60-second TTL (time to live) can be read until the
// clock passes 60 seconds, then it is gone, with no real waiting.
func ExampleOptions() {
	clock := &exampleClock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	srv, err := cassandratest.NewServer(cassandratest.Options{Now: clock.Now})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	session := exampleSession(srv)
	defer session.Close()

	exampleExec(session, `CREATE KEYSPACE app WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	exampleExec(session, `CREATE TABLE app.sessions (id text PRIMARY KEY, user text)`)
	exampleExec(session, `INSERT INTO app.sessions (id, user) VALUES (?, ?) USING TTL 60`, "s1", "alice")

	read := func() {
		var user string
		err := session.Query(`SELECT user FROM app.sessions WHERE id = ?`, "s1").Scan(&user)
		switch {
		case errors.Is(err, gocql.ErrNotFound):
			fmt.Println("no row")
		case err != nil:
			panic(err)
		default:
			fmt.Println("user:", user)
		}
	}
	clock.Advance(59 * time.Second)
	read()
	clock.Advance(2 * time.Second)
	read()
	// Output:
	// user: alice
	// no row
}

// Stats counts the requests a Server has received, by kind. The driver
// sends queries of its own when it connects, so this example prints how
// much each count grew during its own work: two prepared inserts, one
// batch, and one prepared read.
func ExampleStats() {
	srv, err := cassandratest.NewServer(cassandratest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	session := exampleSession(srv)
	defer session.Close()
	exampleExec(session, `CREATE KEYSPACE shop WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	exampleExec(session, `CREATE TABLE shop.stock (item text PRIMARY KEY, count bigint)`)

	before := srv.Stats()
	// A query with bound values is prepared once, then executed.
	exampleExec(session, `INSERT INTO shop.stock (item, count) VALUES (?, ?)`, "apples", int64(12))
	exampleExec(session, `INSERT INTO shop.stock (item, count) VALUES (?, ?)`, "pears", int64(3))
	batch := session.Batch(gocql.LoggedBatch)
	batch.Query(`INSERT INTO shop.stock (item, count) VALUES (?, ?)`, "plums", int64(7))
	batch.Query(`INSERT INTO shop.stock (item, count) VALUES (?, ?)`, "figs", int64(5))
	if err := batch.Exec(); err != nil {
		panic(err)
	}
	var count int64
	if err := session.Query(`SELECT count FROM shop.stock WHERE item = ?`, "plums").Scan(&count); err != nil {
		panic(err)
	}
	after := srv.Stats()

	fmt.Println("plums:", count)
	fmt.Println("executes:", after.Executes-before.Executes)
	fmt.Println("batches:", after.Batches-before.Batches)
	fmt.Println("reads:", after.Reads-before.Reads)
	// Output:
	// plums: 7
	// executes: 3
	// batches: 1
	// reads: 1
}
