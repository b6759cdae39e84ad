package balance_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/internal/obstest"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
)

// Accounts.Delete reports one "delete" event with its outcome, its store
// call nested in it, as Transactions.Delete does; a refused one names the
// refusal, an invalid key is Invalid.
func TestAccountsDeleteIsObserved(t *testing.T) {
	ctx := context.Background()
	now := obsT0
	tr := &obstest.Tracker{}
	fs := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	ac, err := balance.New(observe.Partitions(fs, tr), balance.Options{Clock: func() time.Time { return now }, Observer: tr})
	require.NoError(t, err)
	require.NoError(t, ac.Add(ctx, "seller-1", timeid.New(now), 5))
	for _, tc := range []struct {
		name, key, outcome string
		refuse             bool
		refused            int
	}{
		{"delete", "seller-1", observe.OK, false, 0},
		{"bad key", "", observe.Invalid, false, 0},
		{"refused", "seller-1", observe.Unavailable, true, 1},
	} {
		tr.Reset()
		fs.SetPolicy(nil)
		if tc.refuse {
			fs.SetPolicy(faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodApply))
		}
		err := ac.Delete(ctx, tc.key)
		evs := tr.Events("balance")
		require.Len(t, evs, 1, tc.name)
		require.Equal(t, "delete", evs[0].Op, tc.name)
		require.Equal(t, tc.outcome, evs[0].Outcome, "%s: %v", tc.name, err)
		require.Equal(t, err, evs[0].Err, tc.name)
		require.Equal(t, 1, evs[0].Attempts, tc.name)
		require.Equal(t, tc.refused, evs[0].Refused, tc.name)
		require.Empty(t, tr.Problems(), tc.name)
	}
}
