package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
)

func ExampleExpireAllRecords() {
	ctx := context.Background()
	st := memory.NewSiblings()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	l, _ := ledger.New(st, "acct", ledger.Options{Actor: "svc", Clock: clock})
	for i := range 5 {
		l.Credit(ctx, crdt.TxnID(fmt.Sprint("pay-", i)), 10)
	}

	// A day later every record is still inside the window: none goes.
	now = now.Add(24 * time.Hour)
	res, _ := ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{Clock: clock})
	fmt.Printf("after a day: deleted %d, kept %d\n", res.Deleted, res.Kept)

	// After two, all are past it; the newest credit's record stays while
	// svc's entry is live: it dates svc, once it has left, for the
	// ledger that retires it (SPEC.md 6.9).
	now = now.Add(ledger.DefaultExpireAfter)
	res, _ = ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{Clock: clock})
	fmt.Printf("after two: deleted %d, kept %d, dating %d\n", res.Deleted, res.Kept, res.Dating)

	// A new process credits the account: its first write retires the
	// entry of the one before, dated by that record, after recording
	// again the transactions it held whose records were deleted; the
	// next sweep deletes those five, and keeps the new writer's newest.
	l2, _ := ledger.New(st, "acct", ledger.Options{Actor: "svc", Clock: clock})
	l2.Credit(ctx, "pay-5", 10)
	now = now.Add(ledger.DefaultExpireAfter + time.Second)
	res, _ = ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{Clock: clock})
	fmt.Printf("after a new process: deleted %d, dating %d\n", res.Deleted, res.Dating)
	// Output:
	// after a day: deleted 0, kept 5
	// after two: deleted 4, kept 0, dating 1
	// after a new process: deleted 5, dating 1
}

// A KeyLister pages through the keys with a prefix: each page starts
// after the last key of the one before.
func ExampleKeyLister() {
	ctx := context.Background()
	st := memory.NewSiblings()
	l, _ := ledger.New(st, "acct", ledger.Options{Actor: "svc"})
	for i := range 5 {
		l.Credit(ctx, crdt.TxnID(fmt.Sprint("pay-", i)), 10)
	}
	var lister ledger.KeyLister = st
	pages := 0
	for after := ""; ; pages++ {
		keys, _ := lister.Keys(ctx, ledger.RecordKeyPrefix, after, 2)
		if len(keys) == 0 {
			break
		}
		after = keys[len(keys)-1]
	}
	fmt.Println("pages of two record keys:", pages)
	// Output:
	// pages of two record keys: 3
}

// sweepFixture: 23 records made two days before now, one made now, one
// damaged record key, and the account's own key, on a memory store.
func sweepFixture(t *testing.T, now time.Time) (*memory.Siblings, string) {
	t.Helper()
	ctx := context.Background()
	st := memory.NewSiblings()
	past := func() time.Time { return now.Add(-48 * time.Hour) }
	old, err := ledger.New(st, "a", ledger.Options{Actor: "old", Clock: past})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 23 {
		if _, err := old.Credit(ctx, crdt.TxnID(fmt.Sprint("old-", i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	fresh, err := ledger.New(st, "a", ledger.Options{Actor: "new", Clock: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Credit(ctx, "new-0", 1); err != nil {
		t.Fatal(err)
	}
	damaged := ledger.RecordKey("b", "x")
	if err := st.Put(ctx, damaged, "x", []byte("not a record"), nil); err != nil {
		t.Fatal(err)
	}
	return st, damaged
}

// TestExpireAllRecordsEveryPageSize: whatever the page, the sweep deletes
// the 23 old records, keeps the new one and the account, and reports the
// damaged one without stopping; a second sweep deletes nothing more, and
// the new transaction's retry is still a duplicate.
func TestExpireAllRecordsEveryPageSize(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	for _, page := range []int{0, 1, 2, 5, 24, 25, 26, 1000} {
		for _, batch := range []bool{true, false} {
			t.Run(fmt.Sprintf("page=%d/batch=%v", page, batch), func(t *testing.T) {
				sweepEveryPage(t, ctx, now, clock, page, batch)
			})
		}
	}
}

// perKey is a memory store whose DeleteBatch is hidden: ExpireRecords
// deletes one key at a time.
type perKey struct {
	ledgertest.SweepStore
	ledger.KeyLister
}

// sweepEveryPage sweeps sweepFixture in pages of page, with batch
// deletes or one key at a time, and checks what is left.
func sweepEveryPage(t *testing.T, ctx context.Context, now time.Time, clock func() time.Time, page int, batch bool) {
	st, damaged := sweepFixture(t, now)
	var sw interface {
		ledgertest.SweepStore
		ledger.KeyLister
	} = st
	if !batch {
		sw = perKey{st, st}
	}
	res, err := ledger.ExpireAllRecords(ctx, sw, ledger.ExpireOptions{Clock: clock, Page: page})
	want := ledger.ExpireResult{Deleted: 23, Kept: 1, Damaged: 1}
	if !errors.Is(err, crdt.ErrCorruptEncoding) || res != want {
		t.Fatalf("sweep: %+v %v, want %+v and the damaged record's error", res, err, want)
	}
	left, _ := st.Keys(ctx, "", "", 100)
	if !slices.Equal(left, []string{"a", ledger.RecordKey("a", "new-0"), damaged}) && !slices.Equal(left, []string{"a", damaged, ledger.RecordKey("a", "new-0")}) {
		t.Fatalf("keys left: %q", left)
	}
	res, _ = ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{Clock: clock, Page: page})
	if res != (ledger.ExpireResult{Kept: 1, Damaged: 1}) {
		t.Fatalf("second sweep: %+v", res)
	}
	l, _ := ledger.New(st, "a", ledger.Options{Actor: "retry", Clock: clock})
	if r, err := l.Credit(ctx, "new-0", 1); err != nil || !isDuplicate(r.Outcome) || r.Value != 24 {
		t.Fatalf("retry of new-0 after the sweep: %+v %v", r, err)
	}
}

// cancelAfterPages lists keys for the sweep and cancels its context once
// it has listed pages pages; failList makes the listing after them fail.
type cancelAfterPages struct {
	*memory.Siblings
	pages    int
	cancel   context.CancelFunc
	failList bool
	listed   int
}

var errListing = errors.New("listing failed")

func (s *cancelAfterPages) Keys(ctx context.Context, prefix, after string, limit int) ([]string, error) {
	if s.listed == s.pages {
		if s.failList {
			return nil, fmt.Errorf("%w: %w", crdt.ErrUnavailable, errListing)
		}
		s.cancel()
	}
	s.listed++
	return s.Siblings.Keys(ctx, prefix, after, limit)
}

// TestExpireAllRecordsEndsWithWhatItDid: a sweep whose context is done, or
// whose listing fails, after k pages of 5 ends with the error and the
// counts of those pages; the next sweep does the rest.
func TestExpireAllRecordsEndsWithWhatItDid(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	for _, failList := range []bool{false, true} {
		for pages := range 6 {
			t.Run(fmt.Sprintf("fail=%v/pages=%d", failList, pages), func(t *testing.T) {
				st, _ := sweepFixture(t, now)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				w := &cancelAfterPages{Siblings: st, pages: pages, cancel: cancel, failList: failList}
				opts := ledger.ExpireOptions{Clock: clock, Page: 5}
				res, err := ledger.ExpireAllRecords(ctx, w, opts)
				switch {
				case pages == 5:
					// the sweep ended on its own: 25 keys, 5 pages, and
					// the sixth listing found nothing
					if res != (ledger.ExpireResult{Deleted: 23, Kept: 1, Damaged: 1}) || !errors.Is(err, crdt.ErrCorruptEncoding) {
						t.Fatalf("%+v %v", res, err)
					}
				case failList && !errors.Is(err, errListing), !failList && !errors.Is(err, context.Canceled):
					t.Fatalf("sweep stopped after %d pages: %v", pages, err)
				}
				done := res.Deleted + res.Kept + res.Damaged
				if done != 5*pages {
					t.Fatalf("sweep stopped after %d pages counts %d keys: %+v", pages, done, res)
				}
				left, _ := st.Keys(context.Background(), ledger.RecordKeyPrefix, "", 100)
				if len(left) != 25-res.Deleted {
					t.Fatalf("%d records left after %d deleted", len(left), res.Deleted)
				}
				rest, err := ledger.ExpireAllRecords(context.Background(), st, opts)
				if res.Deleted+rest.Deleted != 23 || rest.Kept != 1 || rest.Damaged != 1 || !errors.Is(err, crdt.ErrCorruptEncoding) {
					t.Fatalf("the next sweep: %+v %v after %+v", rest, err, res)
				}
			})
		}
	}
}

// TestExpireAllRecordsRefusesANegativePage: nothing is read.
func TestExpireAllRecordsRefusesANegativePage(t *testing.T) {
	st, _ := sweepFixture(t, time.Now())
	res, err := ledger.ExpireAllRecords(context.Background(), st, ledger.ExpireOptions{Page: -1})
	if !errors.Is(err, crdt.ErrInvalidConfig) || res != (ledger.ExpireResult{}) {
		t.Fatalf("%+v %v", res, err)
	}
	if left, _ := st.Keys(context.Background(), ledger.RecordKeyPrefix, "", 100); len(left) != 25 {
		t.Fatalf("%d records left", len(left))
	}
}

// loopingLister lists keys as a store whose Keys does not move past the
// keys it listed: list says which keys it returns after a key. It cancels
// the sweep's context at its 100th listing, so a sweep that would list
// forever ends.
type loopingLister struct {
	*memory.Siblings
	list   func(all []string, after string, limit int) []string
	cancel context.CancelFunc
	listed int
}

func (s *loopingLister) Keys(ctx context.Context, prefix, after string, limit int) ([]string, error) {
	if s.listed++; s.listed == 100 {
		s.cancel()
	}
	all, err := s.Siblings.Keys(ctx, prefix, "", 1<<20)
	if err != nil {
		return nil, err
	}
	return s.list(all, after, limit), nil
}

// TestExpireAllRecordsEndsOnAListingThatLoops: a store whose Keys returns
// the key it was asked to list after again, or ignores it, or starts
// again from the first key at the end, would make the sweep list forever
// (its records inside the window are kept, so every listing finds them);
// it ends the sweep after a few listings with crdt.ErrMisconfiguredStore,
// having deleted nothing a retry needs.
func TestExpireAllRecordsEndsOnAListingThatLoops(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	index := func(all []string, after string) int { // of the first key after after
		i := slices.Index(all, after)
		return i + 1 // 0 for ""
	}
	for name, list := range map[string]func(all []string, after string, limit int) []string{
		"ignores after": func(all []string, _ string, limit int) []string { return all[:min(limit, len(all))] },
		"after itself again": func(all []string, after string, limit int) []string {
			i := max(index(all, after)-1, 0)
			return all[i:min(i+limit, len(all))]
		},
		"starts again at the end": func(all []string, after string, limit int) []string {
			var out []string
			for i := index(all, after); len(out) < min(limit, len(all)); i++ {
				out = append(out, all[i%len(all)])
			}
			return out
		},
	} {
		for _, page := range []int{1, 2, 3, 7, 24, 25, 100} {
			t.Run(fmt.Sprintf("%s/page=%d", name, page), func(t *testing.T) {
				st, _ := sweepFixture(t, now)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				w := &loopingLister{Siblings: st, list: list, cancel: cancel}
				res, err := ledger.ExpireAllRecords(ctx, w, ledger.ExpireOptions{Clock: clock, Page: page})
				if !errors.Is(err, crdt.ErrMisconfiguredStore) || w.listed > 2*25+2 {
					t.Fatalf("sweep ended after %d listings with %+v: %v", w.listed, res, err)
				}
				l, _ := ledger.New(st, "a", ledger.Options{Actor: "retry", Clock: clock})
				if r, err := l.Credit(ctx, "new-0", 1); err != nil || !isDuplicate(r.Outcome) {
					t.Fatalf("retry of new-0 after the sweep: %+v %v", r, err)
				}
			})
		}
	}
}

// TestExpireAllRecordsRefusesANegativeAfter: refused before anything is
// listed, on a store with no record as on one with records.
func TestExpireAllRecordsRefusesANegativeAfter(t *testing.T) {
	for _, st := range []*memory.Siblings{memory.NewSiblings(), func() *memory.Siblings { st, _ := sweepFixture(t, time.Now()); return st }()} {
		res, err := ledger.ExpireAllRecords(context.Background(), st, ledger.ExpireOptions{After: -time.Second})
		if !errors.Is(err, crdt.ErrInvalidConfig) || res != (ledger.ExpireResult{}) {
			t.Fatalf("%+v %v", res, err)
		}
	}
}
