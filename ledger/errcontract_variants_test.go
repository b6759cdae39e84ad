package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
)

// ecDriver is a ledger variant seen as the caller uses it: update a key
// as one of two writers ("a", "b"), settle every writer, read a key.
type ecDriver struct {
	update func(ctx context.Context, on, key string, txn crdt.TxnID, amount int64) error
	settle func(ctx context.Context) error
	value  func(ctx context.Context, key string) (int64, error)
}

func newShardedDriver(t *testing.T, st *errSiblings) ecDriver {
	opts := func(actor crdt.ActorID) ledger.Options {
		return ledger.Options{Actor: actor, RetryCount: 2, Backoff: ledger.Backoff{Initial: -1}}
	}
	ss := map[string]*ledger.Sharded{}
	for _, n := range []string{"a", "b"} {
		s, err := ledger.NewSharded(st, "acct", 2, opts(crdt.ActorID(n)))
		if err != nil {
			t.Fatal(err)
		}
		ss[n] = s
	}
	return ecDriver{
		update: func(ctx context.Context, on, _ string, txn crdt.TxnID, amount int64) error {
			_, err := ss[on].Update(ctx, txn, amount)
			return err
		},
		settle: func(ctx context.Context) error {
			for _, s := range ss {
				if _, err := s.FindAll(ctx); err != nil {
					return err
				}
			}
			return nil
		},
		value: func(ctx context.Context, _ string) (int64, error) {
			z, err := ledger.NewSharded(st, "acct", 2, opts("z"))
			if err != nil {
				return 0, err
			}
			return z.Value(ctx)
		},
	}
}

func newBookDriver(t *testing.T, st *errSiblings) ecDriver {
	opts := func(actor crdt.ActorID) ledger.BookOptions {
		return ledger.BookOptions{Options: ledger.Options{Actor: actor, RetryCount: 2, Backoff: ledger.Backoff{Initial: -1}}, MaxOpen: 1}
	}
	bs := map[string]*ledger.Book{}
	for _, n := range []string{"a", "b"} {
		b, err := ledger.NewBook(st, opts(crdt.ActorID(n)))
		if err != nil {
			t.Fatal(err)
		}
		bs[n] = b
	}
	return ecDriver{
		update: func(ctx context.Context, on, key string, txn crdt.TxnID, amount int64) error {
			_, err := bs[on].Update(ctx, key, txn, amount)
			return err
		},
		settle: func(ctx context.Context) error {
			for _, b := range bs {
				for _, k := range []string{"k1", "k2"} {
					if _, err := b.Find(ctx, k); err != nil {
						return err
					}
				}
				if err := b.LandPending(ctx); err != nil {
					return err
				}
			}
			return nil
		},
		value: func(ctx context.Context, key string) (int64, error) {
			z, err := ledger.NewBook(st, opts("z"))
			if err != nil {
				return 0, err
			}
			return z.Value(ctx, key)
		},
	}
}

// TestErrorContractExploreLedgerVariants runs the exploration of
// TestErrorContractExploreLedger on a Sharded ledger (2 sub-keys) and on
// a Book (MaxOpen 1, two keys, so ledgers are dropped and reopened).
func TestErrorContractExploreLedgerVariants(t *testing.T) {
	type call struct {
		on, key string
		txn     crdt.TxnID
		amount  int64
	}
	calls := []call{{"a", "k1", "t1", 1}, {"a", "k2", "t2", 10}, {"b", "k1", "t3", 100}, {"a", "k1", "t4", 1000}}
	run := func(t *testing.T, mk func(*testing.T, *errSiblings) ecDriver, st *errSiblings, retry string) (acked, definite map[crdt.TxnID]bool, counts map[crdt.TxnID]int64, problem string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		d := mk(t, st)
		acked, definite = map[crdt.TxnID]bool{}, map[crdt.TxnID]bool{}
		other := map[string]string{"a": "b", "b": "a"}
		for _, c := range calls {
			err := d.update(ctx, c.on, c.key, c.txn, c.amount)
			for try := 0; err != nil && try < 3 && retry != "none"; try++ {
				if !errors.Is(err, crdt.ErrAmbiguousWrite) {
					definite[c.txn] = true
				}
				on := c.on
				if retry == "other" {
					on = other[on]
				}
				err = d.update(ctx, on, c.key, c.txn, c.amount)
			}
			if err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) {
				definite[c.txn] = true
			}
			acked[c.txn] = err == nil
		}
		st.Set(nil)
		var err error
		for range 3 {
			if err = d.settle(ctx); err == nil {
				break
			}
		}
		if err != nil {
			return acked, definite, nil, "stuck: " + err.Error()
		}
		counts = map[crdt.TxnID]int64{}
		vals := map[string]int64{}
		for _, k := range []string{"k1", "k2"} {
			if vals[k], err = d.value(ctx, k); err != nil {
				return acked, definite, nil, "value: " + err.Error()
			}
		}
		for _, c := range calls {
			counts[c.txn] = (vals[c.key] / c.amount) % 10
		}
		return acked, definite, counts, ""
	}
	runs := 0
	for name, mk := range map[string]func(*testing.T, *errSiblings) ecDriver{"sharded": newShardedDriver, "book": newBookDriver} {
		st0 := newErrSiblings(memory.NewSiblings())
		if _, _, counts, prob := run(t, mk, st0, "none"); prob != "" || counts["t4"] != 1 {
			t.Fatalf("%s fault-free: %v %s", name, counts, prob)
		}
		n := st0.Writes()
		bad := map[string]int{}
		for _, retry := range []string{"none", "same", "other"} {
			for _, tr := range faulty.Trials(n, false) {
				st := newErrSiblings(memory.NewSiblings())
				st.Set(tr.Answers())
				runs++
				acked, definite, counts, prob := run(t, mk, st, retry)
				var probs []string
				if prob != "" {
					probs = append(probs, prob)
				}
				severe := prob != ""
				for _, c := range calls {
					switch cnt := counts[c.txn]; {
					case counts == nil:
					case acked[c.txn] && cnt != 1 || cnt > 1:
						probs = append(probs, fmt.Sprintf("%s (acked %v) counted %d", c.txn, acked[c.txn], cnt))
						severe = true
					case !acked[c.txn] && definite[c.txn] && cnt == 1 && retry == "none":
						probs = append(probs, fmt.Sprintf("info: %s told definite, counted 1", c.txn))
					}
				}
				if len(probs) > 0 {
					key := fmt.Sprintf("%s %s/%s/%s/apply=%v", map[bool]string{true: "SEVERE", false: "info"}[severe], name, retry, tr.Kind.Name, tr.Apply)
					bad[key]++
					if bad[key] == 1 {
						t.Logf("%s %v: %s\n  %s", key, tr, strings.Join(probs, "; "), strings.Join(st.Log(), "\n  "))
					}
				}
			}
		}
		t.Logf("%s: %d writes fault-free, bad groups %d", name, n, len(bad))
		for k, v := range bad {
			if strings.HasPrefix(k, "SEVERE") {
				t.Errorf("%s: %d runs", k, v)
			} else {
				t.Logf("%s: %d runs", k, v)
			}
		}
	}
	t.Logf("runs %d", runs)
}
