package bounded

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// holdBackScenario: with a window of 2, a's writes of t1 and t2 are held in
// flight (unrecorded: not known to have landed), and a is asked to credit
// t3. Then a's last write lands and the caller retries t1 on b, reading
// fresh, before a writes any record. It returns t3's error, b's answer for
// t1 and the value.
//
// With the hold-back (SPEC.md 13.5, "Records"), t3 is refused
// (unavailable), t1 is still in a's window, and b answers duplicate: 3.
// Applying t3 would push t1 out of a's window before its record exists, and
// b would apply t1 again: 1 + 2 + 4 + 1.
func holdBackScenario(t *testing.T) (t3 error, b1 Outcome, value int64) {
	t.Helper()
	ctx := context.Background()
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	open := func(actor crdt.ActorID) *Account {
		acc, err := Open(st, "k", AccountOptions{Actor: actor, RetryCount: 1, Backoff: Backoff{Initial: -1}, Counter: Options{Window: 2}})
		require.NoError(t, err)
		return acc
	}
	a, b := open("a"), open("b")
	st.SetPolicy(func(c faulty.Call) faulty.Fault { // every put of a's to the account's key
		if c.Method == faulty.MethodPut && !IsRecordKey(c.Key) {
			return faulty.Hold
		}
		return faulty.Pass
	})
	for _, x := range []struct {
		txn    crdt.TxnID
		amount int64
	}{{"t1", 1}, {"t2", 2}} {
		_, err := a.Credit(ctx, x.txn, x.amount)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, x.txn)
	}
	_, t3 = a.Credit(ctx, "t3", 4)
	require.NoError(t, st.Deliver(st.Held()-1), "a's last write lands")
	st.DropHeld()
	st.SetPolicy(nil)
	res, err := b.Credit(ctx, "t1", 1)
	require.NoError(t, err)
	v, err := b.Value(ctx)
	require.NoError(t, err)
	return t3, res.Outcome, v
}

func TestHoldBackKeepsUnrecordedInTheWindow(t *testing.T) {
	t3, b1, v := holdBackScenario(t)
	require.ErrorIs(t, t3, crdt.ErrUnavailable, "t3 held back")
	require.NotErrorIs(t, t3, crdt.ErrAmbiguousWrite, "nothing of t3 was sent")
	require.Equal(t, Duplicate, b1, "t1 is still in a's window")
	require.Equal(t, int64(3), v, "t1 and t2 once")
}
