package ledger_test

// Tests of ledger.Book and ledger.Sharded from a review written from their
// documentation (Book and Sharded godoc, SPEC.md 6.11-6.12).

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// rvPlan gives the next calls on one key the listed faults, then passes.
type rvPlan struct {
	mu     sync.Mutex
	key    string
	method string
	faults []faulty.Fault
}

func (p *rvPlan) set(key, method string, fs ...faulty.Fault) {
	p.mu.Lock()
	p.key, p.method, p.faults = key, method, fs
	p.mu.Unlock()
}

func (p *rvPlan) policy(c faulty.Call) faulty.Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.faults) == 0 || c.Key != p.key || c.Method != p.method {
		return faulty.Pass
	}
	f := p.faults[0]
	p.faults = p.faults[1:]
	return f
}

func rvActors(t *testing.T, mem *memory.Siblings, key string) []crdt.ActorID {
	t.Helper()
	sibs, _, err := mem.Fetch(context.Background(), key)
	require.NoError(t, err)
	return slices.Collect(maps.Keys(maps.Collect(decodeState(t, sibs...).LiveActors())))
}

// TestBookFailedFirstReadKeepsIncarnation: a Book's reopened Ledger
// whose first read fails keeps the key's remembered incarnation for the
// next reopening (Book's godoc: "A key opened again continues the dropped
// Ledger's incarnation unless its first read is stale").
//
// Schedule: one Book (actor "svc", MaxOpen 1, default options otherwise)
// over the memory store. Four times: Credit k1 (lands), Value k2 (k1's
// idle Ledger is dropped and its incarnation remembered), Value k1 whose
// one Fetch is refused (crdt.ErrUnavailable: the reopened Ledger never
// read), Value k2 (k1's Ledger is dropped again). Then Credit k1: one
// live entry. Before, acquire took the key's remembered incarnation and
// remember() kept nothing for a Ledger that never read, so every failed
// first read before an eviction cost the key a new incarnation (five
// entries here, each left until a pass retired it).
func TestBookFailedFirstReadKeepsIncarnation(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	plan := &rvPlan{}
	fs := faulty.NewSiblings(mem, faulty.Options{Policy: plan.policy})
	book, err := ledger.NewBook(fs, ledger.BookOptions{Options: ledger.Options{Actor: "svc"}, MaxOpen: 1})
	require.NoError(t, err)
	var writers []crdt.ActorID
	for i := range 5 {
		r, err := book.Credit(ctx, "k1", crdt.TxnID(fmt.Sprint("t", i)), 1)
		require.NoError(t, err)
		writers = append(writers, r.Writer)
		if i == 4 {
			break
		}
		_, err = book.Value(ctx, "k2") // drops k1's Ledger: remembered
		require.NoError(t, err)
		plan.set("k1", faulty.MethodFetch, faulty.Refuse)
		_, err = book.Value(ctx, "k1") // reopens k1; its read is refused
		require.ErrorIs(t, err, crdt.ErrUnavailable)
		_, err = book.Value(ctx, "k2") // drops k1's Ledger again: forgotten
		require.NoError(t, err)
	}
	entries := rvActors(t, mem, "k1")
	t.Logf("writers %v; live entries %v; stats %+v", writers, entries, book.Stats())
	require.Len(t, entries, 1, "one incarnation: no read was stale")
}

// TestBookShardedBadInput invalid keys and accounts (empty, in the
// records' space, too long, a control character), invalid ids, amounts of 0
// and -2^63, n outside 1..MaxShards and a negative MaxOpen are refused with
// their sentinels by Book and Sharded.
func TestBookShardedBadInput(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	book, err := ledger.NewBook(mem, ledger.BookOptions{Options: ledger.Options{Actor: "svc"}})
	require.NoError(t, err)
	rk := ledger.RecordKey("a", "t")
	for _, k := range []string{"", rk, strings.Repeat("k", 5000), "a\x00b"} {
		_, err := book.Credit(ctx, k, "t", 1)
		t.Logf("credit %q: %v", k[:min(len(k), 20)], err)
		require.ErrorIs(t, err, crdt.ErrInvalidKey)
		_, err = book.Value(ctx, k)
		require.ErrorIs(t, err, crdt.ErrInvalidKey)
		_, err = book.Find(ctx, k)
		require.ErrorIs(t, err, crdt.ErrInvalidKey)
		_, err = book.HasTransaction(ctx, k, "t")
		require.ErrorIs(t, err, crdt.ErrInvalidKey)
	}
	_, err = book.Credit(ctx, "k", "", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	_, err = book.Credit(ctx, "k", "t", 0)
	t.Logf("credit 0: %v", err)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = book.Debit(ctx, "k", "t", -1)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = book.Update(ctx, "k", "t", -1<<63)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = book.Find(ctx, "k")
	require.NoError(t, err)
	_, err = book.HasTransaction(ctx, "k", "")
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	_, err = ledger.NewBook(mem, ledger.BookOptions{Options: ledger.Options{Actor: "svc"}, MaxOpen: -1})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = ledger.NewBook(mem, ledger.BookOptions{Options: ledger.Options{Actor: ""}})
	require.ErrorIs(t, err, crdt.ErrInvalidActor)

	for _, n := range []int{0, -1, 1025} {
		_, err := ledger.NewSharded(mem, "acct", n, ledger.Options{Actor: "svc"})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, n)
	}
	for _, a := range []string{"", rk, strings.Repeat("k", 5000)} {
		_, err := ledger.NewSharded(mem, a, 4, ledger.Options{Actor: "svc"})
		t.Logf("account %q: %v", a[:min(len(a), 20)], err)
		require.ErrorIs(t, err, crdt.ErrInvalidKey)
	}
	s, err := ledger.NewSharded(mem, "acct", 4, ledger.Options{Actor: "svc"})
	require.NoError(t, err)
	_, err = s.Credit(ctx, "", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	_, err = s.Credit(ctx, "t", 0)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = s.Update(ctx, "t", -1<<63)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = s.Find(ctx, "")
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	_, err = s.HasTransaction(ctx, "")
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
}

// rvAt injects faults at given call numbers (counted over every call).
type rvAt struct {
	mu  sync.Mutex
	n   int
	at  map[int]faulty.Fault
	off bool
}

func (p *rvAt) policy(c faulty.Call) faulty.Fault {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.off {
		return faulty.Pass
	}
	f := p.at[p.n]
	if f.Kind() == faulty.Stale && ledger.IsRecordKey(c.Key) {
		return faulty.Pass // SPEC.md 6.11 "Reads of records": out of scope
	}
	return f
}

func (p *rvAt) calls() int { p.mu.Lock(); defer p.mu.Unlock(); return p.n }

type rvOp struct {
	who  int // actor
	kind string
	txn  crdt.TxnID
	amt  int64
}

type rvActor interface {
	update(ctx context.Context, x crdt.TxnID, amt int64) (ledger.Result, error)
	evict(ctx context.Context) error
	flush(ctx context.Context) error
}

type rvBook struct{ b *ledger.Book }

func (a rvBook) update(ctx context.Context, x crdt.TxnID, amt int64) (ledger.Result, error) {
	r, err := a.b.Update(ctx, "k", x, amt)
	return r.Result, err
}
func (a rvBook) evict(ctx context.Context) error { _, err := a.b.Value(ctx, "other"); return err }
func (a rvBook) flush(ctx context.Context) error {
	if err := a.b.LandPending(ctx); err != nil {
		return err
	}
	_, err := a.b.Find(ctx, "k")
	return err
}

type rvShard struct{ s *ledger.Sharded }

func (a rvShard) update(ctx context.Context, x crdt.TxnID, amt int64) (ledger.Result, error) {
	return a.s.Update(ctx, x, amt)
}
func (a rvShard) evict(ctx context.Context) error { return nil }
func (a rvShard) flush(ctx context.Context) error { _, err := a.s.FindAll(ctx); return err }

// rvRun runs script with faults at the given call numbers, then quiesces
// and checks: no call of a txn answered Applied after a call of it was
// answered Applied (sequential calls: the window), and the stored value
// counts each txn once.
func rvRun(sharded bool, script []rvOp, at map[int]faulty.Fault) (string, int) {
	ctx := context.Background()
	mem := memory.NewSiblings()
	pol := &rvAt{at: at}
	fs := faulty.NewSiblings(mem, faulty.Options{Policy: pol.policy, RecordWrites: true})
	opts := func(a crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: a, Backoff: ledger.Backoff{Initial: -1}}
	}
	var actors []rvActor
	for _, a := range []crdt.ActorID{"a", "b"} {
		if sharded {
			s, err := ledger.NewSharded(fs, "acct", 2, opts(a))
			if err != nil {
				return err.Error(), 0
			}
			actors = append(actors, rvShard{s})
		} else {
			b, err := ledger.NewBook(fs, ledger.BookOptions{Options: opts(a), MaxOpen: 1})
			if err != nil {
				return err.Error(), 0
			}
			actors = append(actors, rvBook{b})
		}
	}
	acked := map[crdt.TxnID]bool{}
	amounts := map[crdt.TxnID]int64{}
	var trace []string
	for _, op := range script {
		a := actors[op.who]
		switch op.kind {
		case "up":
			amounts[op.txn] = op.amt
			r, err := a.update(ctx, op.txn, op.amt)
			trace = append(trace, fmt.Sprintf("%d:%s %v %v @%d", op.who, op.txn, r.Outcome, err, pol.calls()))
			if err == nil && r.Outcome == tpncounter.Applied {
				if acked[op.txn] {
					return fmt.Sprintf("retry of %s applied again: %v", op.txn, trace), pol.n
				}
				acked[op.txn] = true
			}
		case "evict":
			a.evict(ctx)
		case "deliver":
			fs.DeliverAll()
		}
	}
	pol.mu.Lock()
	pol.off = true
	n := pol.n
	pol.mu.Unlock()
	fs.DeliverAll()
	for range 2 {
		for _, a := range actors {
			_ = a.flush(ctx)
		}
	}
	for x, amt := range amounts {
		for _, a := range actors {
			if r, err := a.update(ctx, x, amt); err != nil || (acked[x] && r.Outcome == tpncounter.Applied) {
				return fmt.Sprintf("quiesced retry of %s: %v %v; %v", x, r.Outcome, err, trace), n
			}
		}
	}
	for range 2 {
		for _, a := range actors {
			if err := a.flush(ctx); err != nil {
				return "flush: " + err.Error(), n
			}
		}
	}
	var want int64
	for _, v := range amounts {
		want += v
	}
	var got int64
	keys := []string{"k"}
	if sharded {
		keys = []string{"acct/0", "acct/1"}
	}
	for _, k := range keys {
		sibs, _, _ := mem.Fetch(ctx, k)
		c, _ := tpncounter.New(tpncounter.Options{})
		for _, b := range sibs {
			one, _ := tpncounter.New(tpncounter.Options{})
			if err := one.UnmarshalBinary(b); err != nil {
				return err.Error(), n
			}
			c.Merge(one)
		}
		got += c.Value()
	}
	if got != want {
		return fmt.Sprintf("value %d, want %d: %v", got, want, trace), n
	}
	return "", n
}

// TestBookShardedEnumerated two actors ("a", "b"), each a Book
// (MaxOpen 1, evicting key k by reading another) or a Sharded (n = 2),
// default options but no backoff wait, run a short script of credits and
// retries of x and y (and, in the second, deliveries of held writes), with
// every placement of one or two faults (Refuse, LoseAck, Lose, Hold,
// StaleBy(2); no stale read of a record, SPEC.md 6.11 "Reads of
// records") on the store's calls: by default two faults for the first
// script on Books and the second on Sharded accounts, one fault for the
// other two (two everywhere with COUNTERKIT_CASES set). Checked: no call answers Applied after a
// call of its txn answered Applied (SPEC.md 6.11, the window); after
// quiescence (faults off, held writes delivered, LandPending/FindAll, every
// txn retried on both actors) each txn counts once.
func TestBookShardedEnumerated(t *testing.T) {
	testsize.SkipSequential(t)
	script := []rvOp{
		{0, "up", "x", 5}, {0, "evict", "", 0}, {1, "up", "x", 5},
		{0, "up", "y", 3}, {0, "up", "x", 5}, {1, "evict", "", 0}, {1, "up", "y", 3}, {0, "evict", "", 0}, {0, "up", "y", 3},
	}
	scripts := [][]rvOp{script}
	if !testing.Short() {
		scripts = append(scripts, []rvOp{
			{0, "up", "x", 5}, {0, "evict", "", 0}, {1, "up", "x", 5}, {1, "up", "y", 3}, {0, "deliver", "", 0},
			{1, "evict", "", 0}, {0, "up", "x", 5}, {0, "up", "y", 3}, {1, "up", "x", 5}, {0, "deliver", "", 0}, {0, "evict", "", 0}, {0, "up", "x", 5},
		})
	}
	faults := []faulty.Fault{faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Hold, faulty.StaleBy(2)}
	for si, script := range scripts {
		for _, sharded := range []bool{false, true} {
			pairs := proptest.Scale(1) > 1 || sharded == (si == 1)
			msg0, calls := rvRun(sharded, script, nil)
			t.Logf("sharded=%v: %d calls %s", sharded, calls, msg0)
			fails := 0
			runs := 0
			for i := 1; i <= calls; i++ {
				for j := i; j <= calls; j++ {
					for _, f := range faults {
						for _, g := range faults {
							at := map[int]faulty.Fault{i: f}
							if j != i && !pairs {
								continue
							}
							if j != i {
								at[j] = g
							} else if g != f {
								continue
							}
							runs++
							if msg, _ := rvRun(sharded, script, at); msg != "" {
								fails++
								if fails <= 5 {
									t.Errorf("sharded=%v faults %d:%v %d:%v: %s", sharded, i, f, j, g, msg)
								}
							}
						}
					}
				}
			}
			t.Logf("script %d sharded=%v: %d runs, %d failing", si, sharded, runs, fails)
		}
	}
}
