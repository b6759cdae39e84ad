package cassandra

// A retry policy's Attempt is handed the statement
// (gocql.RetryableQuery), and a level it sets with SetConsistency is the
// level the driver resends at (query_executor.go, queryExecutor.do), as
// gocql's DowngradingConsistencyRetryPolicy does. A lower level breaks the
// overlap CheckConsistency guarantees, and Cassandra 4.0 refuses a write
// that is not conditional at SERIAL or LOCAL_SERIAL
// (ConsistencyLevel.validateForWrite: "You must use conditional updates
// for serializable writes") and a read at ANY (validateForRead). The
// model refuses both as well (model_levels_test.go).

import (
	"context"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

// serialOnRetry retries once, switching the statement to SERIAL. It never
// answers Ignore.
type serialOnRetry struct{}

func (serialOnRetry) Attempt(q gocql.RetryableQuery) bool {
	q.SetConsistency(gocql.Serial)
	return q.Attempts() <= 1
}
func (serialOnRetry) GetRetryType(error) gocql.RetryType { return gocql.Retry }

// lowerFrom lowers the level to ONE from attempt from on, as a
// downgrading policy that never answers Ignore would.
type lowerFrom struct{ from int }

func (p lowerFrom) Attempt(q gocql.RetryableQuery) bool {
	if q.Attempts() >= p.from {
		q.SetConsistency(gocql.One)
	}
	return q.Attempts() <= p.from
}
func (lowerFrom) GetRetryType(error) gocql.RetryType { return gocql.RetryNextHost }

// sameLevel sets the level the statement already has.
type sameLevel struct{ gocql.SimpleRetryPolicy }

func (p *sameLevel) Attempt(q gocql.RetryableQuery) bool {
	q.SetConsistency(q.GetConsistency())
	return p.SimpleRetryPolicy.Attempt(q)
}

// TestRetryPolicyChangingLevelIsRefused: CheckRetryPolicy, and so New,
// refuse a policy whose Attempt sets another level on a statement, on the
// first attempt or a later one; a policy that keeps the level passes.
func TestRetryPolicyChangingLevelIsRefused(t *testing.T) {
	for name, p := range map[string]gocql.RetryPolicy{
		"SERIAL on retry":     serialOnRetry{},
		"ONE on retry":        lowerFrom{1},
		"ONE from attempt 3":  lowerFrom{retryProbeAttempts},
		"wrapped downgrading": struct{ gocql.RetryPolicy }{&gocql.DowngradingConsistencyRetryPolicy{ConsistencyLevelsToTry: []gocql.Consistency{gocql.One}}},
	} {
		require.ErrorIs(t, CheckRetryPolicy(p), crdt.ErrInvalidConfig, "%s: the retry goes at another level", name)
		_, err := newDB(nil, "ks", Options{RetryPolicy: p})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%s: New accepts it", name)
	}
	require.NoError(t, CheckRetryPolicy(&sameLevel{gocql.SimpleRetryPolicy{NumRetries: 2}}))
	require.NoError(t, CheckRetryPolicy(struct{ gocql.RetryPolicy }{&gocql.SimpleRetryPolicy{NumRetries: 2}}))
}

// askSerial is the context key serialWhenAsked reads.
type askSerial struct{}

// serialWhenAsked retries once and, when the statement's context asks for
// it, switches the statement to SERIAL: CheckRetryPolicy's probe
// statements carry no such context, so it passes the check.
type serialWhenAsked struct{ asked *int }

func (p serialWhenAsked) Attempt(q gocql.RetryableQuery) bool {
	if q.Context() != nil && q.Context().Value(askSerial{}) != nil {
		*p.asked++
		q.SetConsistency(gocql.Serial)
	}
	return q.Attempts() <= 1
}
func (serialWhenAsked) GetRetryType(error) gocql.RetryType { return gocql.Retry }

// TestRetryPolicyLevelIsKept: a level a policy sets where CheckRetryPolicy
// did not probe is not applied to the adapter's statements. On the model,
// which refuses a write at SERIAL as Cassandra does, a Put whose first
// attempt times out is resent at its own level and lands; a later attempt
// keeps the level too.
func TestRetryPolicyLevelIsKept(t *testing.T) {
	asked := 0
	p := serialWhenAsked{&asked}
	require.NoError(t, CheckRetryPolicy(p), "the probes carry no context asking for SERIAL")
	require.Zero(t, asked)

	tg := openModel(t)
	db := tg.newDB(t, Options{RetryPolicy: p})
	tg.model.mu.Lock()
	tg.model.fail = &gocql.RequestErrWriteTimeout{Consistency: gocql.Quorum, Received: 0, BlockFor: 1, WriteType: "SIMPLE"}
	tg.model.mu.Unlock()
	ctx := context.WithValue(context.Background(), askSerial{}, true)
	require.NoError(t, db.Siblings().Put(ctx, "k", "a", []byte("v"), nil), "the retry went at SERIAL")
	require.Equal(t, 1, asked, "the policy asked for SERIAL on the retry")
	require.Equal(t, map[crdt.ActorID]string{"a": "v"}, tg.model.siblingRows(db, "k"))

	late := lowerFrom{retryProbeAttempts + 1}
	require.NoError(t, CheckRetryPolicy(late), "beyond the probed attempts")
	db, err := newDB(nil, "ks", Options{RetryPolicy: late})
	require.NoError(t, err)
	q := &probeQuery{attempts: retryProbeAttempts + 1, cons: gocql.Quorum}
	require.True(t, db.retry.Attempt(q))
	require.Equal(t, gocql.Quorum, q.GetConsistency(), "the statement's level is kept")
	late.Attempt(q)
	require.Equal(t, gocql.One, q.GetConsistency(), "the policy itself lowers it")
}
