package bounded_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

// recordsRig is accounts on one faulty store with a settable clock.
type recordsRig struct {
	t   *testing.T
	st  *faulty.Siblings
	now time.Time
}

func newRecordsRig(t *testing.T) *recordsRig {
	return &recordsRig{t: t, st: faulty.NewSiblings(memory.NewSiblings(), faulty.Options{}), now: time.Unix(1_800_000_000, 0)}
}

func (r *recordsRig) open(actor crdt.ActorID, window int) *bounded.Account {
	r.t.Helper()
	a, err := bounded.Open(r.st, "k", bounded.AccountOptions{Actor: actor, RetryCount: 1, Backoff: bounded.Backoff{Initial: -1},
		Counter: bounded.Options{Window: window}, Clock: func() time.Time { return r.now }})
	require.NoError(r.t, err)
	return a
}

// credits applies n new transactions on a.
func (r *recordsRig) credits(a *bounded.Account, prefix string, n int) {
	r.t.Helper()
	for i := range n {
		res, err := a.Credit(context.Background(), crdt.TxnID(fmt.Sprintf("%s%d", prefix, i)), 1)
		require.NoError(r.t, err)
		require.Equal(r.t, bounded.Applied, res.Outcome)
	}
}

// records returns the decoded siblings of txn's record key.
func (r *recordsRig) records(txn crdt.TxnID) []ledger.Record {
	return storedRecords(r.t, r.st, txn)
}

// storedRecords returns the decoded siblings of txn's record key of key
// "k" in st.
func storedRecords(t *testing.T, st store.Siblings, txn crdt.TxnID) []ledger.Record {
	t.Helper()
	sibs, _, err := st.Fetch(context.Background(), ledger.RecordKey("k", txn))
	require.NoError(t, err)
	var out []ledger.Record
	for _, b := range sibs {
		var rec ledger.Record
		require.NoError(t, rec.UnmarshalBinary(b))
		out = append(out, rec)
	}
	return out
}

func (r *recordsRig) value(a *bounded.Account) int64 {
	r.t.Helper()
	v, err := a.Value(context.Background())
	require.NoError(r.t, err)
	return v
}

// TestRetryAfterTheWindowSlides: a retry on another account after x left
// every holder's count window (the default 64, and 1) is a duplicate, by
// x's record: after 10,000 other credits with the default window.
func TestRetryAfterTheWindowSlides(t *testing.T) {
	testsize.SkipSequential(t)
	for _, tc := range []struct{ window, others int }{{0, 10_000}, {1, 1}} {
		t.Run(fmt.Sprint("window=", tc.window), func(t *testing.T) {
			ctx := context.Background()
			r := newRecordsRig(t)
			a, b := r.open("a", tc.window), r.open("b", tc.window)
			_, err := a.Credit(ctx, "x", 100)
			require.NoError(t, err)
			r.credits(a, "o", tc.others)
			c, err := a.Sync(ctx)
			require.NoError(t, err)
			require.Empty(t, c.Holders("x"), "x left a's window")
			res, err := b.Credit(ctx, "x", 100)
			require.NoError(t, err)
			require.Equal(t, bounded.Duplicate, res.Outcome)
			require.Equal(t, int64(100+tc.others), r.value(b))
			_, err = b.Credit(ctx, "x", 7)
			require.ErrorIs(t, err, crdt.ErrConflictingTransaction, "the record's amount")
			require.Equal(t, int64(100+tc.others), r.value(b))
		})
	}
}

// TestRetryWindowBoundary: x's record answers a retry RetryWindow after it
// was made, not 1 ns later (then an untimed retry is applied again: SPEC.md
// 13.5, "Records").
func TestRetryWindowBoundary(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		after time.Duration
		want  bounded.Outcome
	}{{bounded.DefaultRetryWindow, bounded.Duplicate}, {bounded.DefaultRetryWindow + time.Nanosecond, bounded.Applied}} {
		t.Run(tc.after.String(), func(t *testing.T) {
			r := newRecordsRig(t)
			a, b := r.open("a", 1), r.open("b", 1)
			_, err := a.Credit(ctx, "x", 5)
			require.NoError(t, err)
			r.credits(a, "o", 1) // x leaves a's window
			r.now = r.now.Add(tc.after)
			res, err := b.Credit(ctx, "x", 5)
			require.NoError(t, err)
			require.Equal(t, tc.want, res.Outcome)
		})
	}
}

// TestRecordPutRefused: a credit whose record cannot be written is
// ambiguous_write (applied, landed), and its record is owed: written before
// the account's next cycle, which fails unavailable, nothing applied, while
// it cannot be; a retry there of the credit is ambiguous too. Once it is
// written, a retry elsewhere after the window slid is a duplicate.
func TestRecordPutRefused(t *testing.T) {
	ctx := context.Background()
	r := newRecordsRig(t)
	a, b := r.open("a", 1), r.open("b", 1)
	refuseRecords := func(c faulty.Call) faulty.Fault {
		if c.Method == faulty.MethodPut && bounded.IsRecordKey(c.Key) {
			return faulty.Refuse
		}
		return faulty.Pass
	}
	r.st.SetPolicy(refuseRecords)
	res, err := a.Credit(ctx, "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.Equal(t, bounded.Applied, res.Outcome)
	require.True(t, res.Landed)
	require.Empty(t, r.records("x"))

	_, err = a.Credit(ctx, "y", 1)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite, "nothing of y was sent")
	_, err = a.Credit(ctx, "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite, "x landed, its record owed")
	require.Equal(t, int64(5), r.value(b), "y not applied")

	r.st.SetPolicy(nil)
	res, err = a.Credit(ctx, "y", 1) // writes x's record first, then y slides x out
	require.NoError(t, err)
	require.Equal(t, bounded.Applied, res.Outcome)
	recs := r.records("x")
	require.Len(t, recs, 1)
	require.Equal(t, a.Writer(), recs[0].Writer)
	res, err = b.Credit(ctx, "x", 5)
	require.NoError(t, err)
	require.Equal(t, bounded.Duplicate, res.Outcome)
	require.Equal(t, int64(6), r.value(b))
}

// TestWriteInDoubtRecordedWhenSeenLanded: a credit whose Put lost its
// acknowledgement, and whose retry's read was refused, is recorded at the
// account's next call, whose read shows the write landed.
func TestWriteInDoubtRecordedWhenSeenLanded(t *testing.T) {
	ctx := context.Background()
	r := newRecordsRig(t)
	a := r.open("a", 0)
	r.st.SetPolicy(counterCalls(faulty.Script(faulty.Pass, faulty.LoseAck, faulty.Refuse)))
	_, err := a.Credit(ctx, "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, a.Pending())
	require.Empty(t, r.records("x"))
	_, err = a.Sync(ctx)
	require.NoError(t, err)
	require.False(t, a.Pending())
	recs := r.records("x")
	require.Len(t, recs, 1)
	require.Equal(t, ledger.Record{Txn: "x", Amount: 5, Writer: a.Writer(), At: r.now.UTC(), Version: 1}, recs[0])
}

// TestDuplicateLeavesARecord: an account that answers a retry from another
// account's copy whose record is missing (that account's record Put was
// refused, and its process stopped) writes the record, naming that copy,
// before it acknowledges; so an account reading the key stale finds it.
func TestDuplicateLeavesARecord(t *testing.T) {
	ctx := context.Background()
	r := newRecordsRig(t)
	a, b := r.open("a", 0), r.open("b", 0)
	r.st.SetPolicy(func(c faulty.Call) faulty.Fault {
		if c.Method == faulty.MethodPut && bounded.IsRecordKey(c.Key) {
			return faulty.Refuse
		}
		return faulty.Pass
	})
	_, err := a.Credit(ctx, "x", 5)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	r.st.SetPolicy(nil) // a stops here, its record owed
	res, err := b.Credit(ctx, "x", 5)
	require.NoError(t, err)
	require.Equal(t, bounded.Duplicate, res.Outcome)
	recs := r.records("x")
	require.Len(t, recs, 1)
	require.Equal(t, a.Writer(), recs[0].Writer, "the record names the copy that counts")

	c := r.open("c", 0)
	r.st.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.StaleBy(10)), faulty.MethodFetch)))
	res, err = c.Credit(ctx, "x", 5) // c's read of the key is from before x
	require.NoError(t, err)
	require.Equal(t, bounded.Duplicate, res.Outcome, "found by its record")
	r.st.SetPolicy(nil)
	require.Equal(t, int64(5), r.value(c))
}

// TestDamagedRecordFailsItsCallAlone: a record sibling that does not decode
// fails the calls of its transaction (crdt.ErrCorruptEncoding), writing
// nothing; other transactions go on.
func TestDamagedRecordFailsItsCallAlone(t *testing.T) {
	ctx := context.Background()
	r := newRecordsRig(t)
	a := r.open("a", 0)
	require.NoError(t, r.st.Put(ctx, ledger.RecordKey("k", "x"), "z", []byte{0x93, 0xc1}, nil))
	_, err := a.Credit(ctx, "x", 5)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding)
	sibs, _, err := r.st.Fetch(ctx, "k")
	require.NoError(t, err)
	require.Empty(t, sibs, "nothing written")
	res, err := a.Credit(ctx, "y", 1)
	require.NoError(t, err)
	require.Equal(t, bounded.Applied, res.Outcome)
}
