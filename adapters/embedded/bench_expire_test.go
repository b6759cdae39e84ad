package embedded_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/store"
)

// oneAtATime hides the store's DeleteBatch: the sweep deletes a key per
// durable write.
type oneAtATime struct {
	ledgertest.SweepStore
	ledger.KeyLister
}

// BenchmarkExpireAllRecords: ns/op is the sweep's time per record key
// deleted, b.N dead records written before the timer starts; "batch"
// deletes each page of keys in one durable write (DeleteBatch), "per-key"
// one key per write, and reports its ratio to batch in the same run;
// "keyed" is batch with records that name their key, each of one of
// 1,000 accounts whose ledger state the sweep reads to tell whether the
// record dates a live writer (none does). Run with -benchtime 2000x:
// writing the records takes a durable write each.
func BenchmarkExpireAllRecords(b *testing.B) {
	var batchNs float64
	for _, v := range []string{"batch", "per-key", "keyed"} {
		batch, keyed := v != "per-key", v == "keyed"
		b.Run(v, func(b *testing.B) {
			db, _ := openTemp(b, embedded.Options{})
			st := db.Siblings()
			ctx := context.Background()
			made := time.Now().Add(-ledger.DefaultExpireAfter - time.Hour)
			const accounts = 1000
			if keyed {
				for i := range min(b.N, accounts) {
					l, err := ledger.New(st, fmt.Sprint("acct-", i), ledger.Options{Actor: "w"})
					if err == nil {
						_, err = l.Credit(ctx, "newest", 1)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			for i := range b.N {
				rec := ledger.Record{Txn: crdt.TxnID(fmt.Sprint("t-", i)), Amount: 1, Writer: "w", At: made, Version: 1}
				if keyed {
					rec.Key = fmt.Sprint("acct-", i%accounts)
				}
				v, err := rec.MarshalBinary()
				if err == nil {
					err = st.Put(ctx, ledger.RecordKey("acct", rec.Txn), "w", v, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			var sw interface {
				store.Siblings
				store.SiblingDeleter
				ledger.KeyLister
			} = st
			if !batch {
				sw = oneAtATime{st, st}
			}
			b.ReportAllocs()
			b.ResetTimer()
			res, err := ledger.ExpireAllRecords(ctx, sw, ledger.ExpireOptions{})
			b.StopTimer()
			if err != nil || res.Deleted != b.N || res.Dating != 0 {
				b.Fatalf("%+v %v, want %d deleted, none dating", res, err, b.N)
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if v == "batch" {
				batchNs = ns
			} else if batchNs > 0 {
				b.ReportMetric(ns/batchNs, "x-vs-batch")
			}
		})
	}
}
