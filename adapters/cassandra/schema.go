package cassandra

import (
	"context"
	"fmt"
	"strings"

	gocql "github.com/apache/cassandra-gocql-driver/v2"

	"github.com/counterkit/counterkit/crdt"
)

// tableDDL holds the body of each CREATE TABLE; %s is the quoted
// "keyspace"."table" name. Everything else is fixed text: no caller value is
// ever formatted into it.
var tableDDL = map[string]string{
	// store.Siblings: one row per (key, actor). An actor overwrites only
	// its own row; a Put also deletes the other rows its token names.
	tableSiblings: `CREATE TABLE IF NOT EXISTS %s (
	key   text,
	actor text,
	value blob,
	PRIMARY KEY ((key), actor)
)`,
	// store.Partitions: ordered rows per partition. A blob clustering
	// column sorts as unsigned bytes, ascending: store.Partitions' order.
	tablePartitions: `CREATE TABLE IF NOT EXISTS %s (
	partition text,
	key       blob,
	value     blob,
	PRIMARY KEY ((partition), key)
)`,
}

// Schema returns the CREATE TABLE statements for keyspace and table prefix
// (empty prefix means "counterkit_"): the siblings table, then the
// partitions table. Names are validated with CheckIdentifier.
func Schema(keyspace, prefix string) ([]string, error) {
	tables, err := tableNames(keyspace, prefix)
	if err != nil {
		return nil, err
	}
	return ddl(tables), nil
}

func ddl(tables map[string]string) []string {
	out := make([]string, 0, len(allTables))
	for _, t := range allTables {
		out = append(out, fmt.Sprintf(tableDDL[t], tables[t]))
	}
	return out
}

// CreateKeyspaceStatement returns a CREATE KEYSPACE IF NOT EXISTS statement
// with SimpleStrategy and the given replication factor. It is meant for
// tests and single-DC development clusters; production keyspaces usually
// want NetworkTopologyStrategy and are created by operators. A keyspace
// that is not a valid identifier (CheckIdentifier), or a replication
// factor outside 1..100, is refused (crdt.ErrInvalidConfig).
func CreateKeyspaceStatement(keyspace string, replicationFactor int) (string, error) {
	if err := CheckIdentifier(keyspace); err != nil {
		return "", err
	}
	if replicationFactor < 1 || replicationFactor > 100 {
		return "", fmt.Errorf("%w: replication factor %d", crdt.ErrInvalidConfig, replicationFactor)
	}
	return fmt.Sprintf("CREATE KEYSPACE IF NOT EXISTS %s WITH replication = {'class': 'SimpleStrategy', 'replication_factor': %d}",
		quote(keyspace), replicationFactor), nil
}

// CreateSchema creates the adapter's two tables (default prefix) in an
// existing keyspace and waits for schema agreement. It is idempotent, but
// run it from one process at a time, at deploy time: concurrent CREATE
// TABLE IF NOT EXISTS statements on different coordinators can each create
// the table, with different table ids (a schema conflict in Cassandra 4.0).
// Its errors are crdt.ErrAmbiguousWrite (a context done before a statement
// is sent included, wrapping the context's error: a statement may have been
// applied before), but for invalid input, and crdt.ErrMisconfiguredStore
// for what Cassandra refuses as invalid (a keyspace that does not exist,
// README's "Errors"); running it again is safe.
func CreateSchema(ctx context.Context, session *gocql.Session, keyspace string) error {
	stmts, err := Schema(keyspace, "")
	if err != nil {
		return err
	}
	return runDDL(ctx, session, stmts)
}

// CreateSchema creates the DB's tables (with its prefix) and waits for
// schema agreement. It is idempotent; like the package-level CreateSchema,
// run it from one process at a time.
func (db *DB) CreateSchema(ctx context.Context) error {
	return runDDL(ctx, db.session, ddl(db.tables))
}

func runDDL(ctx context.Context, session *gocql.Session, stmts []string) error {
	for _, s := range stmts {
		if err := session.Query(s).ExecContext(ctx); err != nil {
			first, _, _ := strings.Cut(s, "\n")
			return wrapErr("create schema", true, fmt.Errorf("%s: %w", first, err))
		}
	}
	if err := session.AwaitSchemaAgreement(ctx); err != nil {
		return wrapErr("create schema", true, err)
	}
	return nil
}
