package cassandra

import (
	"errors"
	"testing"

	gocql "github.com/apache/cassandra-gocql-driver/v2"
	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
)

// wrappedDowngrading is gocql's DowngradingConsistencyRetryPolicy behind a
// wrapper type (as a metrics or logging decorator would hold it): the
// driver sees the same Attempt and GetRetryType answers.
type wrappedDowngrading struct {
	*gocql.DowngradingConsistencyRetryPolicy
}

// ignoreWriteTimeouts is a policy a user might write to "tolerate" write
// timeouts: it answers gocql.Ignore to them, as Downgrading does.
type ignoreWriteTimeouts struct{ gocql.SimpleRetryPolicy }

func (p *ignoreWriteTimeouts) GetRetryType(err error) gocql.RetryType {
	if _, ok := err.(*gocql.RequestErrWriteTimeout); ok {
		return gocql.Ignore
	}
	return gocql.RetryNextHost
}

// TestRetryPolicyAnsweringIgnoreIsRefused: gocql's query executor
// (query_executor.go, queryExecutor.do) turns a RetryType of Ignore into
// iter.err = nil, so a write that timed out (outcome unknown) would come
// back from sessionSend as success. CheckRetryPolicy (and so New) refuses
// any policy answering Ignore to an attempt's error, not only the type
// *gocql.DowngradingConsistencyRetryPolicy: here a wrapper around it, and
// a policy of the user's own.
func TestRetryPolicyAnsweringIgnoreIsRefused(t *testing.T) {
	wt := &gocql.RequestErrWriteTimeout{Consistency: gocql.Quorum, Received: 1, BlockFor: 2, WriteType: "SIMPLE"}
	down := &gocql.DowngradingConsistencyRetryPolicy{ConsistencyLevelsToTry: []gocql.Consistency{gocql.One}}
	for name, p := range map[string]gocql.RetryPolicy{
		"wrapped downgrading": wrappedDowngrading{down},
		"ignores timeouts":    &ignoreWriteTimeouts{gocql.SimpleRetryPolicy{NumRetries: 2}},
	} {
		// The premise: the driver would report this write timeout as
		// success.
		require.Equal(t, gocql.Ignore, p.GetRetryType(wt), name)
		require.ErrorIs(t, CheckRetryPolicy(p), crdt.ErrInvalidConfig,
			"%s: a policy answering Ignore to a write timeout turns an ambiguous write into success", name)
		_, err := newDB(nil, "ks", Options{RetryPolicy: p})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "%s: New accepts it", name)
	}
}

// ignoreOdd answers Ignore only to an error CheckRetryPolicy does not ask
// about.
type ignoreOdd struct{ gocql.SimpleRetryPolicy }

var errOdd = errors.New("odd")

func (p *ignoreOdd) GetRetryType(err error) gocql.RetryType {
	if err == errOdd {
		return gocql.Ignore
	}
	return gocql.Rethrow
}

// TestRetryPolicyIgnoreBecomesRethrow: Options.RetryPolicy is set on the
// statements behind a guard that answers Rethrow where the policy answers
// Ignore, for errors the check did not ask about.
func TestRetryPolicyIgnoreBecomesRethrow(t *testing.T) {
	p := &ignoreOdd{gocql.SimpleRetryPolicy{NumRetries: 1}}
	require.NoError(t, CheckRetryPolicy(p))
	db, err := newDB(nil, "ks", Options{RetryPolicy: p})
	require.NoError(t, err)
	require.Equal(t, gocql.Ignore, p.GetRetryType(errOdd))
	require.Equal(t, gocql.Rethrow, db.retry.GetRetryType(errOdd))
	wt := &gocql.RequestErrWriteTimeout{WriteType: "SIMPLE"}
	require.Equal(t, p.GetRetryType(wt), db.retry.GetRetryType(wt))
}
