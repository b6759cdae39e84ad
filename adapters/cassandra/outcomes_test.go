package cassandra

// Unit tests (no cluster) for how write outcomes are classified after
// retries and batchlog writes, for the retry-policy and consistency checks,
// and for the one-page reads.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
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
		// A size refusal says nothing was written: trusted for one attempt
		// only (another coordinator, with other thresholds, may have taken
		// an earlier one).
		{"batch too large", invalidRequest("Batch too large"), 1, true, crdt.ErrTooLarge},
		{"batch too large after retry", invalidRequest("Batch too large"), 3, true, crdt.ErrAmbiguousWrite},
		// A configuration refusal is not a "nothing written" claim: callers
		// take it as ambiguous.
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

// TestBatchlogged checks which batches Cassandra sends through the
// batchlog: those whose statements name more than one partition key.
func TestBatchlogged(t *testing.T) {
	p := unitDB(t).Partitions()
	put := func(part string) store.Mutation {
		return store.Mutation{Partition: part, Op: store.OpPut, Key: []byte("r"), Value: []byte{1}, Timestamp: 5}
	}
	one, err := p.applyStmts([]store.Mutation{put("a"), put("a"), {Partition: "a", Op: store.OpDeletePartition, Timestamp: 6}})
	require.NoError(t, err)
	require.False(t, batchlogged(one), "one partition: one mutation")
	two, err := p.applyStmts([]store.Mutation{put("a"), put("b")})
	require.NoError(t, err)
	require.True(t, batchlogged(two), "two partitions")
	for _, s := range two {
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
	// A typed nil is no nil policy: the driver would call it and panic.
	for _, p := range []gocql.RetryPolicy{(*gocql.SimpleRetryPolicy)(nil), (*gocql.ExponentialBackoffRetryPolicy)(nil)} {
		require.ErrorIs(t, CheckRetryPolicy(p), crdt.ErrInvalidConfig)
		_, err = newDB(nil, "ks", Options{RetryPolicy: p})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	}
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
	op        Op
	pageSize  int
	pageState []byte
}

// fakePages routes db's page reads to iter and records them.
func fakePages(db *DB, iter *fakeIter) *[]pageCall {
	var calls []pageCall
	db.openPage = func(_ context.Context, op Op, _ string, _ []any, pageSize int, pageState []byte) rowIter {
		calls = append(calls, pageCall{op, pageSize, pageState})
		return iter
	}
	return &calls
}

func readTimeout() error { return &gocql.RequestErrReadTimeout{} }

// TestOnePageQuery checks the driver settings of a one-page read: the page
// size asked for and automatic paging off (read back from the pinned
// driver's Query fields), from the beginning or from a paging state.
func TestOnePageQuery(t *testing.T) {
	q := onePage(new(gocql.Query), 8, nil)
	v := reflect.ValueOf(q).Elem()
	require.Equal(t, int64(8), v.FieldByName("pageSize").Int())
	require.True(t, v.FieldByName("disableAutoPage").Bool(), "PageState(nil) turns automatic paging off")
	require.Zero(t, v.FieldByName("initialPageState").Len(), "starts at the beginning")
	q = onePage(new(gocql.Query), 3, []byte{7, 7})
	v = reflect.ValueOf(q).Elem()
	require.True(t, v.FieldByName("disableAutoPage").Bool())
	require.Equal(t, []byte{7, 7}, v.FieldByName("initialPageState").Bytes())
}

func TestHarnessDropsOnlyCreatedKeyspace(t *testing.T) {
	require.Equal(t, "", cluster{keyspace: "mine"}.dropOnExit(), "a keyspace that existed before the run is kept")
	require.Equal(t, "mine", cluster{keyspace: "mine", created: true}.dropOnExit())
	require.Equal(t, "", cluster{err: errors.New("no cluster")}.dropOnExit())
}
