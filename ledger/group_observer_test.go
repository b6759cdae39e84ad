package ledger_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// TestGroupMembersCountTheirOwnAttempts: a group of five whose Put is
// refused on both attempts (RetryCount 1); one member conflicts with an
// earlier one and fails in the first attempt. Each member's event counts
// the refusals of the attempts it took part in (observe.Event: Refused
// counts the attempts that ended crdt.ErrUnavailable), never more than
// its Attempts: the conflicting member one (the first Put, which its
// attempt ended with), the others two each. Before, every member reported
// the cycle's two.
func TestGroupMembersCountTheirOwnAttempts(t *testing.T) {
	r := newGroupRig(t)
	var mu sync.Mutex
	var all []observe.Event
	l := r.ledger(ledger.Options{RetryCount: 1, Observer: observe.Func(func(_ context.Context, e observe.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Op == "update" {
			all = append(all, e)
		}
	})})
	r.st.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.Pass, faulty.Refuse, faulty.Refuse), faulty.MethodPut)))
	reqs := append(credits(3, "g"), req{txn: "g0", amount: 9})
	out := r.runGroup(l, "lead", reqs, nil)
	require.ErrorIs(t, out[4].err, crdt.ErrConflictingTransaction)
	for i := 1; i <= 3; i++ {
		require.ErrorIs(t, out[i].err, crdt.ErrUnavailable)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, all, 1+len(reqs))
	byOutcome := map[string][]observe.Event{}
	for _, e := range all {
		require.LessOrEqual(t, e.Refused+e.Ambiguous, e.Attempts, "%s: %d refused of %d attempts", e.Outcome, e.Refused, e.Attempts)
		byOutcome[e.Outcome] = append(byOutcome[e.Outcome], e)
	}
	require.Len(t, byOutcome[observe.Unavailable], 3)
	for _, e := range byOutcome[observe.Unavailable] {
		require.Equal(t, 2, e.Attempts)
		require.Equal(t, 2, e.Refused)
	}
	require.Len(t, byOutcome[observe.OutcomeOf(out[4].err)], 1)
	conflict := byOutcome[observe.OutcomeOf(out[4].err)][0]
	require.Equal(t, 1, conflict.Attempts)
	require.Equal(t, 1, conflict.Refused, "its one attempt ended with the first refused Put")
}

// TestGroupMemberIsNotChargedALaterAttempt: with the window (H 1, F 1)
// full of transactions whose writes are in doubt, an attempt can end by
// writing the pending state and going on without a refusal or an
// ambiguous answer; a later attempt's refusal belongs to the attempts
// that ran it, not to a member done in the first (an outside review's
// case: counting failures in order charged it to the first).
func TestGroupMemberIsNotChargedALaterAttempt(t *testing.T) {
	r := newGroupRig(t)
	var mu sync.Mutex
	var all []observe.Event
	l := r.ledger(ledger.Options{RetryCount: 2, MaxGroup: 2,
		Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1},
		Observer: observe.Func(func(_ context.Context, e observe.Event) {
			mu.Lock()
			defer mu.Unlock()
			if e.Op == "update" {
				all = append(all, e)
			}
		})})
	H, P, R := faulty.Hold, faulty.Pass, faulty.Refuse
	r.st.SetPolicy(counterCalls(faulty.Only(faulty.Script(H, H, H, H, H, H, H, P, R, P), faulty.MethodPut)))
	ctx := context.Background()
	_, err := l.Credit(ctx, "A", 1)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	_, err = l.Credit(ctx, "B", 1)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	mu.Lock()
	all = nil
	mu.Unlock()
	out := r.runGroup(l, "X", []req{{txn: "C", amount: 1}, {txn: "A", amount: 9}}, nil)
	for i, o := range out {
		t.Logf("call %d: attempts %d err %v", i, o.res.Attempts, o.err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range all {
		t.Logf("event: outcome %s attempts %d refused %d ambiguous %d", e.Outcome, e.Attempts, e.Refused, e.Ambiguous)
	}
	require.NoError(t, out[1].err, "C lands in attempt 3")
	require.Equal(t, 3, out[1].res.Attempts)
	require.Error(t, out[2].err, "A with another amount fails in attempt 1")
	for _, e := range all {
		if e.Attempts == 1 && e.Outcome == observe.OutcomeOf(out[2].err) {
			require.Equal(t, 0, e.Refused, "A's one attempt refused nothing: its held-path write passed")
		}
	}
}
