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
	"github.com/counterkit/counterkit/internal/stamp"
	"github.com/counterkit/counterkit/store"
)

// balance/doc.go: "A row that does not decode stops the Balance and
// Conflicts of its account and the merge of its partition
// (crdt.ErrCorruptEncoding, naming the row; Transactions.Merge goes on
// with the other partitions) ... (Transactions.Delete works on a damaged
// account)". A damaged row is planted in row partition 0 of an account of
// two; the transactions of partition 1 are still recorded by Merge (their
// retries are duplicates), and Delete empties the account.
func TestReviewDamagedRowPartitionMergeGoesOn(t *testing.T) {
	ctx := context.Background()
	var in [2][]crdt.TxnID
	for i := 0; len(in[0]) < 2 || len(in[1]) < 2; i++ {
		id := crdt.TxnID(fmt.Sprint("t", i))
		p := int(balance.TxnRowID(id)[14] % 2)
		in[p] = append(in[p], id)
	}
	good := balance.NormalRow(balance.TxnRowID(in[0][1]), 9)
	gv, err := good.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for name, plant := range map[string]func(at int64) store.Mutation{
		"none": nil,
		"garbage value": func(at int64) store.Mutation {
			return store.Mutation{Key: balance.EncodeTxnRowKey(at, good.Key()), Value: []byte{1, 2, 3}}
		},
		"foreign key": func(at int64) store.Mutation {
			return store.Mutation{Key: []byte("xyz"), Value: gv}
		},
		"unplaced key": func(at int64) store.Mutation {
			return store.Mutation{Key: balance.EncodeKey(good.Key()), Value: gv}
		},
		"another amount's key": func(at int64) store.Mutation {
			return store.Mutation{Key: balance.EncodeTxnRowKey(at, balance.NormalRow(good.UpdateID, 8).Key()), Value: gv}
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := newTestClock()
			mem := memory.NewPartitions()
			tx, err := balance.NewTransactions(mem, balance.TxnOptions{Partitions: 2, Options: balance.Options{Clock: c.Now}})
			if err != nil {
				t.Fatal(err)
			}
			mustApply(t, tx, in[0][0], 3, balance.Applied)
			mustApply(t, tx, in[1][0], 5, balance.Applied)
			mustApply(t, tx, in[1][1], 6, balance.Applied)
			if plant == nil {
				c.Add(time.Second)
				if _, err := tx.Merge(ctx, acct); err != nil {
					t.Fatal(err)
				}
				for _, id := range in[1][:2] {
					if r, err := tx.Recorded(ctx, acct, id); err != nil || len(r) != 1 {
						t.Errorf("undamaged: Recorded(%s) = %v, %v", id, r, err)
					}
				}
				return
			}
			m := plant(c.Now().UnixMicro())
			m.Partition, m.Op, m.Timestamp = tx.RowPartitions(acct)[0], store.OpPut, stamp.Reserve(c.Now(), 1)
			if err := mem.Apply(ctx, []store.Mutation{m}); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Balance(ctx, acct); !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Errorf("Balance = %v", err)
			}
			if _, err := tx.Conflicts(ctx, acct); !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Errorf("Conflicts = %v", err)
			}
			c.Add(time.Second)
			_, err = tx.Merge(ctx, acct)
			if !errors.Is(err, crdt.ErrCorruptEncoding) {
				t.Errorf("Merge = %v", err)
			}
			for _, id := range in[1][:2] {
				r, err := tx.Recorded(ctx, acct, id)
				if err != nil || len(r) != 1 {
					t.Errorf("Recorded(%s) after the merge = %v, %v: the healthy partition was not merged", id, r, err)
				}
			}
			// the healthy partition settles and removes its rows meanwhile
			for range 3 {
				c.Add(70 * time.Second)
				_, _ = tx.Merge(ctx, acct)
			}
			mustApply(t, tx, in[1][0], 5, balance.Duplicate)
			rows, err := mem.Snapshot(ctx, tx.RowPartitions(acct)[1], balance.MaxRows, store.ReadComplete)
			if err != nil || len(rows) > 2 {
				t.Errorf("healthy partition holds %d rows (%v)", len(rows), err)
			}
			if err := tx.Delete(ctx, acct); err != nil {
				t.Fatalf("Delete = %v", err)
			}
			c.Add(time.Minute)
			if v, err := tx.Balance(ctx, acct); err != nil || v != 0 {
				t.Errorf("Balance after Delete = %d, %v", v, err)
			}
			for _, p := range tx.RowPartitions(acct) {
				rows, _ := mem.Snapshot(ctx, p, balance.MaxRows, store.ReadComplete)
				if len(rows) != 0 {
					t.Errorf("%s holds %d rows after Delete", p, len(rows))
				}
			}
		})
	}
}
