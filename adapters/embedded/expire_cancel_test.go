package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/embedded"
	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/store"
)

// sweepStore is what ExpireRecords sweeps.
type sweepStore = ledgertest.SweepStore

// What a record key holds before a sweep.
type recordKind int

const (
	kindDead    recordKind = iota // records made more than After ago
	kindLive                      // a record a retry may still need
	kindEmpty                     // nothing
	kindDamaged                   // a sibling that is not a record
)

// cancelSweepKinds is the keys a cancelled sweep runs over, in order: 13
// store calls (a Fetch per key, a Delete per dead key).
var cancelSweepKinds = []recordKind{kindDead, kindDead, kindLive, kindEmpty, kindDamaged, kindDead, kindDead, kindDead}

// cancellingStore cancels the sweep's context at its call number at:
// before the call (the store sees the context done) or after it returned.
// It logs the calls that succeeded and those made once it had cancelled.
type cancellingStore struct {
	sweepStore
	at     int
	before bool
	cancel context.CancelFunc

	mu        sync.Mutex
	n         int
	cancelled bool
	fetched   []string // keys whose Fetch succeeded, in order
	deleted   []string // keys whose Delete succeeded, in order
	late      []string // calls that succeeded after the cancel
}

func (s *cancellingStore) around(method, key string, call func() error) error {
	s.mu.Lock()
	s.n++
	if s.n == s.at && s.before {
		s.cancel()
		s.cancelled = true
	}
	s.mu.Unlock()
	err := call()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		if s.cancelled {
			s.late = append(s.late, method+" "+key)
		}
		if method == "Fetch" {
			s.fetched = append(s.fetched, key)
		} else {
			s.deleted = append(s.deleted, key)
		}
	}
	if s.n == s.at && !s.before {
		s.cancel()
		s.cancelled = true
	}
	return err
}

func (s *cancellingStore) Fetch(ctx context.Context, key string) (sibs [][]byte, tok store.Token, err error) {
	err = s.around("Fetch", key, func() error {
		sibs, tok, err = s.sweepStore.Fetch(ctx, key)
		return err
	})
	return sibs, tok, err
}

func (s *cancellingStore) Delete(ctx context.Context, key string, tok store.Token) error {
	return s.around("Delete", key, func() error { return s.sweepStore.Delete(ctx, key, tok) })
}

// cancelSweepSetup stores, for account acct of st, the keys of
// cancelSweepKinds as of the clock now.
func cancelSweepSetup(t *testing.T, st store.Siblings, acct string, now time.Time) []string {
	t.Helper()
	ctx := context.Background()
	rec := func(txn crdt.TxnID, at time.Time) []byte {
		b, err := (ledger.Record{Txn: txn, Amount: 1, Writer: "svc", At: at, Version: 1}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dead := now.Add(-ledger.DefaultExpireAfter - time.Second)
	var keys []string
	for i, kind := range cancelSweepKinds {
		txn := crdt.TxnID(fmt.Sprint("pay-", i))
		key := ledger.RecordKey(acct, txn)
		keys = append(keys, key)
		var vals [][]byte
		switch kind {
		case kindDead:
			vals = [][]byte{rec(txn, dead)}
			if i == 6 { // two siblings, both dead
				vals = append(vals, rec(txn, dead.Add(-time.Hour)))
			}
		case kindLive:
			vals = [][]byte{rec(txn, now.Add(-time.Hour))}
		case kindDamaged:
			vals = [][]byte{[]byte("not a record")}
		}
		for j, v := range vals {
			if err := st.Put(ctx, key, crdt.ActorID(fmt.Sprint("w", j)), v, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return keys
}

// sweepFunc is ledger.ExpireRecords or a broken variant of it.
type sweepFunc func(ctx context.Context, st sweepStore, keys []string, opts ledger.ExpireOptions) (ledger.ExpireResult, error)

func expireRecords(ctx context.Context, st sweepStore, keys []string, opts ledger.ExpireOptions) (ledger.ExpireResult, error) {
	return ledger.ExpireRecords(ctx, st, keys, opts)
}

// present reports which of keys hold a sibling in st.
func present(t *testing.T, st store.Siblings, keys []string) []bool {
	t.Helper()
	out := make([]bool, len(keys))
	for i, k := range keys {
		sibs, _, err := st.Fetch(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = len(sibs) > 0
	}
	return out
}

// checkCancelledSweeps cancels a sweep of cancelSweepKinds' keys at each
// of its store calls, before the call and after it, on st through wrap,
// and returns what went wrong: an error other than the context's while
// the sweep was cut short, a store call that succeeded after the cancel,
// a count that is not exactly what the store calls did, a key deleted
// beyond the cut or counted deleted and still stored; then a sweep with a
// live context must finish the job: every dead key gone, the others kept.
func checkCancelledSweeps(t *testing.T, st sweepStore, sweep sweepFunc, wrap func(sweepStore) sweepStore) []string {
	t.Helper()
	now := time.Date(2031, 3, 1, 9, 0, 0, 0, time.UTC)
	opts := ledger.ExpireOptions{Clock: func() time.Time { return now }}
	calls := 0
	for _, k := range cancelSweepKinds {
		calls++
		if k == kindDead {
			calls++
		}
	}
	var failed []string
	runs := 0
	for at := 1; at <= calls; at++ {
		for _, before := range []bool{true, false} {
			runs++
			where := fmt.Sprintf("cancelled %s store call %d of %d", map[bool]string{true: "before", false: "after"}[before], at, calls)
			fail := func(format string, args ...any) {
				failed = append(failed, where+": "+fmt.Sprintf(format, args...))
			}
			keys := cancelSweepSetup(t, st, fmt.Sprintf("%s-%d", t.Name(), runs), now)
			ctx, cancel := context.WithCancel(context.Background())
			cs := &cancellingStore{sweepStore: wrap(st), at: at, before: before, cancel: cancel}
			res, err := sweep(ctx, cs, keys, opts)
			cancel()

			// The keys the store calls finished: a Fetch of a key that is
			// not dead, a Delete of a dead one. They must be the first
			// keys, and the result must count exactly them.
			var want ledger.ExpireResult
			done := 0
			for i, k := range keys {
				switch {
				case !slices.Contains(cs.fetched, k):
					continue
				case cancelSweepKinds[i] == kindLive:
					want.Kept++
				case cancelSweepKinds[i] == kindEmpty:
					want.Empty++
				case cancelSweepKinds[i] == kindDamaged:
					want.Damaged++
				case slices.Contains(cs.deleted, k):
					want.Deleted++
				default:
					continue
				}
				if i != done {
					fail("key %d finished before key %d", i, done)
				}
				done++
			}
			if res != want {
				fail("result %+v, the store calls did %+v", res, want)
			}
			if len(cs.late) > 0 {
				fail("store calls succeeded after the cancel: %q", cs.late)
			}
			cut := done < len(keys)
			if cut && !errors.Is(err, context.Canceled) {
				fail("cut short after %d of %d keys with error %v, want the context's", done, len(keys), err)
			}
			if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, crdt.ErrCorruptEncoding) {
				fail("error %v", err)
			}
			if damaged := res.Damaged > 0; damaged != errors.Is(err, crdt.ErrCorruptEncoding) {
				fail("%d damaged keys counted, error %v", res.Damaged, err)
			}
			for i, p := range present(t, st, keys) {
				gone := cancelSweepKinds[i] == kindEmpty || cancelSweepKinds[i] == kindDead && i < done
				if p == gone {
					fail("key %d (%d keys finished): stored %v", i, done, p)
				}
			}

			// A later sweep finishes the job.
			res2, err := sweep(context.Background(), st, keys, opts)
			if !errors.Is(err, crdt.ErrCorruptEncoding) {
				fail("later sweep: error %v, want the damaged key's alone", err)
			}
			if want := (ledger.ExpireResult{Deleted: 5 - res.Deleted, Kept: 1, Empty: 1 + res.Deleted, Damaged: 1}); res2 != want {
				fail("later sweep: %+v, want %+v", res2, want)
			}
			for i, p := range present(t, st, keys) {
				if keep := cancelSweepKinds[i] == kindLive || cancelSweepKinds[i] == kindDamaged; p != keep {
					fail("after the later sweep, key %d stored %v", i, p)
				}
			}
		}
	}
	return failed
}

// ctxIgnored is a broken sweep: it hands the store calls a context that
// is never cancelled.
func ctxIgnored(ctx context.Context, st sweepStore, keys []string, opts ledger.ExpireOptions) (ledger.ExpireResult, error) {
	return ledger.ExpireRecords(context.WithoutCancel(ctx), st, keys, opts)
}

// cancelBlindDelete is a broken store: a Delete with a done context
// answers success and deletes nothing.
type cancelBlindDelete struct{ sweepStore }

func (s cancelBlindDelete) Delete(ctx context.Context, key string, tok store.Token) error {
	if ctx.Err() != nil {
		return nil
	}
	return s.sweepStore.Delete(ctx, key, tok)
}

// TestExpireRecordsCancelled cancels ExpireRecords' context at each of
// its store calls, before the call and after it returned, on the memory
// and the embedded store: the sweep ends with the context's error (joined
// with a damaged key's, if it had read one) unless it had finished every
// key, its result counts exactly the keys it finished, no store call
// succeeds after the cancel, nothing beyond the cut is deleted, and a
// later sweep finishes the job.
//
// The checks can fail: a sweep that hands the store a context never
// cancelled runs on after the cancel, and a store whose Delete answers
// success to a done context leaves a key counted deleted.
func TestExpireRecordsCancelled(t *testing.T) {
	db, _ := openTemp(t, embedded.Options{})
	asIs := func(s sweepStore) sweepStore { return s }
	stores := []struct {
		name string
		st   sweepStore
	}{{"memory", memory.NewSiblings()}, {"embedded", db.Siblings()}}
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			for _, f := range checkCancelledSweeps(t, s.st, expireRecords, asIs) {
				t.Error(f)
			}
		})
	}
	broken := []struct {
		name  string
		sweep sweepFunc
		wrap  func(sweepStore) sweepStore
	}{
		{"the context ignored", ctxIgnored, asIs},
		{"a delete blind to the cancel", expireRecords, func(s sweepStore) sweepStore { return cancelBlindDelete{s} }},
	}
	for _, s := range stores {
		for _, b := range broken {
			t.Run(s.name+"/"+b.name, func(t *testing.T) {
				f := checkCancelledSweeps(t, s.st, b.sweep, b.wrap)
				if len(f) == 0 {
					t.Fatal("the checks passed")
				}
				t.Logf("%d problems found, the first: %s", len(f), f[0])
			})
		}
	}
}
