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

// TestIntegrationKeyRefusals sends, through the adapter's write and read
// paths (DB.write, DB.openPage and readPage) but past its own key checks,
// the statements Cassandra 4.0 refuses for their bound keys: an empty
// partition key, a partition key or a written row's clustering value above
// 65535 bytes, a text key that is not UTF-8, a null key column. Each is
// refused with the server's InvalidRequest and message, mapped to
// crdt.ErrMisconfiguredStore, and writes nothing.
func TestIntegrationKeyRefusals(t *testing.T) { eachTarget(t, integrationKeyRefusals) }

func integrationKeyRefusals(t *testing.T, tg *target) {
	ctx := context.Background()
	db := tg.newDB(t, Options{})
	s, p := db.Siblings(), db.Partitions()
	key, part := uniqueKey(t, "key"), uniqueKey(t, "part")
	long := strings.Repeat("k", 65536)
	const (
		empty    = "Key may not be empty"
		tooLong  = "Key length of 65536 is longer than maximum of 65535"
		notUTF8  = "String didn't validate."
		nullKey  = "Invalid null value in condition for column key"
		nullPart = "Invalid null value in condition for column partition"
	)
	refused := func(name string, err error, msg string) {
		t.Helper()
		require.ErrorIs(t, err, crdt.ErrMisconfiguredStore, name)
		var inv *gocql.RequestErrInvalid
		require.ErrorAs(t, err, &inv, name)
		require.Equal(t, msg, inv.Message(), name)
	}
	// The statements as the adapter builds them, with any bound values.
	insert := func(k, actor any) stmt {
		sk, _ := k.(string)
		return stmt{cql: s.cql(siblingsInsert), args: []any{k, actor, []byte("v"), int64(10)}, key: sk}
	}
	del := func(k, actor any) stmt {
		sk, _ := k.(string)
		return stmt{cql: s.cql(siblingsDelete), args: []any{int64(10), k, actor}, key: sk}
	}
	mutation := func(m store.Mutation) stmt { m.Timestamp = 10; return p.mutationStmt(m) }
	withArg := func(st stmt, i int, v any) stmt { st.args[i] = v; return st }

	for _, c := range []struct {
		name  string
		op    Op
		stmts []stmt
		msg   string
	}{
		{"insert, empty partition key", OpSiblingsPut, []stmt{insert("", "a")}, empty},
		{"insert, partition key of 65536 bytes", OpSiblingsPut, []stmt{insert(long, "a")}, tooLong},
		{"insert, null partition key", OpSiblingsPut, []stmt{insert(nil, "a")}, nullKey},
		{"insert, partition key not UTF-8", OpSiblingsPut, []stmt{insert("k\xff", "a")}, notUTF8},
		{"insert, clustering value of 65536 bytes", OpSiblingsPut, []stmt{insert(key, long)}, tooLong},
		{"insert, null clustering value", OpSiblingsPut, []stmt{insert(key, nil)}, "Invalid null value in condition for column actor"},
		{"insert, clustering value not UTF-8", OpSiblingsPut, []stmt{insert(key, "a\xff")}, notUTF8},
		{"delete, empty partition key", OpSiblingsPut, []stmt{del("", "a")}, empty},
		{"delete, partition key of 65536 bytes", OpSiblingsPut, []stmt{del(long, "a")}, tooLong},
		{"delete, null partition key", OpSiblingsPut, []stmt{del(nil, "a")}, nullKey},
		{"delete, clustering value of 65536 bytes", OpSiblingsPut, []stmt{del(key, long)}, tooLong},
		{"delete, null clustering value", OpSiblingsPut, []stmt{del(key, nil)}, "Invalid null value in condition for column actor"},
		{"put, empty partition key", OpPartitionApply,
			[]stmt{mutation(store.Mutation{Op: store.OpPut, Key: []byte("k"), Value: []byte("v")})}, empty},
		{"put, blob key of 65536 bytes", OpPartitionApply,
			[]stmt{mutation(store.Mutation{Partition: part, Op: store.OpPut, Key: []byte(long), Value: []byte("v")})}, tooLong},
		{"put, null blob key", OpPartitionApply,
			[]stmt{withArg(mutation(store.Mutation{Partition: part, Op: store.OpPut, Key: []byte("k"), Value: []byte("v")}), 1, []byte(nil))}, nullKey},
		{"row delete, null blob key", OpPartitionApply,
			[]stmt{withArg(mutation(store.Mutation{Partition: part, Op: store.OpDelete, Key: []byte("k")}), 2, []byte(nil))}, nullKey},
		{"range delete, empty partition key", OpPartitionApply,
			[]stmt{mutation(store.Mutation{Op: store.OpDeleteRange, Key: []byte("a"), End: []byte("b")})}, empty},
		{"partition delete, partition key of 65536 bytes", OpPartitionApply,
			[]stmt{mutation(store.Mutation{Partition: long, Op: store.OpDeletePartition})}, tooLong},
		{"partition delete, null partition key", OpPartitionApply,
			[]stmt{withArg(mutation(store.Mutation{Partition: part, Op: store.OpDeletePartition}), 1, nil)}, nullPart},
		{"batch, one row's blob key of 65536 bytes", OpPartitionApply, []stmt{
			mutation(store.Mutation{Partition: part, Op: store.OpPut, Key: []byte("k"), Value: []byte("v")}),
			mutation(store.Mutation{Partition: part, Op: store.OpPut, Key: []byte(long), Value: []byte("v")}),
		}, tooLong},
	} {
		refused(c.name, db.write(ctx, c.op, c.stmts), c.msg)
	}

	for _, c := range []struct {
		name string
		op   Op
		cql  string
		args []any
		msg  string
	}{
		{"fetch, empty key", OpSiblingsFetch, s.cql(siblingsSelect), []any{""}, empty},
		{"fetch, key of 65536 bytes", OpSiblingsFetch, s.cql(siblingsSelect), []any{long}, tooLong},
		{"fetch, null key", OpSiblingsFetch, s.cql(siblingsSelect), []any{nil}, nullKey},
		{"fetch, key not UTF-8", OpSiblingsFetch, s.cql(siblingsSelect), []any{"k\xff"}, notUTF8},
		{"scan, empty partition key", OpPartitionRead, p.selectCQL(false), []any{""}, empty},
		{"scan from a key, partition key of 65536 bytes", OpPartitionRead, p.selectCQL(true), []any{long, []byte("k")}, tooLong},
		{"complete read, null partition key", OpPartitionReadComplete, p.selectCQL(false), []any{nil}, nullPart},
	} {
		iter := db.openPage(ctx, c.op, c.cql, c.args, 10, nil)
		_, err := readPage(iter, c.op, c.name, 9, func(rowIter) (struct{}, bool) { return struct{}{}, false })
		refused(c.name, err, c.msg)
	}

	// Nothing was written, not even the batch's valid row.
	sibs, _, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Empty(t, sibs)
	rows, err := p.Snapshot(ctx, part, 10, store.ReadComplete)
	require.NoError(t, err)
	require.Empty(t, rows)
}
