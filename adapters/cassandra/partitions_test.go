package cassandra

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// modelPartitions returns a Partitions store on a fresh DB with opts
// whose I/O goes to a fresh model.
func modelPartitions(t testing.TB, opts Options) (*Partitions, *cqlModel) {
	t.Helper()
	db, err := newDB(nil, "ks", opts)
	require.NoError(t, err)
	m := newCQLModel(db)
	m.attach(db)
	return db.Partitions(), m
}

func TestPartitionsStatements(t *testing.T) {
	db, err := newDB(nil, "shop", Options{TablePrefix: "ck_"})
	require.NoError(t, err)
	p := db.Partitions()
	const tbl = `"shop"."ck_partitions"`
	require.Equal(t, `SELECT key, value FROM `+tbl+` WHERE partition = ?`, p.selectCQL(false))
	require.Equal(t, `SELECT key, value FROM `+tbl+` WHERE partition = ? AND key >= ?`, p.selectCQL(true))
	part := `p'); DROP TABLE x; --`
	for _, c := range []struct {
		m    store.Mutation
		cql  string
		args []any
	}{
		{store.Mutation{Partition: part, Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 7},
			`INSERT INTO ` + tbl + ` (partition, key, value) VALUES (?, ?, ?) USING TIMESTAMP ?`,
			[]any{part, []byte("k"), []byte("v"), int64(7)}},
		{store.Mutation{Partition: "p", Op: store.OpPut, Value: []byte("v"), Timestamp: 7},
			`INSERT INTO ` + tbl + ` (partition, key, value) VALUES (?, ?, ?) USING TIMESTAMP ?`,
			[]any{"p", []byte{}, []byte("v"), int64(7)}}, // an empty key, bound as empty, never null
		{store.Mutation{Partition: "p", Op: store.OpDelete, Key: []byte("k"), Timestamp: 8},
			`DELETE FROM ` + tbl + ` USING TIMESTAMP ? WHERE partition = ? AND key = ?`,
			[]any{int64(8), "p", []byte("k")}},
		{store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: []byte("a"), End: []byte("c"), Timestamp: 9},
			`DELETE FROM ` + tbl + ` USING TIMESTAMP ? WHERE partition = ? AND key >= ? AND key < ?`,
			[]any{int64(9), "p", []byte("a"), []byte("c")}},
		{store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: []byte("a"), Timestamp: 9},
			`DELETE FROM ` + tbl + ` USING TIMESTAMP ? WHERE partition = ? AND key >= ?`,
			[]any{int64(9), "p", []byte("a")}},
		{store.Mutation{Partition: "p", Op: store.OpDeleteRange, End: []byte("c"), Timestamp: 9},
			`DELETE FROM ` + tbl + ` USING TIMESTAMP ? WHERE partition = ? AND key < ?`,
			[]any{int64(9), "p", []byte("c")}},
		{store.Mutation{Partition: "p", Op: store.OpDeleteRange, Timestamp: 9},
			`DELETE FROM ` + tbl + ` USING TIMESTAMP ? WHERE partition = ?`,
			[]any{int64(9), "p"}},
		{store.Mutation{Partition: "p", Op: store.OpDeletePartition, Timestamp: 10},
			`DELETE FROM ` + tbl + ` USING TIMESTAMP ? WHERE partition = ?`,
			[]any{int64(10), "p"}},
	} {
		st, err := p.applyStmts([]store.Mutation{c.m})
		require.NoError(t, err, "%+v", c.m)
		require.Equal(t, []stmt{{cql: c.cql, args: c.args, key: c.m.Partition}}, st, "%+v", c.m)
	}

	ok := store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}
	for _, c := range []struct {
		name string
		m    store.Mutation
		want error
	}{
		{"bad partition", store.Mutation{Partition: "", Op: store.OpPut, Value: []byte("v"), Timestamp: 1}, crdt.ErrInvalidKey},
		{"zero timestamp", store.Mutation{Partition: "p", Op: store.OpPut, Value: []byte("v")}, crdt.ErrInvalidAmount},
		{"empty value", store.Mutation{Partition: "p", Op: store.OpPut, Timestamp: 1}, crdt.ErrInvalidAmount},
		{"unknown op", store.Mutation{Partition: "p", Timestamp: 1}, crdt.ErrInvalidAmount},
		{"empty range", store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: []byte("b"), End: []byte("a"), Timestamp: 1}, crdt.ErrInvalidAmount},
		{"long key", store.Mutation{Partition: "p", Op: store.OpDelete, Key: make([]byte, store.MaxRowKey+1), Timestamp: 1}, crdt.ErrTooLarge},
	} {
		_, err := p.applyStmts([]store.Mutation{ok, c.m})
		require.ErrorIs(t, err, c.want, c.name)
	}
	big := make([]store.Mutation, store.MaxBatch+1)
	for i := range big {
		big[i] = ok
	}
	_, err = p.applyStmts(big)
	require.ErrorIs(t, err, crdt.ErrTooLarge, "one more than store.MaxBatch")
	_, err = p.applyStmts(big[:store.MaxBatch])
	require.NoError(t, err)
	require.Less(t, store.MaxBatch, MaxApplyMutations, "store.MaxBatch fits in one BATCH message")
}

// TestPartitionsRefuseBeforeSending: invalid batches, keys, levels and
// limits send nothing; a done context is reported as certainly not
// applied.
func TestPartitionsRefuseBeforeSending(t *testing.T) {
	ctx := context.Background()
	p, m := modelPartitions(t, Options{})
	put := store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1}
	require.ErrorIs(t, p.Apply(ctx, []store.Mutation{put, {Partition: "p", Op: store.OpPut, Timestamp: 2}}), crdt.ErrInvalidAmount)
	require.ErrorIs(t, p.Scan(ctx, "", nil, store.ReadAny, func(store.Row) bool { return true }), crdt.ErrInvalidKey)
	require.ErrorIs(t, p.Scan(ctx, "p", nil, store.Read(9), func(store.Row) bool { return true }), crdt.ErrInvalidConfig)
	_, err := p.Snapshot(ctx, "p", -1, store.ReadAny)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = p.Snapshot(ctx, "a\x00", 1, store.ReadAny)
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = p.Apply(cctx, []store.Mutation{put})
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.ErrorIs(t, err, context.Canceled)
	_, err = p.Snapshot(cctx, "p", 1, store.ReadComplete)
	require.ErrorIs(t, err, context.Canceled)
	reads, writes := m.counts()
	require.Zero(t, reads)
	require.Zero(t, writes)
	require.NoError(t, p.Apply(ctx, nil), "an empty batch sends nothing")
	_, writes = m.counts()
	require.Zero(t, writes)
}

// refPartitions is the reference meaning of store.Mutation, straight from
// the contract's helpers: every mutation ever applied is kept, and a row
// is the winning put (store.Wins) among those no deletion shadows
// (Mutation.Shadows).
type refPartitions struct{ log []store.Mutation }

func (r *refPartitions) rows(partition string) []store.Row {
	best := map[string]store.Mutation{}
	for _, m := range r.log {
		if m.Partition != partition || m.Op != store.OpPut {
			continue
		}
		shadowed := false
		for _, d := range r.log {
			if d.Partition == partition && d.Op != store.OpPut && d.Shadows(m.Key, m.Timestamp) {
				shadowed = true
				break
			}
		}
		if shadowed {
			continue
		}
		if b, ok := best[string(m.Key)]; !ok || store.Wins(m.Value, m.Timestamp, b.Value, b.Timestamp) {
			best[string(m.Key)] = m
		}
	}
	out := make([]store.Row, 0, len(best))
	for k, m := range best {
		out = append(out, store.Row{Key: []byte(k), Value: m.Value})
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].Key, out[j].Key) < 0 })
	return out
}

// referenceKeys are the keys of random batches: the empty key, keys that
// differ only in high bytes, and keys that are prefixes of others.
var referenceKeys = [][]byte{{}, {0}, {0, 0}, {1}, {0x7f}, {0x80}, {0xff}, {0xff, 0}, []byte("a"), []byte("ab"), []byte("b")}

func randomKey(rng *rand.Rand) []byte {
	return bytes.Clone(referenceKeys[rng.Intn(len(referenceKeys))])
}

// randomBatch returns one to four mutations of parts: puts, row, range
// and partition deletes, with colliding timestamps.
func randomBatch(rng *rand.Rand, parts []string) []store.Mutation {
	var batch []store.Mutation
	for i := 0; i < 1+rng.Intn(4); i++ {
		m := store.Mutation{Partition: parts[rng.Intn(len(parts))], Timestamp: int64(1 + rng.Intn(20))}
		switch rng.Intn(10) {
		case 0, 1, 2, 3, 4:
			m.Op, m.Key, m.Value = store.OpPut, randomKey(rng), []byte{byte(rng.Intn(3)) + 1}
		case 5, 6:
			m.Op, m.Key = store.OpDelete, randomKey(rng)
		case 7, 8:
			m.Op, m.Key = store.OpDeleteRange, randomKey(rng)
			if rng.Intn(3) > 0 {
				m.End = randomKey(rng)
				if bytes.Compare(m.End, m.Key) <= 0 {
					m.Key, m.End = m.End, m.Key
				}
				if bytes.Equal(m.Key, m.End) {
					m.End = append(m.End, 0)
				}
			}
		default:
			m.Op = store.OpDeletePartition
		}
		batch = append(batch, m)
	}
	return batch
}

// TestPartitionsMatchReference applies random batches (puts, row, range
// and partition deletes, colliding timestamps, keys that differ only in
// high bytes, the empty key) through the adapter's statements to the
// model of Cassandra, and through the contract's own helpers to the
// reference, and compares Snapshot and Scans (from random keys, with small
// pages) after every batch.
//
// Replay: COUNTERKIT_SEED=<seed> go test -run TestPartitionsMatchReference .
func TestPartitionsMatchReference(t *testing.T) {
	seed := testSeed(t)
	ctx := context.Background()
	for c := 0; c < testCases(t, 60); c++ {
		rng := rand.New(rand.NewSource(seed + int64(c)))
		p, _ := modelPartitions(t, Options{ScanPageSize: 1 + rng.Intn(4)})
		ref := &refPartitions{}
		parts := []string{"p", "q"}
		for step := 0; step < 30; step++ {
			batch := randomBatch(rng, parts)
			require.NoError(t, p.Apply(ctx, batch), "seed %d case %d step %d", seed, c, step)
			ref.log = append(ref.log, batch...)
			for _, part := range parts {
				want := ref.rows(part)
				got, err := p.Snapshot(ctx, part, len(want), store.ReadComplete)
				require.NoError(t, err)
				require.Equal(t, norm(want), norm(got), "seed %d case %d step %d: snapshot after %+v", seed, c, step, batch)
				if len(want) > 0 {
					_, err = p.Snapshot(ctx, part, len(want)-1, store.ReadAny)
					require.ErrorIs(t, err, crdt.ErrTooLarge, "one row over the limit")
				}
				from := randomKey(rng)
				var scanned []store.Row
				require.NoError(t, p.Scan(ctx, part, from, store.ReadAny, func(r store.Row) bool {
					scanned = append(scanned, r)
					return true
				}))
				var wantFrom []store.Row
				for _, r := range want {
					if bytes.Compare(r.Key, from) >= 0 {
						wantFrom = append(wantFrom, r)
					}
				}
				require.Equal(t, norm(wantFrom), norm(scanned), "seed %d case %d step %d: scan from %x", seed, c, step, from)
			}
		}
	}
}

// norm makes empty and nil slices compare equal.
func norm(rows []store.Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fmt.Sprintf("%x=%x", r.Key, r.Value)
	}
	return out
}

// TestScanIsLazy: Scan asks for the next page only after fn took every
// row of the previous one, passes the server's paging state along, and
// sends no request after fn stops.
func TestScanIsLazy(t *testing.T) {
	ctx := context.Background()
	p, m := modelPartitions(t, Options{ScanPageSize: 3})
	var muts []store.Mutation
	for i := 0; i < 10; i++ {
		muts = append(muts, store.Mutation{Partition: "p", Op: store.OpPut, Key: []byte{byte(i)}, Value: []byte{1}, Timestamp: 1})
	}
	require.NoError(t, p.Apply(ctx, muts))
	for _, c := range []struct{ take, pages int }{{1, 1}, {3, 1}, {4, 2}, {9, 3}, {10, 4}, {11, 4}} {
		r0, _ := m.counts()
		n := 0
		require.NoError(t, p.Scan(ctx, "p", nil, store.ReadAny, func(store.Row) bool { n++; return n < c.take }))
		r1, _ := m.counts()
		require.Equal(t, min(c.take, 10), n)
		require.Equal(t, c.pages, r1-r0, "pages read to take %d rows", c.take)
	}
	// Page requests: the configured size, the level's op, and each
	// request after the first carries the previous page's state.
	db := p.db
	it := &fakeIter{rows: [][]any{{[]byte("a"), []byte("v")}}}
	calls := fakePages(db, it)
	require.NoError(t, p.Scan(ctx, "p", []byte("a"), store.ReadComplete, func(store.Row) bool { return true }))
	require.Equal(t, []pageCall{{OpPartitionReadComplete, 3, nil}}, *calls)
	fakePages(db, &fakeIter{err: readTimeout()})
	err := p.Scan(ctx, "p", nil, store.ReadAny, func(store.Row) bool { return true })
	require.ErrorIs(t, err, crdt.ErrUnavailable)
}

// TestSnapshotIsOnePage: one request of limit+1 rows at the level's op; a
// partition with more rows, or whose page came back with a paging state,
// is refused rather than read in pieces.
func TestSnapshotIsOnePage(t *testing.T) {
	ctx := context.Background()
	db := unitDB(t)
	row := func(k string) []any { return []any{[]byte(k), []byte("v")} }
	it := &fakeIter{rows: [][]any{row("a"), row("b")}}
	calls := fakePages(db, it)
	rows, err := db.Partitions().Snapshot(ctx, "p", 2, store.ReadAny)
	require.NoError(t, err)
	require.Equal(t, []store.Row{{Key: []byte("a"), Value: []byte("v")}, {Key: []byte("b"), Value: []byte("v")}}, rows)
	require.Equal(t, []pageCall{{OpPartitionRead, 3, nil}}, *calls)
	require.True(t, it.closed)

	calls = fakePages(db, &fakeIter{rows: [][]any{row("a"), row("b"), row("c")}})
	_, err = db.Partitions().Snapshot(ctx, "p", 2, store.ReadComplete)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.Equal(t, []pageCall{{OpPartitionReadComplete, 3, nil}}, *calls)

	fakePages(db, &fakeIter{rows: [][]any{row("a")}, pageState: []byte{1}})
	_, err = db.Partitions().Snapshot(ctx, "p", 5, store.ReadAny)
	require.ErrorIs(t, err, crdt.ErrTooLarge, "a second page would be a second read")

	calls = fakePages(db, &fakeIter{})
	rows, err = db.Partitions().Snapshot(ctx, "p", int(^uint(0)>>1), store.ReadAny)
	require.NoError(t, err)
	require.Empty(t, rows)
	require.Equal(t, maxPageRows, (*calls)[0].pageSize, "a huge limit asks for the largest page the protocol allows")

	fakePages(db, &fakeIter{err: readTimeout()})
	_, err = db.Partitions().Snapshot(ctx, "p", 5, store.ReadAny)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
}
