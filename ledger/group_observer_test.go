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
