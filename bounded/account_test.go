package bounded_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

func TestOpenRefuses(t *testing.T) {
	st := memory.NewSiblings()
	for name, tc := range map[string]struct {
		key  string
		opts bounded.AccountOptions
		want error
	}{
		"no actor":         {"k", bounded.AccountOptions{}, crdt.ErrInvalidActor},
		"actor too long":   {"k", bounded.AccountOptions{Actor: crdt.ActorID(strings.Repeat("a", bounded.MaxActorLen+1))}, crdt.ErrInvalidActor},
		"bad key":          {"", bounded.AccountOptions{Actor: "a"}, crdt.ErrInvalidKey},
		"negative keep":    {"k", bounded.AccountOptions{Actor: "a", Keep: -1}, crdt.ErrInvalidConfig},
		"retries":          {"k", bounded.AccountOptions{Actor: "a", RetryCount: bounded.MaxRetryCount + 1}, crdt.ErrInvalidConfig},
		"window":           {"k", bounded.AccountOptions{Actor: "a", Counter: bounded.Options{Window: bounded.MaxWindow + 1}}, crdt.ErrInvalidConfig},
		"negative bound":   {"k", bounded.AccountOptions{Actor: "a", Counter: bounded.Options{Bound: -1, Origin: "o"}}, crdt.ErrInvalidConfig},
		"negative backoff": {"k", bounded.AccountOptions{Actor: "a", Backoff: bounded.Backoff{Max: -1}}, crdt.ErrInvalidConfig},
		"record key":       {"counterkit.txn/k", bounded.AccountOptions{Actor: "a"}, crdt.ErrInvalidKey},
		"negative window":  {"k", bounded.AccountOptions{Actor: "a", RetryWindow: -1}, crdt.ErrInvalidConfig},
		"window too long":  {"k", bounded.AccountOptions{Actor: "a", RetryWindow: bounded.MaxRetryWindow + 1}, crdt.ErrInvalidConfig},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := bounded.Open(st, tc.key, tc.opts)
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestAccountRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	a, err := bounded.Open(memory.NewSiblings(), "k", bounded.AccountOptions{Actor: "a"})
	require.NoError(t, err)
	_, err = a.Credit(ctx, "", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	_, err = a.Credit(ctx, "c", 0)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = a.Debit(ctx, "d", -1)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = a.Transfer(ctx, "b", 0)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = a.Transfer(ctx, a.Writer(), 1)
	require.ErrorIs(t, err, crdt.ErrInsufficientRights, "nothing to give")

	_, err = a.Credit(ctx, "c1", math.MaxInt64)
	require.NoError(t, err)
	_, err = a.Credit(ctx, "c2", 1)
	require.ErrorIs(t, err, crdt.ErrOverflow)
	_, err = a.Transfer(ctx, a.Writer(), 1)
	require.ErrorIs(t, err, crdt.ErrInvalidActor, "to itself")
	_, err = a.Credit(ctx, "c1", 5)
	require.ErrorIs(t, err, crdt.ErrConflictingTransaction)
	require.ErrorContains(t, err, fmt.Sprintf("bounded %q: ", a.Key()), "the error names the account")
	v, err := a.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), v, "nothing changed")
}

// TestRefusedPutChangesNothing: a write known not to have landed leaves
// the account as it was, and the retry writes the same transaction once.
func TestRefusedPutChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse), faulty.MethodPut)})
	a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "a", RetryCount: 1, Backoff: bounded.Backoff{Initial: -1}})
	require.NoError(t, err)
	_, err = a.Credit(ctx, "c1", 5)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.False(t, a.Pending())
	c, err := a.Sync(ctx)
	require.NoError(t, err)
	require.Zero(t, c.Value())
	require.Zero(t, c.Len())
	res, err := a.Credit(ctx, "c1", 5)
	require.NoError(t, err)
	require.Equal(t, bounded.Applied, res.Outcome)
	c, err = a.Sync(ctx)
	require.NoError(t, err)
	entry, _ := c.Entry(a.Writer())
	require.Equal(t, uint64(1), entry.Seq, "the refused attempts left no version behind")
	require.Equal(t, int64(5), c.Value())
}

// TestRetryOfLandedTransactionIsDuplicate: once a later write of this
// account has landed the transaction of an ambiguous call, a retry is
// answered Duplicate even when its own read is stale and its resend is
// refused: the refusal says nothing about a transaction already stored.
func TestRetryOfLandedTransactionIsDuplicate(t *testing.T) {
	ctx := context.Background()
	inner := memory.NewSiblings()
	st := faulty.NewSiblings(inner, faulty.Options{Policy: counterCalls(faulty.Script(
		faulty.Pass, faulty.Hold, faulty.Pass, faulty.Hold, // Credit: both writes held in flight
		faulty.Pass, faulty.Pass, // Sync lands the pending write
		faulty.StaleBy(1), faulty.Refuse, faulty.StaleBy(1), faulty.Refuse, // the retry reads stale, its resends are refused
	))})
	a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "a", RetryCount: 1, Backoff: bounded.Backoff{Initial: -1}})
	require.NoError(t, err)
	_, err = a.Credit(ctx, "c1", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	_, err = a.Sync(ctx)
	require.NoError(t, err)
	require.False(t, a.Pending())
	res, err := a.Credit(ctx, "c1", 5)
	require.NoError(t, err, "c1 is stored; the failed resend does not make it refused")
	require.Equal(t, bounded.Duplicate, res.Outcome)
	counts := st.Counts()
	require.Equal(t, 2, counts[faulty.Refuse], "the resends were refused")
	sibs, _, err := inner.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Len(t, sibs, 1)
	c, err := bounded.Decode(sibs[0], 0)
	require.NoError(t, err)
	require.Equal(t, int64(5), c.Value())
}

// TestBackoff: refused writes are retried after a backoff (the write lands
// once); a context ended during a backoff ends the call with its error and
// the refusal, nothing stored.
func TestBackoff(t *testing.T) {
	ctx := context.Background()
	inner := memory.NewSiblings()
	st := faulty.NewSiblings(inner, faulty.Options{Policy: faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse), faulty.MethodPut)})
	a, err := bounded.Open(st, "k", bounded.AccountOptions{Actor: "a", RetryCount: 2, Backoff: bounded.Backoff{Initial: time.Millisecond, Max: 2 * time.Millisecond}})
	require.NoError(t, err)
	require.Equal(t, "k", a.Key())
	res, err := a.Credit(ctx, "c1", 5)
	require.NoError(t, err)
	require.Equal(t, 3, res.Attempts)

	st2 := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: faulty.Only(faulty.Script(faulty.Refuse), faulty.MethodPut)})
	b, err := bounded.Open(st2, "k", bounded.AccountOptions{Actor: "b", Backoff: bounded.Backoff{Initial: time.Hour, Max: time.Hour}})
	require.NoError(t, err)
	cctx, cancel := context.WithCancel(ctx)
	stop := time.AfterFunc(50*time.Millisecond, cancel)
	defer stop.Stop()
	_, err = b.Credit(cctx, "c1", 5)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	v, err := b.Value(ctx)
	require.NoError(t, err)
	require.Zero(t, v)
}

func TestOptionsValidate(t *testing.T) {
	require.NoError(t, bounded.Options{}.Validate())
	require.NoError(t, bounded.Options{Bound: -5, Origin: "o"}.Validate())
	for _, o := range []bounded.Options{{Bound: 1}, {Bound: -5}, {Origin: "o"}, {Bound: math.MinInt64, Origin: "o"}, {Window: bounded.MaxWindow + 1}} {
		require.ErrorIs(t, o.Validate(), crdt.ErrInvalidConfig, "%+v", o)
	}
}
