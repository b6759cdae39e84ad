package ledger_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestRetryOfAWriteInDoubt checks the window for the retry callers make
// most: a call that failed ambiguous_write, whose write landed after all,
// retried after the ledger has made more credits than its counter
// remembers (SPEC.md 6.11 step 3). With the defaults, on this ledger and
// on another. Each case fails when the landing is not recorded (the
// mutants "a write in doubt ... left unrecorded" in vectors/).
func TestRetryOfAWriteInDoubt(t *testing.T) {
	ctx := context.Background()
	later := 2 * (10 + 10) // twice the default history and folded lengths
	for _, tc := range []struct {
		name string
		// faults of the account key's Puts of t0's call, in order
		faults []faulty.Fault
		// then, before the later credits
		then func(l *ledger.Ledger) error
	}{
		// Every attempt's put is lost; the next credit's put lands t0.
		{"the next put lands it", []faulty.Fault{faulty.Lose, faulty.Lose, faulty.Lose, faulty.Lose}, nil},
		// The last attempt's put lands unacknowledged; the next read shows it.
		{"the next read shows it landed", []faulty.Fault{faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.LoseAck}, nil},
		// As above, then Find is the first operation.
		{"Find shows it landed", []faulty.Fault{faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.LoseAck},
			func(l *ledger.Ledger) error { _, err := l.Find(ctx); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
			a, err := ledger.New(fs, "acct", ledger.Options{Actor: "a"})
			require.NoError(t, err)
			b, err := ledger.New(fs, "acct", ledger.Options{Actor: "b"})
			require.NoError(t, err)
			fs.SetPolicy(counterCalls(faulty.Only(faulty.Script(tc.faults...), faulty.MethodPut)))
			_, err = a.Update(ctx, "t0", 100)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			fs.SetPolicy(nil)
			if tc.then != nil {
				require.NoError(t, tc.then(a))
			}
			for i := 1; i <= later; i++ {
				_, err := a.Update(ctx, crdt.TxnID(fmt.Sprintf("t%d", i)), 1)
				require.NoError(t, err)
			}
			for _, l := range []*ledger.Ledger{a, b} {
				res, err := l.Update(ctx, "t0", 100)
				require.NoError(t, err)
				require.Equal(t, tpncounter.Duplicate, res.Outcome, "retry of t0 on %s", l.Actor())
			}
			v, err := b.Value(ctx)
			require.NoError(t, err)
			require.Equal(t, int64(100+later), v)
		})
	}
}

// TestWriteInDoubtCannotFoldItsOwn checks the cap on a write in doubt:
// while a ledger's puts are all lost, it applies new transactions only
// while none of the unacknowledged ones could be folded out before the
// write is known to land (SPEC.md 6.11 step 3). History and folded length
// 1: the third transaction is refused, the write in doubt is written
// again, and once the store takes writes both earlier retries are
// duplicates. It fails without the cap in group.go: the third transaction
// folds the first out of the state that finally lands, unrecorded.
func TestWriteInDoubtCannotFoldItsOwn(t *testing.T) {
	ctx := context.Background()
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	opts := ledger.Options{Actor: "a", RetryCount: 1, Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1}}
	a, err := ledger.New(fs, "acct", opts)
	require.NoError(t, err)
	opts.Actor = "b"
	b, err := ledger.New(fs, "acct", opts)
	require.NoError(t, err)
	fs.SetPolicy(counterCalls(faulty.Only(func(faulty.Call) faulty.Fault { return faulty.Lose }, faulty.MethodPut)))
	for _, x := range []crdt.TxnID{"t0", "t1"} {
		_, err = a.Update(ctx, x, 100)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, x)
	}
	_, err = a.Update(ctx, "t2", 100)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite, "t2 was never applied")
	fs.SetPolicy(nil)
	for i := 2; i <= 8; i++ {
		_, err := a.Update(ctx, crdt.TxnID(fmt.Sprintf("t%d", i)), 1)
		require.NoError(t, err)
	}
	for _, x := range []crdt.TxnID{"t0", "t1"} {
		res, err := b.Update(ctx, x, 100)
		require.NoError(t, err)
		require.Equal(t, tpncounter.Duplicate, res.Outcome, x)
	}
	v, err := b.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(200+7), v)
}
