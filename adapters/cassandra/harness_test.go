package cassandra

// Shared harness for the integration suite. Everything here talks to a real
// Cassandra (4.0 or later) addressed by CASSANDRA_HOSTS; without it the
// cluster half of every integration test skips (the model half runs; see
// targets_test.go). The suite creates its own keyspace (SimpleStrategy,
// RF 1; CASSANDRA_KEYSPACE names it, default a random counterkit_it_xxxxxxxx)
// and drops it when the package's tests finish. A keyspace named by
// CASSANDRA_KEYSPACE that already exists is used as it is (the adapter's
// tables are created in it if missing) and never dropped; its replication
// is not checked here: the tests that need RF 1 (a write at THREE refused
// as unavailable) read it from system_schema.keyspaces and skip, saying
// why, when it is not (needSingleReplica, targets_test.go). Every other
// test runs at QUORUM and ALL, so its replication factor must not exceed
// the live nodes (RF 3 on one node: every such request is unavailable).
//
// CASSANDRA_HOSTS=double runs the cluster half against cassandratest.Server
// instead, started for the run: every expectation a server test makes,
// checked against the wire-protocol double (about three minutes; CI runs
// the model half, the double's own tests, and the quick cluster halves on
// the double: TestClusterPathOnTheDouble). The two bodies
// about tombstone_failure_threshold skip there: the double does not play
// it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/cassandra/cassandratest"
)

const skipReason = "CASSANDRA_HOSTS is not set: the integration suite needs a real Cassandra 4.0+ " +
	"(e.g. `docker compose up -d` in adapters/cassandra, then CASSANDRA_HOSTS=127.0.0.1)"

type cluster struct {
	session  *gocql.Session
	keyspace string
	// created reports that this run created keyspace (it did not exist
	// before), so that TestMain may drop it.
	created bool
	// double is the wire-protocol double the run started, when
	// CASSANDRA_HOSTS is "double".
	double *cassandratest.Server
	err    error
}

// dropOnExit returns the keyspace TestMain drops: the suite's keyspace if
// this run created it, otherwise "".
func (c cluster) dropOnExit() string {
	if c.created {
		return c.keyspace
	}
	return ""
}

var (
	itOnce sync.Once
	it     cluster
)

func TestMain(m *testing.M) {
	code := m.Run()
	if it.session != nil {
		if ks := it.dropOnExit(); ks != "" {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := it.session.Query("DROP KEYSPACE IF EXISTS " + quote(ks)).ExecContext(ctx)
			cancel()
			if err != nil {
				fmt.Fprintf(os.Stderr, "dropping keyspace %s: %v\n", ks, err)
			}
		}
		it.session.Close()
	}
	os.Exit(code)
}

// integration returns the shared session and keyspace (with the schema
// created), or skips t when no cluster is configured.
func integration(t testing.TB) (*gocql.Session, string) {
	t.Helper()
	hosts := os.Getenv("CASSANDRA_HOSTS")
	if hosts == "" {
		t.Skip(skipReason)
	}
	itOnce.Do(func() {
		if hosts != "double" {
			it = connect(strings.Split(hosts, ","))
			return
		}
		srv, err := cassandratest.NewServer(cassandratest.Options{})
		if err != nil {
			it = cluster{err: err}
			return
		}
		// The examples connect by themselves, to CASSANDRA_HOSTS.
		os.Setenv("CASSANDRA_HOSTS", srv.Addr())
		it = connect([]string{srv.Addr()})
		it.double = srv
	})
	require.NoError(t, it.err, "connecting to CASSANDRA_HOSTS=%s", hosts)
	return it.session, it.keyspace
}

func connect(hosts []string) cluster {
	ks := os.Getenv("CASSANDRA_KEYSPACE")
	if ks == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		ks = "counterkit_it_" + hex.EncodeToString(b[:])
	}
	stmt, err := CreateKeyspaceStatement(ks, 1)
	if err != nil {
		return cluster{err: err}
	}
	// Without IF NOT EXISTS, so that the server tells whether this run
	// created the keyspace (AlreadyExists otherwise).
	stmt = strings.Replace(stmt, "CREATE KEYSPACE IF NOT EXISTS ", "CREATE KEYSPACE ", 1)
	for i := range hosts {
		hosts[i] = strings.TrimSpace(hosts[i])
	}
	c := gocql.NewCluster(hosts...)
	c.Consistency = gocql.Quorum
	c.Timeout = 15 * time.Second
	c.ConnectTimeout = 15 * time.Second
	c.RetryPolicy = sessionRetry
	c.QueryObserver = observer{}
	c.BatchObserver = observer{}
	s, err := c.CreateSession()
	if err != nil {
		return cluster{err: err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	created := true
	if err := s.Query(stmt).ExecContext(ctx); err != nil {
		var exists *gocql.RequestErrAlreadyExists
		if !errors.As(err, &exists) {
			s.Close()
			return cluster{err: err}
		}
		created = false // someone else's keyspace: use it, never drop it
	}
	// Set the session before CreateSchema so TestMain drops a keyspace this
	// run created even when table creation fails.
	it.session, it.keyspace, it.created = s, ks, created
	if err := CreateSchema(ctx, s, ks); err != nil {
		return cluster{session: s, keyspace: ks, created: created, err: err}
	}
	return cluster{session: s, keyspace: ks, created: created}
}

// newTestDB returns a DB on the shared cluster.
func newTestDB(t testing.TB, opts Options) *DB {
	t.Helper()
	s, ks := integration(t)
	db, err := New(s, ks, opts)
	require.NoError(t, err)
	return db
}

// uniqueKey returns a key no other test uses, so tests (and conformance
// subtests) share tables without sharing partitions.
func uniqueKey(t testing.TB, name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%s/%s", t.Name(), name, hex.EncodeToString(b[:]))
}

// calls counts the statements sent on behalf of one context, as seen by the
// driver's QueryObserver and BatchObserver: every attempt is counted, so a
// driver-level retry would show up as an extra statement.
type calls struct {
	mu        sync.Mutex
	reads     int
	writes    int
	batches   int
	readParts map[string]bool // partition keys (first bound value) read
	stmts     []string
}

type callsKey struct{}

// counting returns a context whose statements are counted in the result.
func counting(ctx context.Context) (context.Context, *calls) {
	c := &calls{readParts: map[string]bool{}}
	return context.WithValue(ctx, callsKey{}, c), c
}

func (c *calls) snapshot() (reads, writes, batches, partitions int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads, c.writes, c.batches, len(c.readParts)
}

// query counts one attempt of a single statement.
func (c *calls) query(stmt string, values []any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stmts = append(c.stmts, stmt)
	verb := strings.ToUpper(strings.Fields(stmt + " x")[0])
	if verb == "SELECT" {
		c.reads++
		if len(values) > 0 {
			c.readParts[fmt.Sprint(values[0])] = true
		}
		return
	}
	c.writes++
}

// batch counts one attempt of a batch.
func (c *calls) batch(stmts []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stmts = append(c.stmts, "BATCH: "+strings.Join(stmts, "; "))
	c.writes++
	c.batches++
}

// observer counts what the session sends into the context's calls; the
// model (model_test.go) counts its attempts the same way.
type observer struct{}

func (observer) ObserveQuery(ctx context.Context, q gocql.ObservedQuery) {
	if c, _ := ctx.Value(callsKey{}).(*calls); c != nil {
		c.query(q.Statement, q.Values)
	}
}

func (observer) ObserveBatch(ctx context.Context, b gocql.ObservedBatch) {
	if c, _ := ctx.Value(callsKey{}).(*calls); c != nil {
		c.batch(b.Statements)
	}
}

// requireCalls asserts the exact statement counts of one counted context.
func requireCalls(t testing.TB, c *calls, reads, writes, partitions int, what string) {
	t.Helper()
	r, w, _, p := c.snapshot()
	c.mu.Lock()
	stmts := append([]string(nil), c.stmts...)
	c.mu.Unlock()
	require.Equal(t, reads, r, "%s: reads; statements: %q", what, stmts)
	require.Equal(t, writes, w, "%s: writes; statements: %q", what, stmts)
	if reads > 0 {
		require.Equal(t, partitions, p, "%s: partitions read", what)
	}
}
