package ledger

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

// subLedgerWithRecords is a Sharded account's sub-ledger on acct/2 (records
// under the account key, as Sharded.sub sets up), with the records recs
// put under t1's record key in that sibling order (no token).
func subLedgerWithRecords(t *testing.T, recs ...Record) (*Ledger, indexed, time.Time) {
	t.Helper()
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	st := memory.NewSiblings()
	l, err := New(st, "acct/2", Options{Actor: "b", Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	l.indexBase = "acct"
	for _, r := range recs {
		b, err := r.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, RecordKey("acct", r.Txn), r.Writer, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	x, err := l.lookup(ctx, "t1", now)
	if err != nil {
		t.Fatal(err)
	}
	return l, x, now
}

// SPEC.md 6.11 Window: with two live records of t1 and this amount, the
// first in sibling order naming another sub-key, the call is answered from
// the second, this key's.
func TestRecordOfThisKeyAnswersFirst(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	other := Record{Txn: "t1", Amount: 5, Writer: "a~aaaaaa00", At: at, Version: 1, Key: "acct/0"}
	own := Record{Txn: "t1", Amount: 5, Writer: "b~bbbbbb02", At: at, Version: 1, Key: "acct/2"}
	l, x, now := subLedgerWithRecords(t, other, own)
	r, err := l.judge(x, "t1", 5, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("siblings [%s (key acct/0), %s (key acct/2)]: the call is known from %s", other.Writer, own.Writer, r.Writer)
	if r.Writer != own.Writer {
		t.Fatalf("answered from %s", r.Writer)
	}
}

// SPEC.md 6.11 Encoding: a version 1 record (no key) under a Sharded
// account's record key is taken by a sub-ledger as its own key's.
func TestRecordWithoutKeyIsThisKeys(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	v1 := Record{Txn: "t1", Amount: 5, Writer: "a~aaaaaa00", At: at, Version: 1}
	_, x, _ := subLedgerWithRecords(t, v1)
	t.Logf("version 1 record on sub-key acct/2: judged (records) %d, not judged (elsewhere) %d", len(x.records), len(x.elsewhere))
	if len(x.records) != 1 || len(x.elsewhere) != 0 {
		t.Fatal("a version 1 record was not taken as this key's")
	}
}

// SPEC.md 6.11 step 3, confirming: a live record of this amount naming
// another writer on another key does not make the records "name only
// other writers": no settling; the record Put takes no token.
func TestRecordOfAnotherKeyNotConfirmed(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	other := Record{Txn: "t1", Amount: 5, Writer: "a~aaaaaa00", At: at, Version: 1, Key: "acct/0"}
	l, x, _ := subLedgerWithRecords(t, other)
	settles := x.namesOnlyOthers(l.writer, 5)
	t.Logf("only another key's record of amount 5, naming %s: settles=%v, put token nil=%v", other.Writer, settles, x.putToken() == nil)
	if settles || x.putToken() != nil {
		t.Fatal("another key's record settles the copy, or lets a record Put supersede it")
	}
}

// SPEC.md 6.10 and 6.11 Window: a live record of another key naming
// another writer whose version the state does not reach does not keep an
// actor from retiring (unsure); the same record naming this key does.
func TestRecordOfAnotherKeyNotCheckedByRetirement(t *testing.T) {
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	own := Record{Txn: "t1", Amount: 5, Writer: "A~aaaaaaaa", At: at, Version: 1, Key: "acct/2"}
	other := Record{Txn: "t1", Amount: 5, Writer: "W~wwwwwwww", At: at, Version: 7, Key: "acct/0"}
	l, _, now := subLedgerWithRecords(t, own, other)
	merged, err := counterHolding(l, "A~aaaaaaaa", "t1", 5)
	if err != nil {
		t.Fatal(err)
	}
	when, ok, late, unsure := l.lastApplied(context.Background(), merged, "A~aaaaaaaa", []crdt.TxnID{"t1"}, now)
	t.Logf("lastApplied: at=%v ok=%v late=%v unsure=%v", when, ok, late, unsure)
	if unsure {
		t.Fatal("unsure")
	}
	// The same record naming this key is judged: unsure (stale).
	other.Key = "acct/2"
	l2, _, _ := subLedgerWithRecords(t, own, other)
	if _, _, _, unsure := l2.lastApplied(context.Background(), merged, "A~aaaaaaaa", []crdt.TxnID{"t1"}, now); !unsure {
		t.Fatal("the same record naming this key left the actor checked")
	}
}

// counterHolding is a counter of l's options where actor applied txn.
func counterHolding(l *Ledger, actor crdt.ActorID, txn crdt.TxnID, amount int64) (*tpncounter.Counter, error) {
	c, err := tpncounter.New(l.copts)
	if err != nil {
		return nil, err
	}
	_, err = c.Apply(actor, txn, amount)
	return c, err
}

// SPEC.md 6.11 Encoding: a record names its own key or another sub-key of
// its Sharded account, nothing else: a record naming another account (or
// the account's own base key, or a sub-key out of range or not in
// canonical form, or any key under a plain ledger's records) was written by
// no ledger, and taken as a copy elsewhere it would answer a call that
// never counted. It is crdt.ErrCorruptEncoding, naming the record; the
// sub-keys of any layout are accepted.
func TestRecordOfAnotherAccountIsCorrupt(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(key string) Record {
		return Record{Txn: "t1", Amount: 5, Writer: "a~aaaaaa00", At: at, Version: 1, Key: key}
	}
	for _, key := range []string{"acct/0", "acct/1023", "acct/7"} {
		_, x, _ := subLedgerWithRecords(t, rec(key))
		if len(x.elsewhere) != 1 {
			t.Fatalf("a record of sub-key %q was not taken as a copy elsewhere", key)
		}
	}
	for _, key := range []string{"other", "other/1", "acct", "acct/", "acct/1024", "acct/01", "acct/-1", "acct/+1", "acct/2/1", "acctx/1"} {
		st := memory.NewSiblings()
		l, err := New(st, "acct/2", Options{Actor: "b", Clock: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		l.indexBase = "acct"
		b, err := rec(key).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, RecordKey("acct", "t1"), "a", b, nil); err != nil {
			t.Fatal(err)
		}
		_, err = l.Update(ctx, "t1", 5)
		if !errors.Is(err, crdt.ErrCorruptEncoding) || !strings.Contains(err.Error(), fmt.Sprintf("names key %q", key)) {
			t.Fatalf("sub-ledger, record naming %q: %v", key, err)
		}
		if vals, _, _ := st.Fetch(ctx, "acct/2"); len(vals) != 0 {
			t.Fatalf("record naming %q: the call wrote the key", key)
		}
	}
	// A plain ledger's records name its key or none.
	for _, key := range []string{"acct/0", "other", "acct"} {
		st := memory.NewSiblings()
		l, err := New(st, "acct", Options{Actor: "b", Clock: func() time.Time { return at }})
		if err != nil {
			t.Fatal(err)
		}
		b, err := rec(key).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Put(ctx, RecordKey("acct", "t1"), "a", b, nil); err != nil {
			t.Fatal(err)
		}
		r, err := l.Update(ctx, "t1", 5)
		if key == "acct" {
			if err != nil || r.Outcome != tpncounter.Duplicate {
				t.Fatalf("plain ledger, a record of its own key: %v, %v", r.Outcome, err)
			}
			continue
		}
		if !errors.Is(err, crdt.ErrCorruptEncoding) {
			t.Fatalf("plain ledger, record naming %q: %v", key, err)
		}
	}
}
