package ledger_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// gateStore holds the first Put of the account key by a writer whose id
// starts with who until gate is closed: a write slow to land.
type gateStore struct {
	*memory.Siblings
	who     string
	gate    chan struct{}
	holding chan struct{} // closed once the Put is held
	once    sync.Once
}

func (g *gateStore) Put(ctx context.Context, key string, actor crdt.ActorID, v []byte, token store.Token) error {
	if strings.HasPrefix(string(actor), g.who) && !ledger.IsRecordKey(key) {
		held := false
		g.once.Do(func() { held = true })
		if held {
			close(g.holding)
			<-g.gate
		}
	}
	return g.Siblings.Put(ctx, key, actor, v, token)
}

// TestLateCopyOfACountedTransaction: x is delivered to ledgers A and B at
// once. A's write of x is slow to land; meanwhile B applies x, records it,
// and with its next credits folds x and forgets it (counted in its total).
// When A's write lands, its copy would count x a second time, for good:
// nothing holds B's copy for the owner rule to choose between them. Before
// recording x, A reads its record, finds it names B, reads the account,
// sees B's entry past that record without x, takes its own copy out and
// answers duplicate (SPEC.md 6.11 step 3). Both id orders: A's id sorts
// first, then B's.
//
// Broken variant, seen to fail: confirm writing the record without
// reading it (x counted twice, 152).
func TestLateCopyOfACountedTransaction(t *testing.T) {
	for _, names := range [][2]crdt.ActorID{{"a", "b"}, {"b", "a"}} {
		t.Run(string(names[0])+"-late", func(t *testing.T) {
			ctx := context.Background()
			g := &gateStore{Siblings: memory.NewSiblings(), who: string(names[0]), gate: make(chan struct{}), holding: make(chan struct{})}
			mk := func(actor crdt.ActorID) *ledger.Ledger {
				l, err := ledger.New(g, "k", ledger.Options{Actor: actor, Counter: tpncounter.Options{HistoryLength: 1, FoldedLength: 1}})
				require.NoError(t, err)
				return l
			}
			a, b := mk(names[0]), mk(names[1])
			type answer struct {
				r   ledger.Result
				err error
			}
			done := make(chan answer)
			go func() {
				r, err := a.Credit(ctx, "x", 1)
				done <- answer{r, err}
			}()
			<-g.holding
			r, err := b.Credit(ctx, "x", 1)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, r.Outcome, "B does not see A's copy")
			want := int64(1)
			for i, id := range []crdt.TxnID{"y", "z", "w", "v"} {
				_, err := b.Credit(ctx, id, int64(10<<i))
				require.NoError(t, err)
				want += 10 << i
			}
			c, err := mk("reader").Find(ctx)
			require.NoError(t, err)
			require.False(t, c.HasTransaction("x"), "B forgot x before A's copy landed")
			close(g.gate)
			got := <-done
			require.NoError(t, got.err)
			require.Equal(t, tpncounter.Duplicate, got.r.Outcome, "B counted x first")
			require.Equal(t, b.Writer(), got.r.Owner.Actor)
			v, err := mk("reader").Value(ctx)
			require.NoError(t, err)
			require.Equal(t, want, v, "x counted once")
			r, err = mk("retry").Credit(ctx, "x", 1)
			require.NoError(t, err)
			require.Equal(t, tpncounter.Duplicate, r.Outcome)
		})
	}
}
