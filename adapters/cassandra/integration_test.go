package cassandra

// Integration tests: they need a real Cassandra (see harness_test.go) and
// skip without one. Nothing here passes against a fake: statements are real
// CQL at real consistency levels, timestamps are real write timestamps.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/statestore"
	"github.com/counterkit/counterkit/tally"
)

func TestIntegrationStateRows(t *testing.T) {
	db := newTestDB(t, Options{})
	st := db.States()
	ctx := context.Background()
	key := uniqueKey(t, "g")

	got, err := st.Load(ctx, key)
	require.NoError(t, err)
	require.Empty(t, got)

	a1, a2, b1 := gEnc(t, map[crdt.ActorID]int64{"a": 1}), gEnc(t, map[crdt.ActorID]int64{"a": 2}), gEnc(t, map[crdt.ActorID]int64{"b": 1})
	require.NoError(t, st.Save(ctx, key, "b", b1))
	require.NoError(t, st.Save(ctx, key, "a", a1))
	require.NoError(t, st.Save(ctx, key, "a", a2))
	require.NoError(t, st.Save(ctx, key, "a", a2)) // a retry rewrites the same row

	cctx, c := counting(ctx)
	got, err = st.Load(cctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{a2, b1}, got, "one row per actor, actor order, last write wins")
	requireCalls(t, c, 1, 0, 1, "state load")

	cctx, c = counting(ctx)
	require.NoError(t, st.Save(cctx, key, "c", gEnc(t, map[crdt.ActorID]int64{"c": 1})))
	requireCalls(t, c, 0, 1, 0, "state save")
}

// TestIntegrationTimestampsSurviveClockSteps moves the DB's wall clock back
// an hour between two saves by the same actor. Because the actor loads (and
// so observes its row's WRITETIME) before saving, the second save still wins.
func TestIntegrationTimestampsSurviveClockSteps(t *testing.T) {
	ctx := context.Background()
	key := uniqueKey(t, "skew")
	wall := time.Now()
	opts := Options{Now: func() time.Time { return wall }}
	first := newTestDB(t, opts)
	v1, v2, v3 := ledgerEnc(t, "a", "t1"), ledgerEnc(t, "a", "t1", "t2"), ledgerEnc(t, "a", "t1", "t2", "t3")
	require.NoError(t, first.Ledger().Put(ctx, key, "a", v1, nil))

	// A fresh DB (a restarted process) whose clock is an hour behind.
	wall = wall.Add(-time.Hour)
	second := newTestDB(t, opts)
	_, token, err := second.Ledger().Fetch(ctx, key)
	require.NoError(t, err)
	require.NoError(t, second.Ledger().Put(ctx, key, "a", v2, token))
	vals, _, err := second.Ledger().Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{v2}, vals)

	// Without the fetch, the behind clock would lose: this documents why
	// the per-actor stores read before they write.
	third := newTestDB(t, opts)
	require.NoError(t, third.Ledger().Put(ctx, key, "a", v3, nil))
	vals, _, err = third.Ledger().Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{v2}, vals)
}

func TestIntegrationLedgerAccounting(t *testing.T) {
	db := newTestDB(t, Options{})
	l := db.Ledger()
	ctx := context.Background()
	key := uniqueKey(t, "l")
	for i, a := range []crdt.ActorID{"x", "y", "z"} {
		require.NoError(t, l.Put(ctx, key, a, ledgerEnc(t, a, crdt.TxnID(fmt.Sprint("t", i))), nil))
	}
	cctx, c := counting(ctx)
	vals, token, err := l.Fetch(cctx, key)
	require.NoError(t, err)
	require.Len(t, vals, 3)
	merged := ledgerEnc(t, "x", "t0", "t1", "t2") // stands in for the merge of the three
	require.NoError(t, l.Put(cctx, key, "x", merged, token))
	requireCalls(t, c, 1, 1, 1, "ledger update (fetch + put: one single-partition batch)")
	_, _, b, _ := c.snapshot()
	require.Equal(t, 1, b, "the put supersedes y and z in the same batch")
	vals, _, err = l.Fetch(ctx, key)
	require.NoError(t, err)
	require.Equal(t, [][]byte{merged}, vals, "a put whose token covers every row collapses them")
}

func TestIntegrationTxBatch(t *testing.T) {
	db := newTestDB(t, Options{})
	ctx := context.Background()
	keys := []string{uniqueKey(t, "a"), uniqueKey(t, "b"), uniqueKey(t, "c")}
	tx := db.Tx()
	for i, k := range keys {
		require.NoError(t, tx.SaveState(k, "tx-actor", gEnc(t, map[crdt.ActorID]int64{"tx-actor": int64(i + 1)})))
	}
	// A transfer between two balance accounts and a log credit, in the
	// same transaction context.
	id := deltalog.NewIDAt(time.Now())
	from, to, logKey := uniqueKey(t, "from"), uniqueKey(t, "to"), uniqueKey(t, "log")
	require.NoError(t, tx.WriteBalance(
		balance.Mutation{Account: from, Row: balance.Row{UpdateID: id, Kind: balance.KindNormal, Amount: -30}},
		balance.Mutation{Account: to, Row: balance.Row{UpdateID: id, Kind: balance.KindNormal, Amount: 30}},
	))
	require.NoError(t, tx.InsertLog(deltalog.Entry{Counter: logKey, Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 30}}))
	cctx, c := counting(ctx)
	require.NoError(t, tx.Commit(cctx))
	_, w, b, _ := c.snapshot()
	require.Equal(t, 1, w)
	require.Equal(t, 1, b, "one logged batch for all counters")
	require.NoError(t, tx.Commit(ctx), "committing again is an idempotent retry")
	for i, k := range keys {
		got, err := db.States().Load(ctx, k)
		require.NoError(t, err)
		require.Equal(t, [][]byte{gEnc(t, map[crdt.ActorID]int64{"tx-actor": int64(i + 1)})}, got)
	}
	bl, err := balance.New(db.Balance(), balance.Options{})
	require.NoError(t, err)
	for acct, want := range map[string]int64{from: -30, to: 30} {
		v, err := bl.Balance(ctx, acct)
		require.NoError(t, err)
		require.Equal(t, want, v)
	}
	lc, err := deltalog.New(db.Log(), deltalog.Options{})
	require.NoError(t, err)
	r, err := lc.Read(ctx, logKey)
	require.NoError(t, err)
	require.Equal(t, int64(30), r.Value)
}

func TestIntegrationErrorMapping(t *testing.T) {
	s, ks := integration(t)
	ctx := context.Background()
	// A table that does not exist is a misconfiguration, and the driver's
	// typed error stays reachable.
	db, err := New(s, ks, Options{TablePrefix: "missing_"})
	require.NoError(t, err)
	one := gEnc(t, map[crdt.ActorID]int64{"a": 1})
	err = db.States().Save(ctx, "k", "a", one)
	require.ErrorIs(t, err, crdt.ErrMisconfiguredStore)
	var inv *gocql.RequestErrInvalid
	require.ErrorAs(t, err, &inv)

	// A deadline that expires while the write is in flight is ambiguous.
	good := newTestDB(t, Options{})
	sawAmbiguous := false
	for i := 0; i < 50 && !sawAmbiguous; i++ {
		dctx, cancel := context.WithTimeout(ctx, time.Duration(i*20)*time.Microsecond)
		err := good.States().Save(dctx, uniqueKey(t, "d"), "a", one)
		cancel()
		if err == nil {
			continue
		}
		require.True(t, errors.Is(err, crdt.ErrAmbiguousWrite) || errors.Is(err, crdt.ErrUnavailable), "%v", err)
		require.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
		sawAmbiguous = sawAmbiguous || errors.Is(err, crdt.ErrAmbiguousWrite)
	}
	t.Logf("saw an ambiguous write: %v", sawAmbiguous)

	// Consistency ALL against RF 1 works; asking for THREE replicas on a
	// single-replica keyspace is refused by the coordinator as unavailable.
	// Without retries (the session's policy could resend to another
	// coordinator on a multi-node cluster, which makes the outcome
	// ambiguous; see TestIntegrationRetriedWriteIsAmbiguous) that is a
	// certain "not applied".
	three, err := New(s, ks, Options{
		Consistency: map[Op]gocql.Consistency{OpStateSave: gocql.Three, OpStateLoad: gocql.All},
		RetryPolicy: &gocql.SimpleRetryPolicy{NumRetries: 0},
	})
	require.NoError(t, err)
	err = three.States().Save(ctx, uniqueKey(t, "u"), "a", one)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	var un *gocql.RequestErrUnavailable
	require.ErrorAs(t, err, &un)
}

// TestIntegrationConcurrentActors runs several goroutines, each its own
// actor, over one key. Each increment loads and merges the partition, adds
// one as its actor and saves its own row, and some saves run under a tiny
// deadline so they fail ambiguously (landed or not) and are retried with the
// same state. The total is exact because an actor's retry rewrites the same
// row with the state it already meant to write.
func TestIntegrationConcurrentActors(t *testing.T) {
	db := newTestDB(t, Options{})
	st := db.States()
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
				next, err := c.MarshalBinary()
				if err != nil {
					errs <- err
					return
				}
				for attempt := 0; ; attempt++ {
					sctx, cancel := ctx, context.CancelFunc(func() {})
					if rng.Intn(3) == 0 && attempt < 3 {
						sctx, cancel = context.WithTimeout(ctx, time.Duration(rng.Intn(400))*time.Microsecond)
					}
					err := st.Save(sctx, key, actor, next)
					cancel()
					if err == nil {
						break
					}
					if !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
						errs <- err
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
	rows, err := st.Load(ctx, key)
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
	s, ks := integration(t)
	ctx := context.Background()
	levels := map[Op]gocql.Consistency{
		OpStateSave: gocql.Three, OpTxCommit: gocql.Three,
		// Reads at ALL overlap writes at THREE.
		OpStateLoad: gocql.All, OpLedgerFetch: gocql.All, OpLogRead: gocql.All, OpBalanceRead: gocql.All,
	}
	one := gEnc(t, map[crdt.ActorID]int64{"a": 1})
	for _, c := range []struct {
		retries int
		want    error
	}{{0, crdt.ErrUnavailable}, {2, crdt.ErrAmbiguousWrite}} {
		db, err := New(s, ks, Options{Consistency: levels, RetryPolicy: sameHostRetry{c.retries}})
		require.NoError(t, err)

		cctx, calls := counting(ctx)
		err = db.States().Save(cctx, uniqueKey(t, "single"), "a", one)
		require.ErrorIs(t, err, c.want, "single statement, %d retries", c.retries)
		var un *gocql.RequestErrUnavailable
		require.ErrorAs(t, err, &un, "the last attempt's error stays reachable")
		_, w, _, _ := calls.snapshot()
		require.Equal(t, c.retries+1, w, "attempts of the single statement")

		tx := db.Tx()
		require.NoError(t, tx.SaveState(uniqueKey(t, "tx-a"), "a", one))
		require.NoError(t, tx.SaveState(uniqueKey(t, "tx-b"), "a", one))
		cctx, calls = counting(ctx)
		err = tx.Commit(cctx)
		require.ErrorIs(t, err, c.want, "batch, %d retries", c.retries)
		require.ErrorAs(t, err, &un)
		_, w, b, _ := calls.snapshot()
		require.Equal(t, c.retries+1, w, "attempts of the batch")
		require.Equal(t, c.retries+1, b)
	}
}

// TestIntegrationSinglePageReads checks that whole-partition reads are one
// request even above the driver's default page size (5000 rows), so a
// concurrent GC batch or ledger Put cannot fall between two pages, and that
// a partition above the adapter's cap is refused with crdt.ErrTooLarge.
func TestIntegrationSinglePageReads(t *testing.T) {
	db := newTestDB(t, Options{})
	ctx := context.Background()
	const rows = 5001 // one more than gocql's default page size

	tallyKey, stateKey := uniqueKey(t, "tally"), uniqueKey(t, "state")
	state := gEnc(t, map[crdt.ActorID]int64{"a": 1})
	fill := func(from, to int, add func(tx *Tx, i int) error) {
		t.Helper()
		tx := db.Tx()
		for i := from; i < to; i++ {
			if tx.Len() == MaxTxStatements {
				require.NoError(t, tx.Commit(ctx))
				tx = db.Tx()
			}
			require.NoError(t, add(tx, i))
		}
		require.NoError(t, tx.Commit(ctx))
	}
	shard := func(tx *Tx, i int) error {
		return tx.PutShard(tallyKey, tally.EncodedShard{Mutator: crdt.ActorID(fmt.Sprintf("m%05d", i)), Data: []byte{1}}, 100)
	}
	fill(0, rows, shard)
	fill(0, rows, func(tx *Tx, i int) error { return tx.SaveState(stateKey, crdt.ActorID(fmt.Sprintf("a%05d", i)), state) })

	for _, complete := range []bool{false, true} {
		cctx, calls := counting(ctx)
		shards, _, err := db.Tally().Read(cctx, tallyKey, complete)
		require.NoError(t, err)
		require.Len(t, shards, rows)
		requireCalls(t, calls, 1, 0, 1, "tally read of 5001 shards")
	}
	cctx, calls := counting(ctx)
	got, err := db.States().Load(cctx, stateKey)
	require.NoError(t, err)
	require.Len(t, got, rows)
	requireCalls(t, calls, 1, 0, 1, "state load of 5001 rows")

	// Above the cap: refused, not read in pieces.
	fill(rows, maxShardsPerKey+1, shard)
	_, _, err = db.Tally().Read(ctx, tallyKey, true)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
}

// TestIntegrationBatchTooLarge checks that a multi-partition batch above
// the server's batch_size_fail_threshold_in_kb (50 KiB by default) is
// refused as crdt.ErrTooLarge, with nothing applied, while the same data in
// one partition (one mutation, exempt from the threshold) is accepted.
func TestIntegrationBatchTooLarge(t *testing.T) {
	db := newTestDB(t, Options{})
	ctx := context.Background()
	data := make([]byte, 2048)
	for i := range data {
		data[i] = byte(i)
	}
	var keys []string
	tx := db.Tx()
	for i := 0; i < MaxTxStatements; i++ {
		k := uniqueKey(t, fmt.Sprintf("big%d", i))
		keys = append(keys, k)
		require.NoError(t, tx.PutShard(k, tally.EncodedShard{Mutator: "m", Data: data}, 100))
	}
	err := tx.Commit(ctx)
	require.ErrorIs(t, err, crdt.ErrTooLarge)
	var inv *gocql.RequestErrInvalid
	require.ErrorAs(t, err, &inv)
	require.Contains(t, inv.Message(), "Batch too large")
	for _, k := range keys[:3] {
		shards, _, err := db.Tally().Read(ctx, k, true)
		require.NoError(t, err)
		require.Empty(t, shards, "a refused batch applies nothing")
	}

	one := uniqueKey(t, "one")
	tx = db.Tx()
	for i := 0; i < MaxTxStatements; i++ {
		require.NoError(t, tx.PutShard(one, tally.EncodedShard{Mutator: crdt.ActorID(fmt.Sprintf("m%d", i)), Data: data}, 100))
	}
	require.NoError(t, tx.Commit(ctx), "a single-partition batch is one mutation")
	shards, _, err := db.Tally().Read(ctx, one, true)
	require.NoError(t, err)
	require.Len(t, shards, MaxTxStatements)
}
