package cassandra

// Integration tests. Each body runs through eachTarget (targets_test.go):
// on the model of Cassandra's rules always, and on the real Cassandra named
// by CASSANDRA_HOSTS (see harness_test.go) when it is set, where statements
// are real CQL at real consistency levels and timestamps real write
// timestamps. The model runs keep every expectation checked in CI.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/store"
)

func TestIntegrationSiblings(t *testing.T) { eachTarget(t, integrationSiblings) }

func integrationSiblings(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	s := db.Siblings()
	ctx := context.Background()
	key := uniqueKey(t, "s")

	got, tok, err := s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Empty(t, got)
	require.Nil(t, tok)

	require.NoError(t, s.Put(ctx, key, "b", []byte("b1"), nil))
	require.NoError(t, s.Put(ctx, key, "a", []byte("a1"), nil))
	require.NoError(t, s.Put(ctx, key, "a", []byte("a2"), nil))
	require.NoError(t, s.Put(ctx, key, "a", []byte("a2"), nil)) // a retry rewrites the same row

	cctx, c := counting(ctx)
	got, tok, err = s.Fetch(cctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("a2"), []byte("b1")}, got, "one row per actor, actor order, last write wins")
	requireCalls(t, c, 1, 0, 1, "fetch")

	// A Put with the token supersedes what the Fetch returned, in one
	// single-partition batch; a row written since survives as a sibling.
	require.NoError(t, s.Put(ctx, key, "c", []byte("c1"), nil))
	cctx, c = counting(ctx)
	require.NoError(t, s.Put(cctx, key, "a", []byte("merged"), tok))
	requireCalls(t, c, 0, 1, 0, "put")
	_, _, b, _ := c.snapshot()
	require.Equal(t, 1, b, "the put deletes b's row in the same batch")
	got, tok, err = s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("c1"), []byte("merged")}, sortedValues(got), "the unseen sibling survives")

	// Two writers with the same token: both survive.
	require.NoError(t, s.Put(ctx, key, "x", []byte("from-x"), tok))
	require.NoError(t, s.Put(ctx, key, "y", []byte("from-y"), tok))
	got, tok, err = s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("from-x"), []byte("from-y")}, got)
	require.NoError(t, s.Put(ctx, key, "x", []byte("all"), tok))
	got, _, err = s.Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("all")}, got, "a put whose token covers every row collapses them")

	// Binary values and awkward keys round-trip.
	odd := uniqueKey(t, `it's "odd"; DROP TABLE x --/ключ`)
	v := []byte{0, 0xff, 0x80, 0}
	require.NoError(t, s.Put(ctx, odd, "a", v, nil))
	got, _, err = s.Fetch(ctx, odd)
	require.NoError(t, err)
	require.Equal(t, [][]byte{v}, got)
}

func sortedValues(v [][]byte) [][]byte {
	out := append([][]byte(nil), v...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if bytes.Compare(out[j], out[i]) < 0 {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestIntegrationTimestampsSurviveClockSteps moves the DB's wall clock back
// an hour between two puts by the same actor. Because the actor fetches
// (and so observes its row's WRITETIME) before putting, the second put
// still wins.
func TestIntegrationTimestampsSurviveClockSteps(t *testing.T) {
	eachTarget(t, integrationTimestampsSurviveClockSteps)
}

func integrationTimestampsSurviveClockSteps(t *testing.T, tg *target) {
	ctx := context.Background()
	key := uniqueKey(t, "skew")
	wall := time.Now()
	opts := Options{Now: func() time.Time { return wall }}
	first := tg.newDB(t, opts)
	require.NoError(t, first.Siblings().Put(ctx, key, "a", []byte("v1"), nil))

	// A fresh DB (a restarted process) whose clock is an hour behind.
	wall = wall.Add(-time.Hour)
	second := tg.newDB(t, opts)
	_, token, err := second.Siblings().Fetch(ctx, key)
	require.NoError(t, err)
	require.NoError(t, second.Siblings().Put(ctx, key, "a", []byte("v2"), token))
	vals, _, err := second.Siblings().Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("v2")}, vals)

	// Without the fetch, the behind clock would lose: this documents why
	// clients read before they write.
	third := tg.newDB(t, opts)
	require.NoError(t, third.Siblings().Put(ctx, key, "a", []byte("v3"), nil))
	vals, _, err = third.Siblings().Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("v2")}, vals)
}

// TestIntegrationPartitionsRules checks, against the server, the
// timestamp rules store.Mutation states: greater timestamp wins, equal
// timestamps keep the greater value, a delete shadows values at or below
// its timestamp forever, a later value reappears, range deletes cover
// [Key, End) with either bound open, a partition delete covers everything;
// and that Snapshot and Scan return rows in unsigned byte order.
func TestIntegrationPartitionsRules(t *testing.T) { eachTarget(t, integrationPartitionsRules) }

func integrationPartitionsRules(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{ScanPageSize: 2})
	p := db.Partitions()
	ctx := context.Background()
	part := uniqueKey(t, "rules")
	apply := func(muts ...store.Mutation) {
		t.Helper()
		for i := range muts {
			muts[i].Partition = part
		}
		cctx, calls := counting(ctx)
		require.NoError(t, p.Apply(cctx, muts))
		requireCalls(t, calls, 0, 1, 0, "apply")
	}
	put := func(k string, v string, ts int64) store.Mutation {
		return store.Mutation{Op: store.OpPut, Key: []byte(k), Value: []byte(v), Timestamp: ts}
	}
	rows := func() map[string]string {
		t.Helper()
		cctx, calls := counting(ctx)
		got, err := p.Snapshot(cctx, part, 100, store.ReadComplete)
		require.NoError(t, err)
		requireCalls(t, calls, 1, 0, 1, "snapshot")
		out := map[string]string{}
		for i, r := range got {
			if i > 0 {
				require.Negative(t, bytes.Compare(got[i-1].Key, r.Key), "ascending unsigned byte order")
			}
			out[string(r.Key)] = string(r.Value)
		}
		return out
	}
	require.Empty(t, rows())

	apply(put("m1", "a", 100), put("m1", "b", 50), put("m2", "x", 100), put("m3", "y", 300))
	require.Equal(t, map[string]string{"m1": "a", "m2": "x", "m3": "y"}, rows(), "older timestamp loses, within one batch too")
	apply(put("m2", "w", 100))
	require.Equal(t, "x", rows()["m2"], "equal timestamps: the greater value stays")
	apply(put("m2", "z", 100))
	require.Equal(t, "z", rows()["m2"], "equal timestamps: the greater value wins")
	apply(put("hi", "\x7f", 100), put("hi", "\x80", 100))
	require.Equal(t, "\x80", rows()["hi"], "equal timestamps: values compare as unsigned bytes (4.0; 3.x compared signed)")
	apply(store.Mutation{Op: store.OpDelete, Key: []byte("hi"), Timestamp: 100})

	apply(store.Mutation{Op: store.OpDelete, Key: []byte("m1"), Timestamp: 200}, store.Mutation{Op: store.OpDelete, Key: []byte("m2"), Timestamp: 100})
	require.Equal(t, map[string]string{"m3": "y"}, rows(), "a delete at the value's own timestamp shadows it")
	apply(put("m1", "late", 150), put("m2", "again", 101))
	require.Equal(t, map[string]string{"m2": "again", "m3": "y"}, rows(), "below the delete stays invisible, above reappears")

	// Range deletes, with the empty key and high bytes.
	keys := []string{"", "\x00", "\x01", "a", "ab", "b", "\x7f", "\x80", "\xff", "\xff\x00"}
	var muts []store.Mutation
	for _, k := range keys {
		muts = append(muts, put(k, "v", 400))
	}
	apply(muts...)
	apply(store.Mutation{Op: store.OpDeleteRange, Key: []byte("a"), End: []byte("b"), Timestamp: 400})
	got := rows()
	require.NotContains(t, got, "a")
	require.NotContains(t, got, "ab")
	require.Contains(t, got, "b", "End is exclusive")
	apply(store.Mutation{Op: store.OpDeleteRange, End: []byte("\x01"), Timestamp: 400})
	got = rows()
	require.NotContains(t, got, "")
	require.NotContains(t, got, "\x00")
	require.Contains(t, got, "\x01")
	apply(store.Mutation{Op: store.OpDeleteRange, Key: []byte("\xff"), Timestamp: 400})
	got = rows()
	require.NotContains(t, got, "\xff")
	require.NotContains(t, got, "\xff\x00")
	require.Contains(t, got, "\x80", "0x80 sorts below 0xff: unsigned bytes")

	// Scan: from a key, early stop, across pages.
	var scanned []string
	require.NoError(t, p.Scan(ctx, part, []byte("\x01"), store.ReadAny, func(r store.Row) bool {
		scanned = append(scanned, string(r.Key))
		return true
	}))
	require.Equal(t, []string{"\x01", "b", "m2", "m3", "\x7f", "\x80"}, scanned, "unsigned byte order")
	n := 0
	cctx, calls := counting(ctx)
	require.NoError(t, p.Scan(cctx, part, nil, store.ReadAny, func(store.Row) bool { n++; return n < 3 }))
	require.Equal(t, 3, n)
	requireCalls(t, calls, 2, 0, 1, "a scan stopping at row 3 with pages of 2 reads two pages")

	// A batch over two partitions, then partition deletes.
	other := uniqueKey(t, "other")
	require.NoError(t, p.Apply(ctx, []store.Mutation{
		{Partition: part, Op: store.OpPut, Key: []byte("t"), Value: []byte("1"), Timestamp: 500},
		{Partition: other, Op: store.OpPut, Key: []byte("t"), Value: []byte("2"), Timestamp: 500},
	}))
	require.Equal(t, "1", rows()["t"])
	apply(store.Mutation{Op: store.OpDeletePartition, Timestamp: 450})
	require.Equal(t, map[string]string{"t": "1"}, rows(), "a partition delete shadows only what is at or below it")
	apply(store.Mutation{Op: store.OpDeleteRange, Timestamp: 500})
	require.Empty(t, rows(), "a range with no bounds is the whole partition")
	o, err := p.Snapshot(ctx, other, 10, store.ReadAny)
	require.NoError(t, err)
	require.Equal(t, []store.Row{{Key: []byte("t"), Value: []byte("2")}}, o, "partitions are independent")
}

// TestIntegrationPartitionsMatchReference runs random batches against the
// server and the contract's own helpers (refPartitions) and compares every
// partition after each batch.
func TestIntegrationPartitionsMatchReference(t *testing.T) {
	eachTarget(t, integrationPartitionsMatchReference)
}

func integrationPartitionsMatchReference(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{ScanPageSize: 3})
	p := db.Partitions()
	ctx := context.Background()
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	for c := 0; c < testCases(t, 5); c++ {
		parts := []string{uniqueKey(t, "p"), uniqueKey(t, "q")}
		ref := &refPartitions{}
		for step := 0; step < 25; step++ {
			batch := randomBatch(rng, parts)
			require.NoError(t, p.Apply(ctx, batch))
			ref.log = append(ref.log, batch...)
			for _, part := range parts {
				got, err := p.Snapshot(ctx, part, 100, store.ReadComplete)
				require.NoError(t, err)
				require.Equal(t, norm(ref.rows(part)), norm(got), "seed %d case %d step %d after %+v", seed, c, step, batch)
			}
		}
	}
}

func TestIntegrationErrorMapping(t *testing.T) { eachTarget(t, integrationErrorMapping) }

func integrationErrorMapping(t *testing.T, tg *target) {
	ctx := context.Background()
	// A table that does not exist is a misconfiguration, and the driver's
	// typed error stays reachable.
	db := tg.newDB(t, Options{TablePrefix: "missing_"})
	err := db.Siblings().Put(ctx, "k", "a", []byte("v"), nil)
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
	var inv *gocql.RequestErrInvalid
	require.ErrorAs(t, err, &inv)
	_, err = db.Partitions().Snapshot(ctx, "k", 1, store.ReadAny)
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)

	// A deadline that expires while the write is in flight is ambiguous.
	good := tg.newDB(t, Options{})
	sawAmbiguous := false
	for i := 0; i < 50 && !sawAmbiguous; i++ {
		dctx, cancel := context.WithTimeout(ctx, time.Duration(i*20)*time.Microsecond)
		err := good.Siblings().Put(dctx, uniqueKey(t, "d"), "a", []byte("v"), nil)
		cancel()
		if err == nil {
			continue
		}
		require.True(t, errors.Is(err, crdt.ErrAmbiguousWrite) || errors.Is(err, crdt.ErrUnavailable), "%v", err)
		require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
		sawAmbiguous = sawAmbiguous || errors.Is(err, crdt.ErrAmbiguousWrite)
	}
	t.Logf("saw an ambiguous write: %v", sawAmbiguous)

	// Asking for THREE replicas on a single-replica keyspace is refused by
	// the coordinator as unavailable. Without retries (the session's
	// policy could resend to another coordinator on a multi-node cluster,
	// which makes the outcome ambiguous; see
	// TestIntegrationRetriedWriteIsAmbiguous) that is a certain "not
	// applied".
	needSingleReplica(t, tg, "the rest of this test")
	three := tg.newDB(t, Options{
		Consistency: map[Op]gocql.Consistency{OpSiblingsPut: gocql.Three, OpSiblingsFetch: gocql.All},
		RetryPolicy: &gocql.SimpleRetryPolicy{NumRetries: 0},
	})
	err = three.Siblings().Put(ctx, uniqueKey(t, "u"), "a", []byte("v"), nil)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	var un *gocql.RequestErrUnavailable
	require.ErrorAs(t, err, &un)
}

// TestIntegrationConcurrentActors runs several goroutines, each its own
// actor, over one key of a Siblings store through statestore. Each
// increment loads and merges the key, adds one as its actor and saves, and
// some saves run under a tiny deadline so they fail ambiguously (landed or
// not) and are retried with the same state. The total is exact because an
// actor's retry rewrites the same row with the state it already meant to
// write.
func TestIntegrationConcurrentActors(t *testing.T) { eachTarget(t, integrationConcurrentActors) }

func integrationConcurrentActors(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	st := db.Siblings()
	ctx := context.Background()
	key := uniqueKey(t, "conc")
	seed := testSeed(t)
	const actors = 6
	perActor := testCases(t, 40)
	var wg sync.WaitGroup
	errs := make(chan error, actors)
	for a := 0; a < actors; a++ {
		wg.Add(1)
		go func(a int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed + int64(a)))
			actor := crdt.ActorID(fmt.Sprintf("actor-%d", a))
			for i := 0; i < perActor; i++ {
				c, err := statestore.Load[gcounter.Counter](ctx, st, key)
				if err != nil {
					errs <- err
					return
				}
				if err := c.Increment(actor, 1); err != nil {
					errs <- err
					return
				}
				for attempt, end := 0, time.Now().Add(retryFor); ; attempt++ {
					sctx, cancel := ctx, context.CancelFunc(func() {})
					if rng.Intn(3) == 0 && attempt < 3 {
						sctx, cancel = context.WithTimeout(ctx, time.Duration(rng.Intn(400))*time.Microsecond)
					}
					err := statestore.Save(sctx, st, key, actor, c)
					cancel()
					if err == nil {
						break
					}
					if !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
						errs <- err
						return
					}
					if time.Now().After(end) {
						errs <- fmt.Errorf("%s: save %d still failing after %d retries in %v: %w", actor, i, attempt, retryFor, err)
						return
					}
				}
			}
		}(a)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	rows, _, err := st.Fetch(ctx, key)
	require.NoError(t, err)
	require.Len(t, rows, actors, "one row per actor")
	c, err := statestore.Load[gcounter.Counter](ctx, st, key)
	require.NoError(t, err)
	require.Equal(t, int64(actors*perActor), c.Value())
	for a := 0; a < actors; a++ {
		require.Equal(t, int64(perActor), c.Get(crdt.ActorID(fmt.Sprintf("actor-%d", a))))
	}
}

// sameHostRetry resends every failed statement to the same host, up to n
// more times, so a single-node cluster shows driver retries.
type sameHostRetry struct{ n int }

func (p sameHostRetry) Attempt(q gocql.RetryableQuery) bool { return q.Attempts() <= p.n }
func (sameHostRetry) GetRetryType(error) gocql.RetryType    { return gocql.Retry }

// TestIntegrationRetriedWriteIsAmbiguous checks, against the server, that
// the adapter reads the driver's attempt count for single statements and
// batches: a write the driver sent several times is ambiguous even when
// the last attempt's error (Unavailable: THREE replicas on RF 1) says "not
// applied", because an earlier attempt could have timed out after landing.
func TestIntegrationRetriedWriteIsAmbiguous(t *testing.T) {
	eachTarget(t, integrationRetriedWriteIsAmbiguous)
}

func integrationRetriedWriteIsAmbiguous(t *testing.T, tg *target) {
	needSingleReplica(t, tg, "this test")
	ctx := context.Background()
	levels := map[Op]gocql.Consistency{
		OpSiblingsPut: gocql.Three, OpPartitionApply: gocql.Three,
		// Reads at ALL overlap writes at THREE.
		OpSiblingsFetch: gocql.All, OpPartitionRead: gocql.All,
	}
	for _, c := range []struct {
		retries int
		want    error
	}{{0, crdt.ErrUnavailable}, {2, crdt.ErrAmbiguousWrite}} {
		db := tg.newDB(t, Options{Consistency: levels, RetryPolicy: sameHostRetry{c.retries}})

		cctx, calls := counting(ctx)
		err := db.Siblings().Put(cctx, uniqueKey(t, "single"), "a", []byte("v"), nil)
		require.ErrorIs(t, err, c.want, "single statement, %d retries", c.retries)
		var un *gocql.RequestErrUnavailable
		require.ErrorAs(t, err, &un, "the last attempt's error stays reachable")
		_, w, _, _ := calls.snapshot()
		require.Equal(t, c.retries+1, w, "attempts of the single statement")

		cctx, calls = counting(ctx)
		err = db.Partitions().Apply(cctx, []store.Mutation{
			{Partition: uniqueKey(t, "b1"), Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1},
			{Partition: uniqueKey(t, "b2"), Op: store.OpPut, Key: []byte("k"), Value: []byte("v"), Timestamp: 1},
		})
		require.ErrorIs(t, err, c.want, "batch, %d retries", c.retries)
		require.ErrorAs(t, err, &un)
		_, w, b, _ := calls.snapshot()
		require.Equal(t, c.retries+1, w, "attempts of the batch")
		require.Equal(t, c.retries+1, b)
	}
}

// TestIntegrationSinglePageReads checks that Fetch and Snapshot are one
// request even above the driver's default page size (5000 rows), so a
// concurrent single-partition batch cannot fall between two pages, and
// that a key or partition above the limit is refused with
// crdt.ErrTooLarge.
func TestIntegrationSinglePageReads(t *testing.T) { eachTarget(t, integrationSinglePageReads) }

func integrationSinglePageReads(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	ctx := context.Background()
	const rows = 5001 // one more than gocql's default page size

	part, key := uniqueKey(t, "part"), uniqueKey(t, "sib")
	p := db.Partitions()
	fillPartition := func(from, to int) {
		t.Helper()
		var muts []store.Mutation
		for i := from; i < to; i++ {
			muts = append(muts, store.Mutation{Partition: part, Op: store.OpPut, Key: []byte(fmt.Sprintf("r%05d", i)), Value: []byte{1}, Timestamp: 100})
			if len(muts) == 1000 || i == to-1 {
				require.NoError(t, p.Apply(ctx, muts), "a single-partition batch is one mutation")
				muts = nil
			}
		}
	}
	fillPartition(0, rows)
	fillSiblings(t, db, key, 0, rows)

	for _, level := range []store.Read{store.ReadAny, store.ReadComplete} {
		cctx, calls := counting(ctx)
		got, err := p.Snapshot(cctx, part, rows, level)
		require.NoError(t, err)
		require.Len(t, got, rows)
		requireCalls(t, calls, 1, 0, 1, "snapshot of 5001 rows")
	}
	_, err := p.Snapshot(ctx, part, rows-1, store.ReadAny)
	require.ErrorIs(t, err, crdt.ErrTooLarge)

	cctx, calls := counting(ctx)
	got, _, err := db.Siblings().Fetch(cctx, key)
	require.NoError(t, err)
	require.Len(t, got, rows)
	requireCalls(t, calls, 1, 0, 1, "fetch of 5001 rows")

	// Above the cap: refused, not read in pieces.
	fillSiblings(t, db, key, rows, MaxSiblings+1)
	_, _, err = db.Siblings().Fetch(ctx, key)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
}

// fillSiblings writes actor rows from..to of key directly, in
// single-partition batches of the same INSERT Put sends.
func fillSiblings(t *testing.T, db *DB, key string, from, to int) {
	t.Helper()
	s := db.Siblings()
	var stmts []stmt
	for i := from; i < to; i++ {
		stmts = append(stmts, stmt{cql: s.cql(siblingsInsert), args: []any{key, fmt.Sprintf("a%05d", i), []byte{1}, int64(100)}, key: key})
		if len(stmts) == 1000 || i == to-1 {
			require.NoError(t, db.write(context.Background(), OpSiblingsPut, stmts))
			stmts = nil
		}
	}
}

// TestIntegrationTombstoneOverwhelming: a read that scans more than
// tombstone_failure_threshold (100,000) tombstones is aborted by Cassandra,
// reported as crdt.ErrUnavailable (README, Caveats); fewer are read.
func TestIntegrationTombstoneOverwhelming(t *testing.T) {
	eachTarget(t, integrationTombstoneOverwhelming)
}

func integrationTombstoneOverwhelming(t *testing.T, tg *target) {
	if tg.double {
		t.Skip("cassandratest.Server does not play tombstone_failure_threshold (its package doc)")
	}
	sequentialOnModel(t, tg)
	db := tg.newDB(t, Options{})
	p := db.Partitions()
	ctx := context.Background()
	part := uniqueKey(t, "tombs")
	deleteRows := func(from, to int) {
		t.Helper()
		for b := from; b < to; b += store.MaxBatch {
			muts := make([]store.Mutation, 0, store.MaxBatch)
			for i := b; i < min(b+store.MaxBatch, to); i++ {
				muts = append(muts, store.Mutation{Partition: part, Op: store.OpDelete, Key: []byte(fmt.Sprintf("k%06d", i)), Timestamp: 1})
			}
			require.NoError(t, p.Apply(ctx, muts))
		}
	}
	require.NoError(t, p.Apply(ctx, []store.Mutation{{Partition: part, Op: store.OpPut, Key: []byte("z"), Value: []byte{1}, Timestamp: 2}}))
	deleteRows(0, 90_000)
	rows, err := p.Snapshot(ctx, part, 10, store.ReadComplete)
	require.NoError(t, err, "90,000 tombstones: read")
	require.Len(t, rows, 1)
	deleteRows(90_000, 101_000)
	_, err = p.Snapshot(ctx, part, 10, store.ReadComplete)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "101,000 tombstones: Cassandra aborts the read")
	var rf *gocql.RequestErrReadFailure
	require.ErrorAs(t, err, &rf)
}

// TestIntegrationRangeTombstonesSeenOnce: what balance.Transactions' row
// partitions rely on (SPEC.md 10.2): a read scans a range tombstone once,
// however many older ones it contains, and not the row tombstones it
// covers. 101,000 row tombstones, then 101,000 open-ended range deletes,
// each newer and starting earlier than the last, and the rows before them
// read.
func TestIntegrationRangeTombstonesSeenOnce(t *testing.T) {
	eachTarget(t, integrationRangeTombstonesSeenOnce)
}

func integrationRangeTombstonesSeenOnce(t *testing.T, tg *target) {
	if tg.double {
		t.Skip("cassandratest.Server does not play tombstone_failure_threshold (its package doc)")
	}
	sequentialOnModel(t, tg)
	db := tg.newDB(t, Options{})
	p := db.Partitions()
	ctx := context.Background()
	part := uniqueKey(t, "ranges")
	const n = 101_000
	write := func(mut func(i int) store.Mutation) {
		t.Helper()
		for b := 0; b < n; b += store.MaxBatch {
			muts := make([]store.Mutation, 0, store.MaxBatch)
			for i := b; i < min(b+store.MaxBatch, n); i++ {
				muts = append(muts, mut(i))
			}
			require.NoError(t, p.Apply(ctx, muts))
		}
	}
	require.NoError(t, p.Apply(ctx, []store.Mutation{{Partition: part, Op: store.OpPut, Key: []byte("a"), Value: []byte{1}, Timestamp: 1}}))
	write(func(i int) store.Mutation {
		return store.Mutation{Partition: part, Op: store.OpDelete, Key: []byte(fmt.Sprintf("k%06d", i)), Timestamp: 1}
	})
	_, err := p.Snapshot(ctx, part, 10, store.ReadComplete)
	require.ErrorIs(t, err, crdt.ErrUnavailable, "101,000 row tombstones")
	write(func(i int) store.Mutation {
		return store.Mutation{Partition: part, Op: store.OpDeleteRange, Key: []byte(fmt.Sprintf("k%06d", n-i)), Timestamp: int64(2 + i)}
	})
	rows, err := p.Snapshot(ctx, part, 10, store.ReadComplete)
	require.NoError(t, err, "the row tombstones under one range tombstone, and 101,000 nested range tombstones")
	require.Len(t, rows, 1)
}

// TestIntegrationBatchTooLarge checks the size refusals of a batch over
// several partitions, each with nothing applied:
//
//   - Apply refuses one whose keys and values add up to more than
//     store.MaxSpanningBatchBytes (32 KiB) itself, with crdt.ErrTooLarge,
//     before sending anything, and sends one of exactly that size, which
//     the server accepts;
//   - the server refuses a batch above batch_size_fail_threshold_in_kb
//     (50 KiB by default) with "Batch too large", which the adapter maps to
//     crdt.ErrTooLarge. Apply never sends one, so this batch goes through
//     the adapter's write path directly;
//
// and that the same data in one partition (one mutation, exempt from both
// thresholds) is accepted.
func TestIntegrationBatchTooLarge(t *testing.T) { eachTarget(t, integrationBatchTooLarge) }

func integrationBatchTooLarge(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	p := db.Partitions()
	ctx := context.Background()
	data := make([]byte, 2048)
	for i := range data {
		data[i] = byte(i)
	}
	var parts []string
	var muts []store.Mutation
	for i := 0; i < 100; i++ {
		part := uniqueKey(t, fmt.Sprintf("big%d", i))
		parts = append(parts, part)
		muts = append(muts, store.Mutation{Partition: part, Op: store.OpPut, Key: []byte("k"), Value: data, Timestamp: 100})
	}
	noneApplied := func(what string) {
		t.Helper()
		for _, part := range parts[:3] {
			rows, err := p.Snapshot(ctx, part, 1, store.ReadComplete)
			require.NoError(t, err)
			require.Empty(t, rows, "%s applies nothing", what)
		}
	}

	// Refused by Apply itself: no statement reaches the server.
	cctx, calls := counting(ctx)
	err := p.Apply(cctx, muts)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	var inv *gocql.RequestErrInvalid
	require.False(t, errors.As(err, &inv), "refused before sending, so no server error: %v", err)
	requireCalls(t, calls, 0, 0, 0, "a batch above store.MaxSpanningBatchBytes")
	noneApplied("a batch refused by Apply")

	// At the limit (16 rows of a 1-byte key and a 2015-byte value, each
	// counting store.SpanningOverhead besides): sent and applied; one byte
	// more is refused.
	const edgeValue = store.MaxSpanningBatchBytes/16 - 1 - store.SpanningOverhead
	edge := make([]store.Mutation, 16)
	for i := range edge {
		edge[i] = store.Mutation{Partition: uniqueKey(t, fmt.Sprintf("edge%d", i)), Op: store.OpPut, Key: []byte("k"), Value: data[:edgeValue], Timestamp: 100}
	}
	over := append([]store.Mutation(nil), edge...)
	over[0].Value = data[:edgeValue+1]
	require.ErrorIs(t, p.Apply(ctx, over), crdt.ErrTooLarge)
	cctx, calls = counting(ctx)
	require.NoError(t, p.Apply(cctx, edge), "a batch of store.MaxSpanningBatchBytes across partitions")
	requireCalls(t, calls, 0, 1, 0, "a batch at store.MaxSpanningBatchBytes")
	rows, err := p.Snapshot(ctx, edge[15].Partition, 1, store.ReadComplete)
	require.NoError(t, err)
	require.Equal(t, []store.Row{{Key: []byte("k"), Value: data[:edgeValue]}}, rows)

	// Refused by the server: the same 100 rows sent as one LOGGED batch.
	stmts, err := p.applyStmts(muts[:1])
	require.NoError(t, err)
	for _, m := range muts[1:] {
		stmts = append(stmts, p.mutationStmt(m))
	}
	err = db.write(ctx, OpPartitionApply, stmts)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	require.ErrorAs(t, err, &inv)
	require.Contains(t, inv.Message(), "Batch too large")
	noneApplied("a batch the server refused")

	one := uniqueKey(t, "one")
	for i := range muts {
		muts[i].Partition = one
		muts[i].Key = []byte(fmt.Sprintf("k%03d", i))
	}
	require.NoError(t, p.Apply(ctx, muts), "a single-partition batch is one mutation")
	rows, err = p.Snapshot(ctx, one, 100, store.ReadComplete)
	require.NoError(t, err)
	require.Len(t, rows, 100)
}

// TestIntegrationSpanningBatchWorstCase checks the batch over several
// partitions that Apply's own limit lets through and Cassandra 4.0 sizes
// largest: as many puts of an empty key and a one-byte value as
// store.CheckMutations takes (store.SpanningOverhead a mutation: 992),
// each in a partition of its own. 4.0 counts each row 36 bytes besides
// its key and value and each partition 12 (IMutation.dataSize), about
// 48,600 bytes, under batch_size_fail_threshold_in_kb (51,200): the
// server accepts it.
// And 1,500 such rows over two partitions, which Apply never sends, go
// through the adapter's write path directly: 4.0 counts at least 58,500
// bytes and refuses them with "Batch too large", which 3.x's count (16 a
// row, 28,500 bytes) would have taken.
func TestIntegrationSpanningBatchWorstCase(t *testing.T) {
	eachTarget(t, integrationSpanningBatchWorstCase)
}

func integrationSpanningBatchWorstCase(t *testing.T, tg *target) {
	db := tg.newDB(t, Options{})
	p := db.Partitions()
	ctx := context.Background()
	n := store.MaxSpanningBatchBytes / (store.SpanningOverhead + 1)
	muts := make([]store.Mutation, n)
	for i := range muts {
		muts[i] = store.Mutation{Partition: uniqueKey(t, fmt.Sprintf("tiny%d", i)), Op: store.OpPut, Key: []byte{}, Value: []byte{byte(i)}, Timestamp: 100}
	}
	over := append(muts[:n:n], store.Mutation{Partition: uniqueKey(t, "tiny-over"), Op: store.OpPut, Key: []byte{}, Value: []byte{1}, Timestamp: 100})
	require.ErrorIs(t, p.Apply(ctx, over), crdt.ErrTooLarge, "one more put is past Apply's own limit")
	cctx, calls := counting(ctx)
	require.NoError(t, p.Apply(cctx, muts), "Cassandra 4.0 takes the largest batch Apply sends")
	requireCalls(t, calls, 0, 1, 0, "the worst-case batch across partitions")
	for _, i := range []int{0, n - 1} {
		rows, err := p.Snapshot(ctx, muts[i].Partition, 1, store.ReadComplete)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		require.Empty(t, rows[0].Key)
		require.Equal(t, []byte{byte(i)}, rows[0].Value)
	}

	parts := []string{uniqueKey(t, "rows0"), uniqueKey(t, "rows1")}
	var stmts []stmt
	for i := range 1500 {
		m := store.Mutation{Partition: parts[i%2], Op: store.OpPut, Key: []byte{byte(i >> 8), byte(i)}, Value: []byte{1}, Timestamp: 100}
		if i == 0 {
			first, err := p.applyStmts([]store.Mutation{m})
			require.NoError(t, err)
			stmts = append(stmts, first...)
			continue
		}
		stmts = append(stmts, p.mutationStmt(m))
	}
	err := db.write(ctx, OpPartitionApply, stmts)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	var inv *gocql.RequestErrInvalid
	require.ErrorAs(t, err, &inv)
	require.Contains(t, inv.Message(), "Batch too large")
	for _, part := range parts {
		rows, err := p.Snapshot(ctx, part, 1, store.ReadComplete)
		require.NoError(t, err)
		require.Empty(t, rows, "the refused batch applied nothing")
	}
}

// TestIntegrationSiblingsSimulation runs the sibling simulation of
// TestSiblingsSimulation against the server: processes with clocks skewed
// by up to ±2 s that step backwards, restarts, stale tokens; after every
// step the rows Cassandra keeps visible must equal the plain sibling
// model's.
func TestIntegrationSiblingsSimulation(t *testing.T) { eachTarget(t, integrationSiblingsSimulation) }

func integrationSiblingsSimulation(t *testing.T, tg *target) {
	seed := testSeed(t)
	for c := 0; c < testCases(t, 5); c++ {
		key := uniqueKey(t, fmt.Sprint("sim", c))
		env := simEnv{
			key:     key,
			newDB:   func(now func() time.Time) *DB { return tg.newDB(t, Options{Now: now}) },
			wall:    time.Now,
			advance: func(time.Duration) {},
			rows:    func(db *DB) map[crdt.ActorID]string { return tg.siblingRows(t, db, key) },
		}
		runSiblingsSim(t, rand.New(rand.NewSource(seed+int64(c))), fmt.Sprintf("seed %d case %d", seed, c), env)
	}
}
