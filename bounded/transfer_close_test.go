package bounded_test

// Transfer and Close under writes in doubt and stale reads (SPEC.md 13.5):
// tests from a review written from the documentation.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestTransferRetriedWithinACallGivesOnce: an attempt whose state holds
// the call's transfer (its first attempt's Put landed, its answer lost)
// makes none (SPEC.md 13.5 Transfer; vector "transfer: an ambiguous put
// is sent again, not given again"). Schedule (RetryCount 1; calls on the
// account's key):
//
//	a.Credit(c1, 10)                          acknowledged
//	a.Transfer(b, 3): Fetch, Put lose-ack     (landed: sent[b] = 3)
//	                  Fetch                   (holds it: nothing more)
//
// Before the rule each attempt transferred again: the call answered
// without error and the store showed 6 given; with a credit of 4 the
// second attempt failed insufficient_rights while the store held the
// transfer of 3.
func TestTransferRetriedWithinACallGivesOnce(t *testing.T) {
	for _, tc := range []struct {
		name   string
		credit int64
	}{{"acknowledged", 10}, {"refused insufficient_rights", 4}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := newDoubtRig(t)
			a, b := r.open("a", 0), r.open("b", 0)
			_, err := a.Credit(ctx, "c1", tc.credit)
			require.NoError(t, err)
			r.script(faulty.Pass, faulty.LoseAck) // the first attempt's Put lands, its answer is lost
			res, terr := a.Transfer(ctx, b.Writer(), 3)
			r.st.SetPolicy(nil)
			_, err = a.Sync(ctx)
			require.NoError(t, err)
			given := r.fresh().Sent(a.Writer(), b.Writer())
			t.Logf("Transfer(b, 3): %+v, %v; the store shows a gave b %d", res, terr, given)
			if terr == nil {
				require.Equal(t, int64(3), given, "an acknowledged Transfer of 3 gives 3")
			} else {
				require.Zero(t, given, "a Transfer refused insufficient_rights gives nothing")
			}
		})
	}
}

// TestCloseHandsOverACreditInDoubt: Close(heir) gives the heir rights(A)
// with U's credits, since a closed account never settles again (SPEC.md
// 13.5 Close; vector "close: a credit in doubt goes to the heir too").
// Schedule (RetryCount 1; calls on the account's key):
//
//	a.Credit(c1, 10): Fetch, Put lose-ack, Fetch refused → ambiguous_write
//	a.Close(b)        c1 landed, recorded; 10 given to b
//	b.Credit(c1, 10)  duplicate
//	b.Debit(d1, 10)   applied
//
// Before, Close gave only spendable rights: c1's 10 stayed in U with the
// closed incarnation, and b's debit failed insufficient_rights for good.
func TestCloseHandsOverACreditInDoubt(t *testing.T) {
	ctx := context.Background()
	r := newDoubtRig(t)
	a, b := r.open("a", 0), r.open("b", 0)
	r.script(faulty.Pass, faulty.LoseAck, faulty.Refuse)
	_, err := a.Credit(ctx, "c1", 10)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	r.st.SetPolicy(nil)
	_, err = a.Close(ctx, b.Writer())
	require.NoError(t, err)
	_, err = a.Credit(ctx, "c1", 10)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig, "a closed account answers nothing more")
	res, err := b.Credit(ctx, "c1", 10)
	require.NoError(t, err)
	require.Equal(t, bounded.Duplicate, res.Outcome, "c1 landed once, by a's write")
	res, err = b.Debit(ctx, "d1", 10)
	c := r.fresh()
	t.Logf("b.Debit(d1, 10): %+v, %v; value %d, rights of closed a %d, of heir b %d", res, err, c.Value(), c.Rights(a.Writer()), c.Rights(b.Writer()))
	require.Zero(t, c.Rights(a.Writer()), "Close(heir) leaves no rights with the closed incarnation")
	require.NoError(t, err, "the heir may debit the whole value")
}

// TestLimitGrantToAClosedRequester: the limit SPEC.md 13.5 "What it
// guarantees" states: Close withdraws the account's own request, but a
// holder whose read lags behind the Close still sees the request and
// grants it; the rights go to an incarnation that never writes again.
// Schedule:
//
//	a.Credit(c1, 10)    acknowledged
//	b.Debit(d1, 4)      insufficient_rights, requests 4
//	b.Close("")         succeeds: the request is withdrawn
//	a.Sync()            its Fetch served one state stale (b's request):
//	                    step 5 gives b 4
//	a.Debit(d2, 10)     insufficient_rights (may debit 6), for good
//
// With a fresh read a grants nothing and its debit of 10 applies. The
// same happens with no fault when a's grant and b's Close run at once, or
// a's grant Put is held in flight across b's Close. Closing it needs
// state (e.g. Close writing its heir into its entry, and a closed
// actor's rights counting toward that heir).
func TestLimitGrantToAClosedRequester(t *testing.T) {
	for _, stale := range []bool{false, true} {
		t.Run(map[bool]string{false: "fresh read", true: "stale read"}[stale], func(t *testing.T) {
			ctx := context.Background()
			r := newDoubtRig(t)
			a, b := r.open("a", 0), r.open("b", 0)
			_, err := a.Credit(ctx, "c1", 10)
			require.NoError(t, err)
			res, err := b.Debit(ctx, "d1", 4)
			require.ErrorIs(t, err, crdt.ErrInsufficientRights)
			require.Equal(t, int64(4), res.Requested)
			_, err = b.Close(ctx, "")
			require.NoError(t, err)
			if stale {
				r.script(faulty.StaleBy(1)) // a's Fetch: the state before b's Close
			}
			sres, err := a.Sync(ctx)
			require.NoError(t, err)
			r.st.SetPolicy(nil)
			res, derr := a.Debit(ctx, "d2", 10)
			c := r.fresh()
			t.Logf("a.Sync: sent to b %d; a.Debit(d2, 10): %+v, %v; rights of closed b %d", sres.Sent(a.Writer(), b.Writer()), res, derr, c.Rights(b.Writer()))
			if !stale {
				require.Zero(t, c.Rights(b.Writer()), "no rights reach b after its Close")
				require.NoError(t, derr, "a holds the whole value")
				return
			}
			require.Equal(t, int64(4), c.Rights(b.Writer()), "the stated limit: 4 granted to the closed b, stuck")
			require.ErrorIs(t, derr, crdt.ErrInsufficientRights)
		})
	}
}

// TestLimitCloseMissesAnUnseenRequest pins the limit SPEC.md 13.5 states:
// a Close gives only to the requests its read shows. Schedule:
//
//	a.Credit(c1, 10)    acknowledged
//	b.Debit(d1, 3)      insufficient_rights, requests 3
//	a.Close(heir)       its Fetch served one state stale (before b's request)
//
// With no heir, b's request is never met from a's 10, which stay with the
// closed a; with an heir (c), the heir's next write grants b its 3. With
// a fresh read, a gives b its 3 in either case.
func TestLimitCloseMissesAnUnseenRequest(t *testing.T) {
	for _, tc := range []struct {
		name         string
		stale, heir  bool
		bGot, aKeeps int64
	}{
		{"fresh read, no heir", false, false, 3, 7},
		{"stale read, no heir", true, false, 0, 10},
		{"stale read, heir", true, true, 3, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := newDoubtRig(t)
			a, b, c := r.open("a", 0), r.open("b", 0), r.open("c", 0)
			_, err := a.Credit(ctx, "c1", 10)
			require.NoError(t, err)
			res, err := b.Debit(ctx, "d1", 3)
			require.ErrorIs(t, err, crdt.ErrInsufficientRights)
			require.Equal(t, int64(3), res.Requested)
			heir := crdt.ActorID("")
			if tc.heir {
				heir = c.Writer()
			}
			if tc.stale {
				r.script(faulty.StaleBy(1)) // a's Fetch: the state before b's request
			}
			_, err = a.Close(ctx, heir)
			require.NoError(t, err)
			r.st.SetPolicy(nil)
			_, err = c.Sync(ctx)
			require.NoError(t, err)
			st := r.fresh()
			require.Equal(t, tc.bGot, st.Received(b.Writer()), "rights b received")
			require.Equal(t, tc.aKeeps, st.Rights(a.Writer()), "rights the closed a keeps")
			if tc.bGot == 0 {
				require.Equal(t, int64(3), st.Outstanding(b.Writer()), "b's request stays, unmet")
			}
		})
	}
}
