package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// TestExpireRecordsSweepsEveryPage: the service's sweep
// (ledger.ExpireAllRecords) on its store, 23 records made two days ago and
// one made now, in pages of 5: the old are deleted, the new kept, and a
// damaged one is reported and passed over, its page's others deleted.
func TestExpireRecordsSweepsEveryPage(t *testing.T) {
	ctx := context.Background()
	db, err := embedded.Open(filepath.Join(t.TempDir(), "data"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st := db.Siblings()
	now := time.Now()
	past := func() time.Time { return now.Add(-48 * time.Hour) }
	old, err := ledger.New(st, accountKey("a"), ledger.Options{Actor: "old", Clock: past})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 23 {
		if _, err := old.Credit(ctx, crdt.TxnID(fmt.Sprint("old-", i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	fresh, _ := ledger.New(st, accountKey("a"), ledger.Options{Actor: "new"})
	if _, err := fresh.Credit(ctx, "new-0", 1); err != nil {
		t.Fatal(err)
	}
	damaged := ledger.RecordKey(accountKey("b"), "x")
	if err := st.Put(ctx, damaged, "x", []byte("not a record"), nil); err != nil {
		t.Fatal(err)
	}
	res, err := ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{Page: 5})
	if !errors.Is(err, crdt.ErrCorruptEncoding) || res.Deleted != 23 || res.Kept != 1 || res.Damaged != 1 {
		t.Fatalf("%+v %v", res, err)
	}
	left, err := st.Keys(ctx, ledger.RecordKeyPrefix, "", 100)
	if err != nil || len(left) != 2 {
		t.Fatalf("records left: %q %v", left, err)
	}
	if r, err := fresh.Credit(ctx, "new-0", 1); err != nil || r.Value != 24 {
		t.Fatalf("retry of new-0 after the sweep: %+v %v", r, err)
	}
}
