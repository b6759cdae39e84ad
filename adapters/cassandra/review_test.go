package cassandra

// Unit tests (no cluster) for how write outcomes are classified after
// retries and batchlog writes, for the retry-policy and consistency checks,
// and for the single-page snapshot reads.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/deltalog"
	"github.com/counterkit/counterkit/tally"
)

// invalidRequest returns the driver's *gocql.RequestErrInvalid carrying the
// server message msg, as the driver builds it from an error frame (the
// message lives in an unexported field that only the frame parser sets).
func invalidRequest(msg string) *gocql.RequestErrInvalid {
	e := &gocql.RequestErrInvalid{}
	f := reflect.ValueOf(e).Elem().FieldByName("errorFrame").FieldByName("message")
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetString(msg)
	return e
}

func TestInvalidRequestHelper(t *testing.T) {
	e := invalidRequest("Batch too large")
	require.Equal(t, "Batch too large", e.Message())
	require.Equal(t, "Batch too large", e.Error())
}

// TestClassifyWrite is the decision table for a failed write: driver error
// × number of attempts × whether the batch went through the batchlog.
func TestClassifyWrite(t *testing.T) {
	unavailable := &gocql.RequestErrUnavailable{Consistency: gocql.Quorum, Required: 2, Alive: 1}
	overloaded := &gocql.RequestErrOverloaded{}
	cases := []struct {
		name     string
		err      error
		attempts int
		batchlog bool
		want     error
	}{
		// One attempt: the error describes the only send.
		{"unavailable, 1 attempt", unavailable, 1, false, crdt.ErrUnavailable},
		{"unavailable, never sent", gocql.ErrNoConnections, 0, false, crdt.ErrUnavailable},
		{"no streams, 1 attempt", gocql.ErrNoStreams, 1, false, crdt.ErrUnavailable},
		{"bootstrapping, 1 attempt", &gocql.RequestErrBootstrapping{}, 1, true, crdt.ErrUnavailable},
		{"write timeout, 1 attempt", &gocql.RequestErrWriteTimeout{WriteType: "SIMPLE"}, 1, false, crdt.ErrAmbiguousWrite},
		// Retried: an earlier attempt may have timed out after landing.
		{"unavailable after retry", unavailable, 2, false, crdt.ErrAmbiguousWrite},
		{"no streams after retry", gocql.ErrNoStreams, 3, false, crdt.ErrAmbiguousWrite},
		{"overloaded after retry", overloaded, 2, false, crdt.ErrAmbiguousWrite},
		{"wrapped unavailable after retry", fmt.Errorf("gocql: %w", unavailable), 2, true, crdt.ErrAmbiguousWrite},
		{"write timeout after retry", &gocql.RequestErrWriteTimeout{WriteType: "BATCH"}, 2, true, crdt.ErrAmbiguousWrite},
		// Overloaded on a multi-partition logged batch: the batchlog may
		// replay it.
		{"overloaded, batchlog", overloaded, 1, true, crdt.ErrAmbiguousWrite},
		{"overloaded, single partition", overloaded, 1, false, crdt.ErrUnavailable},
		{"unavailable, batchlog", unavailable, 1, true, crdt.ErrUnavailable},
		// Refusals that are not "not applied" claims keep their sentinel.
		{"batch too large after retry", invalidRequest("Batch too large"), 3, true, crdt.ErrTooLarge},
		{"invalid after retry", invalidRequest("unconfigured table x"), 2, false, crdt.ErrMisconfiguredStore},
		{"too many statements", gocql.ErrTooManyStmts, 0, true, crdt.ErrTooLarge},
	}
	sentinels := []error{crdt.ErrUnavailable, crdt.ErrAmbiguousWrite, crdt.ErrMisconfiguredStore, crdt.ErrTooLarge}
	for _, c := range cases {
		require.Equal(t, c.want, classifyWrite(c.err, c.attempts, c.batchlog), c.name)
		err := wrapWrite("tx commit", c.err, c.attempts, c.batchlog)
		require.ErrorIs(t, err, c.want, c.name)
		for _, s := range sentinels {
			if s != c.want {
				require.NotErrorIs(t, err, s, c.name)
			}
		}
		require.ErrorIs(t, err, c.err, "%s: driver error reachable", c.name)
	}
	require.NoError(t, wrapWrite("x", nil, 3, true))
}

// TestBatchlogged checks which of the stores' batches Cassandra sends
// through the batchlog: those whose statements name more than one
// partition key.
func TestBatchlogged(t *testing.T) {
	db := unitDB(t)
	id := testID(t, time.Unix(1_700_000_000, 0), 1)
	cell := func(counter string) deltalog.Entry {
		return deltalog.Entry{Counter: counter, Cell: deltalog.Cell{ID: id, Kind: deltalog.KindRegular, Delta: 1}}
	}

	one, err := db.Log().insertStmts([]deltalog.Entry{cell("c"), cell("c")})
	require.NoError(t, err)
	require.False(t, batchlogged(one), "one counter: one mutation")
	two, err := db.Log().insertStmts([]deltalog.Entry{cell("c"), cell("d")})
	require.NoError(t, err)
	require.True(t, batchlogged(two), "two counters")

	del, err := db.Log().deleteCoveredStmts("c", id)
	require.NoError(t, err)
	require.False(t, batchlogged(del))

	tok, err := encodeToken([]tokenEntry{{"a", 5}, {"c", 6}})
	require.NoError(t, err)
	put, err := db.Ledger().putStmts("k", "b", ledgerEnc(t, "b", "t1"), tok)
	require.NoError(t, err)
	require.Len(t, put, 3)
	require.False(t, batchlogged(put), "a ledger put is single-partition")

	n := balance.Row{UpdateID: id, Kind: balance.KindNormal, Amount: 5}
	transfer, _, err := db.Balance().writeStmts([]balance.Mutation{{Account: "from", Row: n}, {Account: "to", Row: n}})
	require.NoError(t, err)
	require.True(t, batchlogged(transfer))

	tx := db.Tx()
	require.NoError(t, tx.PutShard("k", tally.EncodedShard{Mutator: "m", Data: []byte{1}}, 5))
	require.NoError(t, tx.SaveState("k", "a", gEnc(t, map[crdt.ActorID]int64{"a": 1})))
	require.False(t, batchlogged(tx.stmts), "one partition key across tables is one mutation")
	require.NoError(t, tx.InsertLog(cell("other")))
	require.True(t, batchlogged(tx.stmts))
	for _, s := range tx.stmts {
		require.NotEmpty(t, s.key, "every statement names its partition: %s", s.cql)
	}

	require.False(t, batchlogged(nil))
}

func TestRetryPolicyChecked(t *testing.T) {
	require.NoError(t, CheckRetryPolicy(nil))
	require.NoError(t, CheckRetryPolicy(&gocql.SimpleRetryPolicy{NumRetries: 2}))
	require.NoError(t, CheckRetryPolicy(&gocql.ExponentialBackoffRetryPolicy{NumRetries: 2}))
	down := &gocql.DowngradingConsistencyRetryPolicy{ConsistencyLevelsToTry: []gocql.Consistency{gocql.One}}
	require.ErrorIs(t, CheckRetryPolicy(down), crdt.ErrInvalidConfig)

	_, err := newDB(nil, "ks", Options{RetryPolicy: down})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	db, err := newDB(nil, "ks", Options{RetryPolicy: &gocql.SimpleRetryPolicy{NumRetries: 1}})
	require.NoError(t, err)
	require.NotNil(t, db.retry)
}

// TestOverlapsTable pins the overlap rule for every pair of levels the
// adapter accepts.
func TestOverlapsTable(t *testing.T) {
	type pair struct{ r, w gocql.Consistency }
	yes := []pair{
		{gocql.All, gocql.One}, {gocql.One, gocql.All}, {gocql.All, gocql.LocalOne}, {gocql.All, gocql.All},
		{gocql.Quorum, gocql.Quorum},
		{gocql.Quorum, gocql.EachQuorum}, {gocql.EachQuorum, gocql.Quorum},
		{gocql.LocalQuorum, gocql.LocalQuorum},
		{gocql.LocalQuorum, gocql.EachQuorum}, {gocql.EachQuorum, gocql.LocalQuorum},
		{gocql.EachQuorum, gocql.EachQuorum},
	}
	no := []pair{
		{gocql.Quorum, gocql.LocalQuorum}, {gocql.LocalQuorum, gocql.Quorum},
		{gocql.One, gocql.One}, {gocql.Quorum, gocql.One}, {gocql.One, gocql.Quorum},
		{gocql.LocalOne, gocql.LocalQuorum}, {gocql.Two, gocql.Two}, {gocql.Three, gocql.Quorum},
	}
	for _, p := range yes {
		require.True(t, overlaps(p.r, p.w), "%v/%v", p.r, p.w)
	}
	for _, p := range no {
		require.False(t, overlaps(p.r, p.w), "%v/%v", p.r, p.w)
	}
}

// TestOverlapMultiDCModel checks overlaps against every pair of replica
// sets two levels can be acknowledged by, in topologies with one and two
// data centers (reader and writer in DC 0 for the LOCAL levels): when
// overlaps says yes, no read set may miss a write set. It also shows the
// QUORUM/LOCAL_QUORUM counterexample the rule exists for.
func TestOverlapMultiDCModel(t *testing.T) {
	levels := []gocql.Consistency{gocql.One, gocql.Two, gocql.Three, gocql.Quorum, gocql.All, gocql.LocalQuorum, gocql.EachQuorum, gocql.LocalOne}
	topologies := [][]int{{3}, {5}, {3, 3}, {3, 2}, {2, 3}, {5, 3}, {1, 3}}
	for _, rfs := range topologies {
		var dcOf []int
		for dc, rf := range rfs {
			for i := 0; i < rf; i++ {
				dcOf = append(dcOf, dc)
			}
		}
		n := len(dcOf)
		total := 0
		for _, rf := range rfs {
			total += rf
		}
		// acks reports whether replica set s (a bitmask) satisfies c.
		acks := func(c gocql.Consistency, s int) bool {
			per := make([]int, len(rfs))
			size := 0
			for i := 0; i < n; i++ {
				if s&(1<<i) != 0 {
					per[dcOf[i]]++
					size++
				}
			}
			switch c {
			case gocql.One:
				return size >= 1
			case gocql.Two:
				return size >= 2
			case gocql.Three:
				return size >= 3
			case gocql.LocalOne:
				return per[0] >= 1
			case gocql.Quorum:
				return size >= total/2+1
			case gocql.All:
				return size == n
			case gocql.LocalQuorum:
				return per[0] >= rfs[0]/2+1
			case gocql.EachQuorum:
				for dc, rf := range rfs {
					if per[dc] < rf/2+1 {
						return false
					}
				}
				return true
			}
			panic(c)
		}
		alwaysMeet := func(r, w gocql.Consistency) bool {
			for rs := 0; rs < 1<<n; rs++ {
				if !acks(r, rs) {
					continue
				}
				for ws := 0; ws < 1<<n; ws++ {
					if acks(w, ws) && rs&ws == 0 {
						return false
					}
				}
			}
			return true
		}
		for _, r := range levels {
			for _, w := range levels {
				if overlaps(r, w) {
					require.True(t, alwaysMeet(r, w), "RFs %v: overlaps(%v, %v) but a read can miss a write", rfs, r, w)
				}
			}
		}
		if len(rfs) == 2 && rfs[0] == 3 && rfs[1] == 3 {
			require.False(t, alwaysMeet(gocql.LocalQuorum, gocql.Quorum), "a QUORUM write can miss DC 0's local quorum")
			require.False(t, alwaysMeet(gocql.Quorum, gocql.LocalQuorum), "a QUORUM read can miss a LOCAL_QUORUM write")
		}
	}
}

// TestTxCommitMustOverlapReads: a Tx writes state, ledger, log and balance
// rows at OpTxCommit's level, so each of their reads must overlap it.
func TestTxCommitMustOverlapReads(t *testing.T) {
	type levels = map[Op]gocql.Consistency
	for _, weak := range []gocql.Consistency{gocql.One, gocql.Two, gocql.LocalOne, gocql.LocalQuorum} {
		err := CheckConsistency(levels{OpTxCommit: weak})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%v", weak)
		require.Contains(t, err.Error(), "tx commit")
	}
	for _, read := range []Op{OpStateLoad, OpLedgerFetch, OpLogRead, OpBalanceRead} {
		// Everything ALL except the one read: only that pair can fail.
		l := levels{OpStateLoad: gocql.All, OpLedgerFetch: gocql.All, OpLogRead: gocql.All, OpBalanceRead: gocql.All, OpTxCommit: gocql.One}
		require.NoError(t, CheckConsistency(l), "reads at ALL overlap a commit at ONE")
		l[read] = gocql.Quorum
		err := CheckConsistency(l)
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%v", read)
		require.Contains(t, err.Error(), read.String())
		require.Contains(t, err.Error(), "tx commit")
	}
	// DC-local reads need a DC-local (or EACH_QUORUM) commit.
	local := levels{
		OpStateLoad: gocql.LocalQuorum, OpStateSave: gocql.LocalQuorum,
		OpLedgerFetch: gocql.LocalQuorum, OpLedgerPut: gocql.LocalQuorum,
	}
	require.ErrorIs(t, CheckConsistency(local), crdt.ErrInvalidConfig, "QUORUM commit vs LOCAL_QUORUM load")
	local[OpTxCommit] = gocql.EachQuorum
	require.NoError(t, CheckConsistency(local))
	_, err := newDB(nil, "ks", Options{Consistency: levels{OpTxCommit: gocql.One}})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
}

// fakeIter is a single-page result: rows of column values, the paging
// state the server returned, and the error Close reports.
type fakeIter struct {
	rows      [][]any
	pageState []byte
	err       error
	pos       int
	closed    bool
}

func (f *fakeIter) Scan(dest ...any) bool {
	if f.err != nil || f.pos >= len(f.rows) {
		return false
	}
	for i, v := range f.rows[f.pos] {
		reflect.ValueOf(dest[i]).Elem().Set(reflect.ValueOf(v))
	}
	f.pos++
	return true
}

func (f *fakeIter) PageState() []byte { return f.pageState }

func (f *fakeIter) Close() error { f.closed = true; return f.err }

// pageCall records one openPage call.
type pageCall struct {
	op    Op
	limit int
}

// fakePages routes db's single-page reads to iter and records them.
func fakePages(db *DB, iter *fakeIter) *[]pageCall {
	var calls []pageCall
	db.openPage = func(_ context.Context, op Op, limit int, _ string, _ []any) rowIter {
		calls = append(calls, pageCall{op, limit})
		return iter
	}
	return &calls
}

// TestSinglePageQuery checks the driver settings of a single-page read:
// limit+1 rows per page and automatic paging off (read back from the
// pinned driver's Query fields).
func TestSinglePageQuery(t *testing.T) {
	q := singlePage(new(gocql.Query), 7)
	v := reflect.ValueOf(q).Elem()
	require.Equal(t, int64(8), v.FieldByName("pageSize").Int())
	require.True(t, v.FieldByName("disableAutoPage").Bool(), "PageState(nil) turns automatic paging off")
	require.Zero(t, v.FieldByName("initialPageState").Len(), "starts at the beginning")
}

func TestPerActorReadsAreOnePage(t *testing.T) {
	ctx := context.Background()
	row := func(a string) []any { return []any{a, []byte{1}, int64(10)} }

	for _, fetch := range []struct {
		name string
		op   Op
		read func(db *DB) error
	}{
		{"state load", OpStateLoad, func(db *DB) error { _, err := db.States().Load(ctx, "k"); return err }},
		{"ledger fetch", OpLedgerFetch, func(db *DB) error { _, _, err := db.Ledger().Fetch(ctx, "k"); return err }},
	} {
		db := unitDB(t)
		it := &fakeIter{rows: [][]any{row("b"), row("a")}}
		calls := fakePages(db, it)
		require.NoError(t, fetch.read(db), fetch.name)
		require.Equal(t, []pageCall{{fetch.op, MaxActorRows}}, *calls, fetch.name)
		require.True(t, it.closed)

		// The server had more rows than fit in the page: refused, not
		// continued with a second (later) read.
		it = &fakeIter{rows: [][]any{row("a")}, pageState: []byte{1}}
		fakePages(db, it)
		require.ErrorIs(t, fetch.read(db), crdt.ErrTooLarge, fetch.name)

		// More rows than the cap in the page.
		many := make([][]any, MaxActorRows+1)
		for i := range many {
			many[i] = row(fmt.Sprintf("a%05d", i))
		}
		it = &fakeIter{rows: many}
		fakePages(db, it)
		require.ErrorIs(t, fetch.read(db), crdt.ErrTooLarge, fetch.name)
		require.True(t, it.closed)

		// Driver errors are mapped as reads.
		fakePages(db, &fakeIter{err: &gocql.RequestErrReadTimeout{}})
		err := fetch.read(db)
		require.ErrorIs(t, err, crdt.ErrUnavailable, fetch.name)
		require.NotErrorIs(t, err, crdt.ErrTooLarge)
	}
}

func TestTallyReadIsOnePage(t *testing.T) {
	ctx := context.Background()
	for _, complete := range []bool{true, false} {
		db := unitDB(t)
		it := &fakeIter{rows: [][]any{{"m1", []byte("s1"), []byte("T")}, {"m2", []byte("s2"), []byte("T")}}}
		calls := fakePages(db, it)
		shards, tv, err := db.Tally().Read(ctx, "k", complete)
		require.NoError(t, err)
		require.Len(t, shards, 2)
		require.Equal(t, []byte("T"), tv)
		op := OpTallyRead
		if complete {
			op = OpTallyGCRead
		}
		require.Equal(t, []pageCall{{op, maxShardsPerKey}}, *calls)

		fakePages(db, &fakeIter{rows: [][]any{{"m1", []byte("s1"), []byte("T")}}, pageState: []byte{9}})
		_, _, err = db.Tally().Read(ctx, "k", complete)
		require.ErrorIs(t, err, crdt.ErrTooLarge, "a GC landing between two pages could hide shards")

		fakePages(db, &fakeIter{err: &gocql.RequestErrReadFailure{}})
		_, _, err = db.Tally().Read(ctx, "k", complete)
		require.ErrorIs(t, err, crdt.ErrUnavailable)
	}
}

func TestBalanceRowsIsOnePage(t *testing.T) {
	ctx := context.Background()
	db := unitDB(t)
	r := balance.Row{UpdateID: testID(t, time.Unix(1_700_000_000, 0), 1), Kind: balance.KindNormal, Amount: 5}
	blob, err := r.MarshalBinary()
	require.NoError(t, err)
	row := []any{gocql.UUID(r.UpdateID), int8(r.Kind), gocql.UUID(r.Version), blob, int64(10)}
	calls := fakePages(db, &fakeIter{rows: [][]any{row}})
	rows, err := db.Balance().Rows(ctx, "acct")
	require.NoError(t, err)
	require.Equal(t, []balance.Row{r}, rows)
	require.Equal(t, []pageCall{{OpBalanceRead, balance.MaxRows}}, *calls)

	fakePages(db, &fakeIter{rows: [][]any{row}, pageState: []byte{1}})
	_, err = db.Balance().Rows(ctx, "acct")
	require.ErrorIs(t, err, crdt.ErrTooLarge)
}

func TestHarnessDropsOnlyCreatedKeyspace(t *testing.T) {
	require.Equal(t, "", cluster{keyspace: "mine"}.dropOnExit(), "a keyspace that existed before the run is kept")
	require.Equal(t, "mine", cluster{keyspace: "mine", created: true}.dropOnExit())
	require.Equal(t, "", cluster{err: errors.New("no cluster")}.dropOnExit())
}
