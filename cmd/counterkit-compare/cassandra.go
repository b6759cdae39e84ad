package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/adapters/cassandra"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/cli"
	"github.com/counterkit/counterkit/store"
)

// compareCassandra is what compare runs on: a native counter table and the
// adapter's two shapes, over one session.
type compareCassandra struct {
	native     nativeCounter
	siblings   store.Siblings
	partitions store.Partitions
	close      func()
}

// openCompareCassandra connects (QUORUM, request timeout timeout, the
// driver's retries off: the workers resend themselves) and creates the
// native counter table and the counterkit tables in keyspace if missing.
// Each write's client timeout is its context's deadline.
func openCompareCassandra(ctx context.Context, hosts []string, keyspace, prefix string, timeout time.Duration) (*compareCassandra, error) {
	table := cmp.Or(prefix, "counterkit_") + "compare_native"
	if err := cmp.Or(cassandra.CheckIdentifier(keyspace), cassandra.CheckIdentifier(table)); err != nil {
		return nil, cli.UsageError{Err: err}
	}
	cfg := gocql.NewCluster(hosts...)
	cfg.Keyspace = keyspace
	cfg.Consistency = gocql.Quorum
	cfg.Timeout, cfg.ConnectTimeout = timeout, timeout
	cfg.RetryPolicy = &gocql.SimpleRetryPolicy{NumRetries: 0}
	sess, err := cfg.CreateSession()
	if err != nil {
		return nil, fmt.Errorf("%w: cassandra %s: %v", crdt.ErrUnavailable, strings.Join(hosts, ","), err)
	}
	q := fmt.Sprintf(`CREATE TABLE IF NOT EXISTS "%s"."%s" (k text PRIMARY KEY, c counter)`, keyspace, table)
	if err := sess.Query(q).ExecContext(ctx); err != nil {
		sess.Close()
		return nil, fmt.Errorf("%w: creating %s.%s: %v", crdt.ErrMisconfiguredStore, keyspace, table, err)
	}
	db, err := cassandra.New(sess, keyspace, cassandra.Options{TablePrefix: prefix})
	if err == nil {
		err = db.CreateSchema(ctx)
	}
	if err != nil {
		sess.Close()
		return nil, err
	}
	return &compareCassandra{
		native:     &cassandraNative{sess: sess, keyspace: keyspace, table: table},
		siblings:   db.Siblings(),
		partitions: db.Partitions(),
		close:      sess.Close,
	}, nil
}

// cassandraNative is a Cassandra counter column: UPDATE ... SET c = c + ?,
// at QUORUM, never marked idempotent (so the driver does not resend it).
type cassandraNative struct {
	sess            *gocql.Session
	keyspace, table string
}

func (n *cassandraNative) Add(ctx context.Context, key string, delta int64) error {
	q := fmt.Sprintf(`UPDATE "%s"."%s" SET c = c + ? WHERE k = ?`, n.keyspace, n.table)
	return n.sess.Query(q, delta, key).Idempotent(false).ExecContext(ctx)
}

func (n *cassandraNative) Value(ctx context.Context, key string) (int64, error) {
	q := fmt.Sprintf(`SELECT c FROM "%s"."%s" WHERE k = ?`, n.keyspace, n.table)
	var c int64
	err := n.sess.Query(q, key).ScanContext(ctx, &c)
	if errors.Is(err, gocql.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%w: reading native counter %q: %v", crdt.ErrUnavailable, key, err)
	}
	return c, nil
}
