package ledger_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
)

// TestBookKeepsAGiveUpUnwritten: a Book's ledger that gives its copy up
// to another writer's (SPEC.md 6.11 step 6) when it writes an owed
// give-up record, then answers a retry from the records with no write of
// its own, holds the take-out alone: its entry in the store still lists
// the copy. The Book must keep that ledger (Stats.Pending) and LandPending
// must write the take-out. Dropped, the copy stays in the store, and if
// the owner forgot the transaction in writes from reads before that copy
// landed, it counts twice (TestPromiseConcurrentDeliveriesLostAcks met
// this about once in 2,000 runs before the Book kept such a ledger).
//
// Schedule (a < c): the Book (actor c) credits x (5) from a read without
// any copy; before its Put, ledger a credits x, lands and records it. The
// Book's Put lands: its copy meets a's (a duplicate). The Book credits y:
// its cycle gives x up to a's copy, and the record's Put loses its
// acknowledgement, then is refused: y fails, the record is owed. A retry
// of x writes the owed record, takes the Book's copy out and is answered
// from the records: nothing written.
func TestBookKeepsAGiveUpUnwritten(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	a, err := ledger.New(mem, advKey, ledger.Options{Actor: "a"})
	require.NoError(t, err)
	var once sync.Once
	hook := func(ctx context.Context, c faulty.Call, after bool) error {
		if c.Method == faulty.MethodPut && !after && !ledger.IsRecordKey(c.Key) {
			once.Do(func() {
				_, err := a.Credit(ctx, "x", 5)
				require.NoError(t, err)
			})
		}
		return nil
	}
	recordPuts := faulty.Only(faulty.Script(faulty.LoseAck, faulty.Refuse, faulty.Refuse, faulty.Refuse, faulty.Refuse), faulty.MethodPut)
	st := faulty.NewSiblings(mem, faulty.Options{Hook: hook, Policy: faulty.Keys(recordPuts, ledger.IsRecordKey)})
	book, err := ledger.NewBook(st, ledger.BookOptions{Options: ledger.Options{Actor: "c", Backoff: ledger.Backoff{Initial: -1}}})
	require.NoError(t, err)

	r, err := book.Credit(ctx, advKey, "x", 5)
	require.NoError(t, err)
	require.True(t, isDuplicate(r.Outcome), "the Book's copy met a's: %v", r.Outcome)
	var c crdt.ActorID
	for w := range stored(t, mem).LiveActors() {
		if w != a.Writer() {
			c = w
		}
	}
	require.True(t, holdsTxn(stored(t, mem), c, "x"), "the Book's copy landed")
	_, err = book.Credit(ctx, advKey, "y", 1)
	require.Error(t, err, "y's cycle could not write its give-up record")
	st.SetPolicy(nil)
	r, err = book.Credit(ctx, advKey, "x", 5)
	require.NoError(t, err)
	require.True(t, isDuplicate(r.Outcome))
	require.True(t, holdsTxn(stored(t, mem), c, "x"), "the retry wrote nothing")
	require.Equal(t, 1, book.Stats().Pending, "the Book keeps the ledger that holds an unwritten take-out")

	require.NoError(t, book.LandPending(ctx))
	require.False(t, holdsTxn(stored(t, mem), c, "x"), "LandPending wrote the take-out")
	require.Equal(t, 0, book.Stats().Pending)
	v, err := a.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(5), v)
}
