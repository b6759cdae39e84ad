package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// twoLayouts makes two first uses of account "hot" with different n: s4
// (n=4) writes its marker, then s2 (n=2, through fs) reads the account key
// stale, sees a new account and writes its own. Both credits land; the
// account holds both markers, and sums 30.
func twoLayouts(t *testing.T, clock *fakeClock) (inner *memory.Siblings, fs *faulty.Siblings, s4, s2 *ledger.Sharded) {
	t.Helper()
	ctx := context.Background()
	inner = memory.NewSiblings()
	fs = faulty.NewSiblings(inner, faulty.Options{})
	opts := func(actor crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: actor, Clock: clock.Now, Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1}
	}
	var err error
	s4, err = ledger.NewSharded(inner, "hot", 4, opts("A"))
	require.NoError(t, err)
	s2, err = ledger.NewSharded(fs, "hot", 2, opts("B"))
	require.NoError(t, err)
	_, _, err = fs.Fetch(ctx, "hot") // fs records the new account's state
	require.NoError(t, err)
	_, err = s4.Credit(ctx, "a1", 10)
	require.NoError(t, err)
	fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Stale), faulty.MethodFetch), func(k string) bool { return k == "hot" }))
	_, err = s2.Credit(ctx, "b1", 20)
	require.NoError(t, err)
	fs.SetPolicy(nil)
	require.Equal(t, 2, inner.Count("hot"), "both markers stored")
	return inner, fs, s4, s2
}

// requireSums requires every value, and fresh readers of n=2 and n=4, to
// read want.
func requireSums(t *testing.T, st store.Siblings, want int64, ss ...*ledger.Sharded) {
	t.Helper()
	for _, n := range []int{2, 4} {
		r, err := ledger.NewSharded(st, "hot", n, ledger.Options{Actor: crdt.ActorID(fmt.Sprint("reader-", n))})
		require.NoError(t, err)
		ss = append(ss, r)
	}
	for _, s := range ss {
		v, err := s.Value(context.Background())
		require.NoError(t, err, "n=%d", s.Shards())
		require.Equal(t, want, v, "n=%d reads each transaction once", s.Shards())
	}
}

// Two first uses with different n both wrote a marker. Within
// LayoutRecheck of its last check the smaller n still writes (the limit
// Sharded documents); after it, its writes are refused, the larger n
// writes on, a transaction delivered to both at once counts once, nothing
// is left stuck, and every reader sums each transaction once.
func TestShardedTwoLayoutsSmallerStops(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner, _, s4, s2 := twoLayouts(t, clock)
	_, err := s2.Credit(ctx, "b2", 5)
	require.NoError(t, err, "within LayoutRecheck, n=2 still writes")

	clock.Add(ledger.LayoutRecheck)
	want := int64(35)
	var split int
	for i := range 40 {
		txn := crdt.TxnID(fmt.Sprint("c-", i))
		if ledger.ShardOf(txn, 2) != ledger.ShardOf(txn, 4) {
			split++
		}
		var errs [2]error
		var wg sync.WaitGroup
		for j, s := range []*ledger.Sharded{s2, s4} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[j] = s.Credit(ctx, txn, 3)
			}()
		}
		wg.Wait()
		require.ErrorIs(t, errs[0], crdt.ErrInvalidConfig, "%s: n=2 refused", txn)
		require.NoError(t, errs[1], "%s: n=4 writes", txn)
		want += 3
	}
	require.Positive(t, split, "some transactions have different sub-keys under 2 and 4")
	for _, x := range []struct {
		txn    crdt.TxnID
		amount int64
	}{{"b1", 20}, {"b2", 5}} {
		r, err := s4.Credit(ctx, x.txn, x.amount)
		require.NoError(t, err)
		require.Equal(t, tpncounter.Duplicate, r.Outcome, "n=2's %s retried through n=4", x.txn)
	}
	_, err = s4.FindAll(ctx)
	require.NoError(t, err)
	require.False(t, s4.Pending() || s2.Pending(), "nothing left pending")
	requireSums(t, inner, want, s4, s2)
}

// A failed write to a sub-key makes the next write read the marker at
// once, without waiting for LayoutRecheck.
func TestShardedFailedWriteRechecksLayout(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner, fs, s4, s2 := twoLayouts(t, clock)
	fs.SetPolicy(func(c faulty.Call) faulty.Fault {
		if c.Method == faulty.MethodPut && strings.HasPrefix(c.Key, "hot/") {
			return faulty.Refuse
		}
		return faulty.Pass
	})
	_, err := s2.Credit(ctx, "u", 7)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	fs.SetPolicy(nil)
	_, err = s2.Credit(ctx, "u", 7)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=2 refused at once")
	_, err = s4.Credit(ctx, "u", 7)
	require.NoError(t, err)
	requireSums(t, inner, 37, s4, s2)
}

// A Find whose write to a sub-key fails voids the layout's trust too: the
// next write reads the marker at once (SPEC.md 6.12, "a write").
func TestShardedFailedFindRechecksLayout(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	_, fs, _, s2 := twoLayouts(t, clock)
	fs.SetPolicy(func(c faulty.Call) faulty.Fault {
		if c.Method == faulty.MethodPut && strings.HasPrefix(c.Key, "hot/") {
			return faulty.Refuse
		}
		return faulty.Pass
	})
	_, err := s2.FindAll(ctx)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	fs.SetPolicy(nil)
	_, err = s2.Credit(ctx, "u", 7)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=2 refused at once")
}

// resetPuts answers the first fail Puts of key with an error the store
// does not classify ("connection reset"), writing nothing.
type resetPuts struct {
	store.Siblings
	key        string
	fail, puts int
}

func (r *resetPuts) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	if key == r.key {
		if r.puts++; r.puts <= r.fail {
			return errors.New("test: connection reset")
		}
	}
	return r.Siblings.Put(ctx, key, actor, value, token)
}

// An error the store does not classify on the marker's write is taken as
// ambiguous (store.Siblings, SPEC.md 6.9): the write is retried, and the
// error of a last attempt failing so wraps crdt.ErrAmbiguousWrite.
func TestShardedLayoutUnclassifiedPut(t *testing.T) {
	ctx := context.Background()
	for _, fail := range []int{1, 2} {
		st := &resetPuts{Siblings: memory.NewSiblings(), key: "hot", fail: fail}
		s, err := ledger.NewSharded(st, "hot", 4, ledger.Options{Actor: "a", Backoff: ledger.Backoff{Initial: -1}, RetryCount: 1})
		require.NoError(t, err)
		r, err := s.Credit(ctx, "x", 5)
		require.Equal(t, 2, st.puts, "fail=%d: the marker's write retried", fail)
		if fail == 1 {
			require.NoError(t, err)
			require.Equal(t, tpncounter.Applied, r.Outcome)
			continue
		}
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
		require.ErrorContains(t, err, "connection reset")
		v, err := s.Value(ctx)
		require.NoError(t, err)
		require.Zero(t, v, "no transaction written before the marker")
	}
}

// A smaller n refused after a write in doubt first lands it and writes its
// record, so that the caller's retry through the larger n is recognised:
// n=2's credit of u lands with its acknowledgement lost and its retry's
// read refused; the next call on n=2 is refused (the failure forces the
// marker's re-read), and u, retried through n=4, is a duplicate.
func TestShardedRefusalLandsWhatItHolds(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	inner, fs, s4, s2 := twoLayouts(t, clock)
	var u crdt.TxnID
	for i := 0; ledger.ShardOf(u, 2) == ledger.ShardOf(u, 4); i++ {
		u = crdt.TxnID(fmt.Sprint("u-", i))
	}
	sub := s2.Key(ledger.ShardOf(u, 2))
	fs.SetPolicy(faulty.Keys(faulty.Script(faulty.Pass, faulty.LoseAck, faulty.Refuse), func(k string) bool { return k == sub }))
	_, err := s2.Credit(ctx, u, 7)
	fs.SetPolicy(nil)
	require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	require.True(t, s2.Pending())
	_, err = s2.Credit(ctx, u, 7)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=2 refused")
	r, err := s4.Credit(ctx, u, 7)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome, "u's retry through n=4")
	requireSums(t, inner, 37, s4)
}

// gatedFetches holds the next Fetch of a key in gates until its channel
// is closed, then answers it (refused when fail says so), and counts the
// Fetches of each key: a hook of a faulty store.
type gatedFetches struct {
	mu      sync.Mutex
	gates   map[string]chan struct{}
	fail    map[string]bool
	entered chan string
	fetches map[string]int
}

func (g *gatedFetches) hook(_ context.Context, c faulty.Call, after bool) error {
	if after || c.Method != faulty.MethodFetch {
		return nil
	}
	g.mu.Lock()
	gate, fail := g.gates[c.Key], g.fail[c.Key]
	delete(g.gates, c.Key)
	delete(g.fail, c.Key)
	g.fetches[c.Key]++
	g.mu.Unlock()
	if gate != nil {
		g.entered <- c.Key
		<-gate
	}
	if fail {
		return fmt.Errorf("test: %w", crdt.ErrUnavailable)
	}
	return nil
}

func (g *gatedFetches) gate(key string, fail bool) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := make(chan struct{})
	g.gates[key], g.fail[key] = c, fail
	return c
}

// A write that fails while a layout check is reading the marker voids
// that check: the next write reads the marker again, as after any failed
// write, instead of trusting the check for LayoutRecheck.
func TestShardedFailureDuringLayoutRead(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	st := &gatedFetches{gates: map[string]chan struct{}{}, entered: make(chan string), fail: map[string]bool{}, fetches: map[string]int{}}
	s, err := ledger.NewSharded(faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Hook: st.hook}), "hot", 2, ledger.Options{Actor: "a", Clock: clock.Now, Backoff: ledger.Backoff{Initial: -1}})
	require.NoError(t, err)
	_, err = s.Credit(ctx, "t0", 1)
	require.NoError(t, err)

	sub := s.Key(s.Shard("y"))
	subGate := st.gate(sub, true)
	failed := make(chan error)
	go func() { _, err := s.Credit(ctx, "y", 2); failed <- err }() // trusts the layout
	require.Equal(t, sub, <-st.entered)
	clock.Add(ledger.LayoutRecheck)
	markerGate := st.gate("hot", false)
	checked := make(chan error)
	go func() { _, err := s.Credit(ctx, "z", 3); checked <- err }() // reads the marker
	require.Equal(t, "hot", <-st.entered)
	close(subGate)
	require.ErrorIs(t, <-failed, crdt.ErrUnavailable)
	close(markerGate)
	require.NoError(t, <-checked)

	before := st.fetches["hot"]
	_, err = s.Credit(ctx, "w", 4)
	require.NoError(t, err)
	require.Equal(t, before+1, st.fetches["hot"], "the write after the failure reads the marker")
}

// A marker Put in doubt, then a read that finds another process's marker
// naming another n: the refusal is invalid_config alone (SPEC.md 6.12), not
// ambiguous_write as well, which callers would retry.
func TestShardedMarkerDoubtThenOtherN(t *testing.T) {
	ctx := context.Background()
	inner := memory.NewSiblings()
	fs := faulty.NewSiblings(inner, faulty.Options{})
	fetches := 0
	fs.SetHook(func(ctx context.Context, c faulty.Call, after bool) error {
		if c.Key == "acct" && c.Method == faulty.MethodFetch && !after {
			fetches++
			if fetches == 2 {
				return inner.Put(ctx, "acct", "other", []byte("counterkit.ledger.sharded/1 shards=4"), nil)
			}
		}
		return nil
	})
	fs.SetPolicy(faulty.Keys(faulty.Only(faulty.Script(faulty.Lose), faulty.MethodPut), func(k string) bool { return k == "acct" }))
	s, err := ledger.NewSharded(fs, "acct", 2, ledger.Options{Actor: "a", RetryCount: 3, Backoff: ledger.Backoff{Initial: -1}})
	require.NoError(t, err)
	_, err = s.Credit(ctx, "x", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	require.NotErrorIs(t, err, crdt.ErrAmbiguousWrite)
}
