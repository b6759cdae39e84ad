package cassandra

// Review tests of how write outcomes are reported (see the review report).

import (
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

// TestReviewRetryPolicyIgnoreHidesAmbiguousWrite: gocql's query executor
// (query_executor.go, queryExecutor.do) turns a RetryType of Ignore into
// iter.err = nil, so a write that timed out (outcome unknown, maybe not
// applied) comes back from sessionSend as success (nil) and no sentinel
// is ever produced. README.md says a policy "must never answer
// gocql.Ignore", but CheckRetryPolicy (and so New) only refuses the exact
// type *gocql.DowngradingConsistencyRetryPolicy: a wrapper around it, or
// any other policy answering Ignore, is accepted. The policy's answer can
// be probed without a server: GetRetryType is a pure function of the
// error.
func TestReviewRetryPolicyIgnoreHidesAmbiguousWrite(t *testing.T) {
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
