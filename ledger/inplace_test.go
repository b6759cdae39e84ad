package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// A ledger that is its key's only writer changes its last written state in
// place instead of copying it. A write that does not land must leave no
// trace of its transaction: a refused Put (every attempt), a store error,
// and a state too large to encode, each followed by a write that lands.
func TestFailedWriteInPlaceLeavesNoTrace(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		faults []faulty.Fault
		want   error
	}{
		{"refused every attempt", []faulty.Fault{faulty.Refuse, faulty.Refuse}, crdt.ErrUnavailable},
		{"refused then landed", []faulty.Fault{faulty.Refuse}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
			l, err := ledger.New(st, "k", ledger.Options{Actor: "a", RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Credit(ctx, "t1", 1); err != nil {
				t.Fatal(err)
			}
			st.SetPolicy(counterCalls(faulty.Only(faulty.Script(tc.faults...), faulty.MethodPut)))
			_, err = l.Credit(ctx, "t2", 2)
			if !errors.Is(err, tc.want) && (tc.want != nil || err != nil) {
				t.Fatalf("credit t2: %v, want %v", err, tc.want)
			}
			if _, err := l.Credit(ctx, "t3", 4); err != nil {
				t.Fatal(err)
			}
			want := int64(1 + 4)
			if tc.want == nil {
				want += 2
			}
			// A fresh reader sees only what the store holds.
			r, err := ledger.New(st, "k", ledger.Options{Actor: "r"})
			if err != nil {
				t.Fatal(err)
			}
			for _, rd := range []*ledger.Ledger{l, r} {
				v, err := rd.Value(ctx)
				if err != nil {
					t.Fatal(err)
				}
				has, err := rd.HasTransaction(ctx, "t2")
				if err != nil {
					t.Fatal(err)
				}
				if v != want || has != (tc.want == nil) {
					t.Errorf("%s: value %d, holds t2 %v; want %d, %v", rd.Writer(), v, has, want, tc.want == nil)
				}
			}
		})
	}
}

// Two ledgers crediting one key in turn, one with UUID transaction ids
// (written as 16 bytes, format version 3), the other with other ids: each
// merges the other's changed entries without decoding the rest, and every
// state written reads back.
func TestTwoWritersUUIDIDs(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	var ls [2]*ledger.Ledger
	for i := range ls {
		l, err := ledger.New(st, "k", ledger.Options{Actor: crdt.ActorID(fmt.Sprintf("w%d", i))})
		if err != nil {
			t.Fatal(err)
		}
		ls[i] = l
	}
	want := int64(0)
	for i := 0; i < 40; i++ {
		txn := crdt.TxnID(fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i))
		if i%2 == 1 {
			txn = crdt.TxnID(fmt.Sprintf("plain-%d", i)) // the other writer's own ids are not UUIDs
		}
		if _, err := ls[i%2].Credit(ctx, txn, int64(i+1)); err != nil {
			t.Fatalf("credit %d: %v", i, err)
		}
		want += int64(i + 1)
		// A resend on the other ledger is recognised.
		if res, err := ls[(i+1)%2].Credit(ctx, txn, int64(i+1)); err != nil || res.Outcome == tpncounter.Applied {
			t.Fatalf("resend %d: %v %v", i, res.Outcome, err)
		}
	}
	r, err := ledger.New(st, "k", ledger.Options{Actor: "reader"})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := r.Value(ctx); err != nil || v != want {
		t.Fatalf("a fresh reader: %d, %v; want %d", v, err, want)
	}
}
