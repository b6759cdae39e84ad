package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
)

// TestBackupUnderLedgerWritesIsOneMoment: backups of a ledger
// account taken while four writers credit it (DB.Backup, and WriteBackup
// read back by Restore). Each restored copy must hold a state some honest
// history produced: its value at least the sum of the transactions
// acknowledged before the backup began, at most the sum of all tried;
// and once every transaction tried is delivered again to the restored
// copy (through a new ledger), each counts exactly once: the ledger's
// records and its counters come from one moment, so nothing is counted
// twice and nothing lost.
func TestBackupUnderLedgerWritesIsOneMoment(t *testing.T) {
	t.Parallel()
	db, _ := openTemp(t, embedded.Options{})
	ctx := context.Background()
	const acct = "acct"
	amount := func(w, i int) int64 { return int64(w*1000 + i + 1) }
	txn := func(w, i int) crdt.TxnID { return crdt.TxnID(fmt.Sprintf("t-%d-%d", w, i)) }
	const writers, perWriter = 4, 40
	var ackedSum, triedSum atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := ledger.New(db.Siblings(), acct, ledger.Options{Actor: crdt.ActorID(fmt.Sprintf("w%d", w))})
			if err != nil {
				t.Error(err)
				return
			}
			for i := range perWriter {
				triedSum.Add(amount(w, i))
				if _, err := l.Credit(ctx, txn(w, i), amount(w, i)); err != nil {
					t.Error(err)
					return
				}
				ackedSum.Add(amount(w, i))
			}
		}()
	}
	type copyDir struct {
		dir      string
		low, top int64 // acknowledged before it began; tried after it ended
	}
	var copies []copyDir
	for i := 0; i < 6; i++ {
		low := ackedSum.Load()
		to := filepath.Join(t.TempDir(), "b")
		if i%2 == 0 {
			if err := db.Backup(ctx, to); err != nil {
				t.Fatal(err)
			}
		} else {
			var buf bytes.Buffer
			if _, err := db.WriteBackup(ctx, &buf); err != nil {
				t.Fatal(err)
			}
			if _, err := embedded.Restore(ctx, &buf, to); err != nil {
				t.Fatal(err)
			}
		}
		copies = append(copies, copyDir{to, low, triedSum.Load()})
	}
	wg.Wait()
	var all int64
	for w := range writers {
		for i := range perWriter {
			all += amount(w, i)
		}
	}
	for n, c := range copies {
		rdb, err := embedded.Open(c.dir, embedded.Options{})
		if err != nil {
			t.Fatalf("copy %d: %v", n, err)
		}
		if err := rdb.Verify(); err != nil {
			t.Fatalf("copy %d: %v", n, err)
		}
		r, err := ledger.New(rdb.Siblings(), acct, ledger.Options{Actor: "restorer"})
		if err != nil {
			t.Fatal(err)
		}
		v, err := r.Value(ctx)
		if err != nil && !(errors.Is(err, crdt.ErrNotFound) && c.low == 0) {
			t.Fatalf("copy %d: %v", n, err)
		}
		if v < c.low || v > c.top {
			t.Errorf("copy %d holds %d, outside [%d, %d]: a state no history produced", n, v, c.low, c.top)
		}
		for w := range writers {
			for i := range perWriter {
				if _, err := r.Credit(ctx, txn(w, i), amount(w, i)); err != nil {
					t.Fatalf("copy %d: redeliver %s: %v", n, txn(w, i), err)
				}
			}
		}
		if v, err := r.Value(ctx); err != nil || v != all {
			t.Errorf("copy %d after every transaction delivered again: %d (%v), want %d", n, v, err, all)
		}
		t.Logf("copy %d: held %d in [%d, %d]", n, v, c.low, c.top)
		rdb.Close()
		os.RemoveAll(c.dir)
	}
}
