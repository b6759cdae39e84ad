package balance_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// gated passes each store call of one process only when a scheduler
// grants it.
type gated struct {
	store.Partitions
	pid    int
	events chan<- int // pid: a call waits; -1-pid: the process ended
	grant  chan struct{}
	done   chan struct{}
	open   bool // calls pass without a grant
}

func (g *gated) wait() func() {
	if g.open {
		return func() {}
	}
	g.events <- g.pid
	<-g.grant
	return func() { g.done <- struct{}{} }
}

func (g *gated) Scan(ctx context.Context, p string, from []byte, l store.Read, fn func(store.Row) bool) error {
	defer g.wait()()
	return g.Partitions.Scan(ctx, p, from, l, fn)
}

func (g *gated) Snapshot(ctx context.Context, p string, limit int, l store.Read) ([]store.Row, error) {
	defer g.wait()()
	return g.Partitions.Snapshot(ctx, p, limit, l)
}

func (g *gated) Apply(ctx context.Context, muts []store.Mutation) error {
	defer g.wait()()
	return g.Partitions.Apply(ctx, muts)
}

// orders returns every sequence of a zeros and b ones.
func orders(a, b int) [][]int {
	if a == 0 && b == 0 {
		return [][]int{nil}
	}
	var out [][]int
	if a > 0 {
		for _, o := range orders(a-1, b) {
			out = append(out, append([]int{0}, o...))
		}
	}
	if b > 0 {
		for _, o := range orders(a, b-1) {
			out = append(out, append([]int{1}, o...))
		}
	}
	return out
}

// SPEC.md 9.4 "Layout", Limit: two first Applies with different
// Partitions, their store calls in every order. Each answered applied is
// counted once in the balance the larger layout reads, and readable
// there; the smaller layout is refused once its trust has lapsed; a retry
// through the larger layout after a merge is a duplicate. The same
// transaction applied through both is the stated limit (it can count
// twice) and is only logged.
func TestReview2LayoutRaceEveryOrder(t *testing.T) {
	for _, same := range []bool{false, true} {
		for _, order := range orders(3, 3) {
			t.Run(fmt.Sprintf("same=%v/%v", same, order), func(t *testing.T) {
				ctx := context.Background()
				c := &testClock{t: worldStart(t0)}
				mem := memory.NewPartitions()
				events := make(chan int)
				gs := make([]*gated, 2)
				txs := make([]*balance.Transactions, 2)
				parts := []int{1, 4}
				for i := range 2 {
					gs[i] = &gated{Partitions: mem, pid: i, events: events, grant: make(chan struct{}), done: make(chan struct{})}
					tx, err := balance.NewTransactions(gs[i], balance.TxnOptions{Partitions: parts[i], RecordShards: 2,
						Options: balance.Options{Clock: c.Now}})
					if err != nil {
						t.Fatal(err)
					}
					txs[i] = tx
				}
				ids := []crdt.TxnID{"a", "b"}
				if same {
					ids = []crdt.TxnID{"t", "t"}
				}
				amts := []int64{5, 5}
				if !same {
					amts[1] = 7
				}
				outs := make([]balance.Outcome, 2)
				errs := make([]error, 2)
				for i := range 2 {
					go func() {
						outs[i], errs[i] = txs[i].Apply(ctx, acct, ids[i], amts[i])
						events <- -1 - i
					}()
				}
				waiting, ended := [2]bool{}, [2]bool{}
				next := func(want int) {
					for !waiting[want] && !ended[want] {
						e := <-events
						if e >= 0 {
							waiting[e] = true
						} else {
							ended[-1-e] = true
						}
					}
					if waiting[want] {
						waiting[want] = false
						gs[want].grant <- struct{}{}
						<-gs[want].done
					}
				}
				for _, p := range order {
					next(p)
				}
				for !ended[0] || !ended[1] {
					for p := range 2 {
						if !ended[p] {
							next(p)
						}
					}
				}
				// from here on, calls pass ungated
				for i := range 2 {
					gs[i].open = true
				}
				want := int64(0)
				for i := range 2 {
					if errs[i] != nil && !errors.Is(errs[i], crdt.ErrInvalidConfig) {
						t.Fatalf("apply %d: %v", i, errs[i])
					}
					if errs[i] == nil {
						want += amts[i]
					}
				}
				if errs[0] != nil && errs[1] != nil {
					t.Fatalf("both refused: %v; %v", errs[0], errs[1])
				}
				if same && errs[0] == nil && errs[1] == nil {
					want = amts[0]
				}
				// the account's layout: the larger, unless the smaller
				// landed before the larger read the marker
				big, small := txs[1], txs[0]
				if errs[1] != nil {
					big, small = txs[0], txs[1]
				}
				got, err := big.Balance(ctx, acct)
				if err != nil {
					t.Fatalf("balance: %v", err)
				}
				if got != want {
					if same {
						t.Logf("same id through both layouts: balance %d, one amount %d (the stated limit)", got, want)
					} else {
						t.Errorf("balance %d, want %d (outcomes %v/%v, errors %v/%v)", got, want, outs[0], outs[1], errs[0], errs[1])
					}
				}
				// within its trust, the other layout writes on: a credit
				// it answers applied must be counted by the account's
				c.Add(500 * time.Millisecond)
				out, err := small.Apply(ctx, acct, "c", 3)
				switch {
				case err == nil:
					want += 3
					t.Logf("within trust, the other layout applied c: %v", out)
				case !errors.Is(err, crdt.ErrInvalidConfig):
					t.Fatalf("apply c: %v", err)
				}
				if got, err := big.Balance(ctx, acct); err != nil || got != want && !same {
					t.Errorf("balance after c %d, %v; want %d", got, err, want)
				}
				c.Add(2 * time.Second)
				if _, err := small.Apply(ctx, acct, "late", 1); !errors.Is(err, crdt.ErrInvalidConfig) {
					t.Errorf("the other layout after its trust: %v, want ErrInvalidConfig", err)
				}
				if _, err := big.Merge(ctx, acct); err != nil {
					t.Fatalf("merge: %v", err)
				}
				for i := range 2 {
					if errs[i] != nil {
						continue
					}
					out, err := big.Apply(ctx, acct, ids[i], amts[i])
					if err != nil || out != balance.Duplicate {
						t.Errorf("retry of %s after a merge: %v, %v; want duplicate", ids[i], out, err)
					}
				}
				if got2, err := big.Balance(ctx, acct); err != nil || got2 != want && !same {
					t.Errorf("balance after merge and retries %d, %v; want %d", got2, err, want)
				}
			})
		}
	}
}
