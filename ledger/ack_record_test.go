package ledger_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// ambiguousX makes a ledger a (and b, c) on one faulty store and credits
// t0, then x on a with the write of x landing and its answer lost
// (recordPut false) or its record's put lost (recordPut true): either way
// a's call fails ambiguous_write, and x is not recorded.
func ambiguousX(t *testing.T, recordPut bool) (fs *faulty.Siblings, open func(crdt.ActorID) *ledger.Ledger, a, b, c *ledger.Ledger) {
	t.Helper()
	ctx := context.Background()
	fs = faulty.NewSiblings(memory.NewSiblings(), faulty.Options{RecordWrites: true})
	open = func(actor crdt.ActorID) *ledger.Ledger {
		l, err := ledger.New(fs, "k", ledger.Options{Actor: actor, RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}})
		require.NoError(t, err)
		return l
	}
	a, b, c = open("a"), open("b"), open("c")
	_, err := a.Credit(ctx, "t0", 1)
	require.NoError(t, err)
	if recordPut { // the record's put is lost
		fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Lose), faulty.MethodPut), ledger.IsRecordKey))
	} else { // the put lands, its answer is lost, and the retry's read is refused
		fs.SetPolicy(faulty.Keys(faulty.Script(faulty.Pass, faulty.LoseAck, faulty.Refuse), func(k string) bool { return k == "k" }))
	}
	r, err := a.Credit(ctx, "x", 10)
	fs.SetPolicy(nil)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.Equal(t, recordPut, r.Landed)
	return fs, open, a, b, c
}

// lagging credits x on l with its read of the account's key served from
// before x landed (two writes ago), and returns the result.
func lagging(t *testing.T, fs *faulty.Siblings, l *ledger.Ledger) tpncounter.Outcome {
	t.Helper()
	fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.StaleBy(2)), faulty.MethodFetch), func(k string) bool { return k == "k" }))
	defer fs.SetPolicy(nil)
	r, err := l.Credit(context.Background(), "x", 10)
	require.NoError(t, err)
	return r.Outcome
}

// A retry on the ledger whose write of x was in doubt learns that it
// landed, and writes x's record before answering Duplicate: a ledger whose
// read of the account's key lags then finds the record and answers
// Duplicate too. (When the record was left to the ledger's next write, c
// answered Applied though a call of x had been acknowledged.)
func TestDuplicateOfOwnWriteInDoubtRecordedFirst(t *testing.T) {
	ctx := context.Background()
	fs, open, a, _, c := ambiguousX(t, false)
	r, err := a.Credit(ctx, "x", 10)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	require.Equal(t, tpncounter.Duplicate, lagging(t, fs, c), "c's read lags, x's record does not")
	v, err := open("reader").Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(11), v)
}

// The limit SPEC.md 6.11 states for a duplicate answered from another
// writer's copy: a's record of x is lost, b's retry of x is acknowledged
// from a's copy in the counter, and c, reading the account's key stale
// before a writes again, finds neither copy nor record and applies x. The
// copies meet in the counter, and the value counts x once.
func TestLimitDuplicateOfAnotherWritersUnrecordedCopy(t *testing.T) {
	ctx := context.Background()
	fs, open, a, b, c := ambiguousX(t, true)
	r, err := b.Credit(ctx, "x", 10)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	require.Equal(t, tpncounter.Applied, lagging(t, fs, c), "the stated limit")
	for range 2 {
		for _, l := range []*ledger.Ledger{a, b, c} {
			_, err := l.Find(ctx)
			require.NoError(t, err)
		}
	}
	v, err := open("reader").Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(11), v, "x counted once")
}
