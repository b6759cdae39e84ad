package cassandra

import (
	"context"
	"strings"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// TestModelTablesFromSchemaText: the model builds its tables from the
// CREATE TABLE statements CreateSchema sends (ddl), so CI checks them
// against the statements the stores send, as a cluster does: a schema
// whose columns the statements do not name makes them fail (Cassandra
// refuses them at prepare, InvalidRequest), and one whose clustering
// column is blob instead of text takes an actor that is not UTF-8.
func TestModelTablesFromSchemaText(t *testing.T) {
	ctx := context.Background()
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)

	renamed := ddl(db.tables)
	renamed[0] = strings.ReplaceAll(renamed[0], "actor", "member")
	m := emptyModel(db)
	require.NoError(t, m.createTablesFrom(db, renamed))
	m.attach(db)
	err = db.Siblings().Put(ctx, "k", "a", []byte("v"), nil)
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore, "the INSERT names a column the table does not have")
	var inv *gocql.RequestErrInvalid
	require.ErrorAs(t, err, &inv)
	require.NoError(t, db.Partitions().Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}}),
		"the partitions table is as the statements expect")

	blobActor := ddl(db.tables)
	blobActor[0] = strings.Replace(blobActor[0], "actor text", "actor blob", 1)
	m = emptyModel(db)
	require.NoError(t, m.createTablesFrom(db, blobActor))
	require.NoError(t, m.send([]stmt{{cql: db.Siblings().cql(siblingsInsert), args: []any{"k", "a\xff", []byte("v"), int64(1)}, key: "k"}}, gocql.Quorum),
		"a blob clustering column takes any bytes")

	for _, bad := range []string{
		strings.Replace(ddl(db.tables)[1], "value     blob", "value     text", 1),
		strings.Replace(ddl(db.tables)[1], "PRIMARY KEY ((partition), key)", "PRIMARY KEY ((partition, key))", 1),
		"CREATE TABLE x",
	} {
		m = emptyModel(db)
		require.Error(t, m.createTablesFrom(db, []string{bad}), "the model plays no such table: %s", bad)
	}
}

// TestModelRefusesLongTableNames: Cassandra 4.0 refuses a table name
// longer than 48 characters (SchemaConstants.NAME_LENGTH), so the model's
// CREATE TABLE does too; CheckIdentifier keeps the adapter's names within
// it.
func TestModelRefusesLongTableNames(t *testing.T) {
	db, err := newDB(nil, "ks", Options{})
	require.NoError(t, err)
	base := ddl(db.tables)[1] // "ks"."counterkit_partitions"
	for _, n := range []int{MaxIdentifierLen, MaxIdentifierLen + 1} {
		name := strings.Repeat("t", n)
		stmt := strings.Replace(base, `"counterkit_partitions"`, `"`+name+`"`, 1)
		m := emptyModel(db)
		err := m.createTablesFrom(db, []string{stmt})
		if n <= MaxIdentifierLen {
			require.NoError(t, err, "a name of %d characters", n)
			continue
		}
		var inv *gocql.RequestErrInvalid
		require.ErrorAs(t, err, &inv, "a name of %d characters", n)
		require.Contains(t, inv.Message(), "more than 48 characters long")
	}
}
