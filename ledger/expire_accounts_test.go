package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/tpncounter"
)

// accountKind credits an account of one kind (a Ledger, a Sharded
// account, a Book's key among others, a Ledger whose records live in a
// store of their own) through a writer of actor.
type accountKind struct {
	name string
	// credit returns a function crediting the account as actor.
	credit func(t *testing.T, st, recs *memory.Siblings, actor crdt.ActorID, c *promiseClock) func(txn crdt.TxnID) (tpncounter.Outcome, int64)
	// separate: the records are in recs, not st.
	separate bool
}

// forgetful are a ledger's defaults with the clock c and a counter that
// forgets each transaction after the next, so that its record alone
// answers a retry.
func forgetful(actor crdt.ActorID, c *promiseClock) ledger.Options {
	o := promiseOpts(actor, c)
	o.Counter = tpncounter.Options{HistoryLength: 1, FoldedLength: 1}
	return o
}

var accountKinds = []accountKind{{
	name: "ledger",
	credit: func(t *testing.T, st, _ *memory.Siblings, actor crdt.ActorID, c *promiseClock) func(crdt.TxnID) (tpncounter.Outcome, int64) {
		l, err := ledger.New(st, "acct", forgetful(actor, c))
		if err != nil {
			t.Fatal(err)
		}
		return func(txn crdt.TxnID) (tpncounter.Outcome, int64) {
			r, err := l.Credit(context.Background(), txn, 1)
			if err != nil {
				t.Fatal(err)
			}
			return r.Outcome, r.Value
		}
	},
}, {
	name: "sharded",
	credit: func(t *testing.T, st, _ *memory.Siblings, actor crdt.ActorID, c *promiseClock) func(crdt.TxnID) (tpncounter.Outcome, int64) {
		s, err := ledger.NewSharded(st, "acct", 2, forgetful(actor, c))
		if err != nil {
			t.Fatal(err)
		}
		return func(txn crdt.TxnID) (tpncounter.Outcome, int64) {
			r, err := s.Credit(context.Background(), txn, 1)
			if err != nil {
				t.Fatal(err)
			}
			v, err := s.Value(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return r.Outcome, v
		}
	},
}, {
	// The retries' Book keeps one ledger and credits another key before
	// each: it drops the account's ledger between any two of its calls.
	name: "book",
	credit: func(t *testing.T, st, _ *memory.Siblings, actor crdt.ActorID, c *promiseClock) func(crdt.TxnID) (tpncounter.Outcome, int64) {
		evict := actor == "retry"
		b, err := ledger.NewBook(st, ledger.BookOptions{Options: forgetful(actor, c), MaxOpen: 1})
		if err != nil {
			t.Fatal(err)
		}
		return func(txn crdt.TxnID) (tpncounter.Outcome, int64) {
			ctx := context.Background()
			if evict {
				if _, err := b.Credit(ctx, "other", txn+"-other", 1); err != nil {
					t.Fatal(err)
				}
			}
			r, err := b.Credit(ctx, "acct", txn, 1)
			if err != nil {
				t.Fatal(err)
			}
			return r.Outcome, r.Value
		}
	},
}, {
	name:     "records store",
	separate: true,
	credit: func(t *testing.T, st, recs *memory.Siblings, actor crdt.ActorID, c *promiseClock) func(crdt.TxnID) (tpncounter.Outcome, int64) {
		o := forgetful(actor, c)
		o.Records = recs
		l, err := ledger.New(st, "acct", o)
		if err != nil {
			t.Fatal(err)
		}
		return func(txn crdt.TxnID) (tpncounter.Outcome, int64) {
			r, err := l.Credit(context.Background(), txn, 1)
			if err != nil {
				t.Fatal(err)
			}
			return r.Outcome, r.Value
		}
	},
}}

// perDay is how many transactions creditedBothDays credits each day.
const perDay = 8

// snapshot is every key of st that is not a record's, with its siblings.
func snapshot(t *testing.T, st *memory.Siblings) map[string][]string {
	t.Helper()
	ctx := context.Background()
	keys, err := st.Keys(ctx, "", "", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, k := range keys {
		if ledger.IsRecordKey(k) {
			continue
		}
		sibs, _, err := st.Fetch(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range sibs {
			out[k] = append(out[k], string(s))
		}
		slices.Sort(out[k])
	}
	return out
}

// TestExpireAllRecordsKeepsRetriesOfEveryAccountKind: eight transactions
// credited 26 hours before eight others, on each kind of account. At the
// window's last nanosecond of the newer eight, a sweep with any page (1,
// 2, the default, the largest int), After the default or exactly it, and
// its clock the writers' own, 58 minutes ahead, or far behind, deletes
// only records (every other key, account states and the Sharded
// layout's marker among them, stays as it was), the older eight's records
// when its clock is not behind; and a retry of each newer transaction,
// by another writer, is a duplicate and leaves the value as it was. A
// control deletes every record but those that date a live writer (the
// newest credit of each sub-key's writer): some retry then counts again,
// so it is the records that answer them.
func TestExpireAllRecordsKeepsRetriesOfEveryAccountKind(t *testing.T) {
	ctx := context.Background()
	for _, kind := range accountKinds {
		for _, page := range []int{0, 1, 2, math.MaxInt} {
			for _, after := range []time.Duration{0, ledger.DefaultExpireAfter} {
				for _, ahead := range []time.Duration{0, 58 * time.Minute, -1000 * time.Hour} {
					name := fmt.Sprintf("%s/page=%d/after=%v/ahead=%v", kind.name, page, after, ahead)
					t.Run(name, func(t *testing.T) {
						keepsRetries(t, ctx, kind, ledger.ExpireOptions{Page: page, After: after}, ahead)
					})
				}
			}
		}
		t.Run(kind.name+"/control", func(t *testing.T) {
			st, recs, c, n := creditedBothDays(t, kind)
			res, err := ledger.ExpireAllRecords(ctx, recs, ledger.ExpireOptions{After: time.Nanosecond, Clock: func() time.Time { return c.Now().Add(time.Second) }})
			if err != nil || res.Deleted+res.Dating != 2*perDay {
				t.Fatalf("control sweep: %+v %v", res, err)
			}
			retry := kind.credit(t, st, recs, "retry", c)
			applied := 0
			for i := range perDay {
				if o, _ := retry(crdt.TxnID(fmt.Sprint("new-", i))); o == tpncounter.Applied {
					applied++
				}
			}
			if applied == 0 {
				t.Fatalf("with the records deleted every retry was recognised: the counter, not the records, answers them (%d credits)", n)
			}
		})
	}
}

// creditedBothDays credits old-0..7, then 26 hours later new-0..7, on
// kind, and returns the store of the accounts, that of the records (the
// same but for a records store of their own), the writers' clock (at the
// newer credits) and the value.
func creditedBothDays(t *testing.T, kind accountKind) (st, recs *memory.Siblings, c *promiseClock, value int64) {
	t.Helper()
	st, recs, c = memory.NewSiblings(), memory.NewSiblings(), newPromiseClock()
	if !kind.separate {
		recs = st
	}
	credit := kind.credit(t, st, recs, "svc", c)
	for _, day := range []string{"old", "new"} {
		for i := range perDay {
			if o, v := credit(crdt.TxnID(fmt.Sprint(day, "-", i))); o != tpncounter.Applied {
				t.Fatalf("%s-%d: %v", day, i, o)
			} else {
				value = v
			}
		}
		c.Add(26 * time.Hour)
	}
	c.Add(-26 * time.Hour)
	return st, recs, c, value
}

func keepsRetries(t *testing.T, ctx context.Context, kind accountKind, opts ledger.ExpireOptions, ahead time.Duration) {
	st, recs, c, value := creditedBothDays(t, kind)
	c.Add(ledger.DefaultRetryWindow - time.Nanosecond)
	opts.Clock = func() time.Time { return c.Now().Add(ahead) }
	before := snapshot(t, st)
	res, err := ledger.ExpireAllRecords(ctx, recs, opts)
	want := ledger.ExpireResult{Deleted: perDay, Kept: perDay}
	if ahead < 0 {
		want = ledger.ExpireResult{Kept: 2 * perDay}
	}
	if err != nil || res != want {
		t.Fatalf("sweep: %+v %v, want %+v", res, err, want)
	}
	if after := snapshot(t, st); !maps.EqualFunc(before, after, slices.Equal) {
		t.Fatalf("the sweep changed keys that are not records:\n%q\n%q", before, after)
	}
	if kind.separate {
		if res, err := ledger.ExpireAllRecords(ctx, st, opts); err != nil || res != (ledger.ExpireResult{}) {
			t.Fatalf("the accounts' store holds records: %+v %v", res, err)
		}
	}
	retry := kind.credit(t, st, recs, "retry", c)
	for i := range perDay {
		txn := crdt.TxnID(fmt.Sprint("new-", i))
		if o, v := retry(txn); !isDuplicate(o) || v != value {
			t.Fatalf("retry of %s at the window's last nanosecond: %v, value %d; want a duplicate, %d", txn, o, v, value)
		}
	}
}
