package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// On an account written less often than RetryWindow, the writers that
// left are dated by records from before the window (SPEC.md 6.9): each
// write after a restart found every other incarnation's records past the
// window, dated none, and so retired none; the account kept one live
// entry per restart, and once full refused every new writer for good.

// TestColdAccountRetiresWritersThatLeft: an account credited once every
// two days, each time by a process started since (a new Book), every
// option at its default but the clock, keeps at most two live entries:
// the writer of the last credit, and the one before it (written by a
// process that saw it for the first time, and so idle since then).
func TestColdAccountRetiresWritersThatLeft(t *testing.T) {
	coldAccount(t, false, nil, nil)
}

// TestColdAccountSweptRetiresWritersThatLeft: as above, with
// ExpireAllRecords run (every option at its default) before each credit,
// two days after the last. The sweep keeps the records that date each
// live writer (ExpireResult.Dating), so that a new process still dates
// and retires the writers that left; it deletes the others, and those of
// a retired writer at the next sweep: the store keeps a few record keys,
// not one per credit. A sweep that deleted every expired record left
// one live entry per credit before the ledgers stored their sightings
// (SPEC.md 6.9), which now date such writers a write later.
func TestColdAccountSweptRetiresWritersThatLeft(t *testing.T) {
	for _, own := range []bool{false, true} {
		deleted := 0
		recs := coldAccount(t, own, nil, func(i int, res ledger.ExpireResult, err error) {
			if err != nil || res.Kept != 0 || res.Damaged != 0 || res.Dating > 2 || i > 0 && res.Dating == 0 {
				t.Fatalf("records store of their own %v, sweep %d: %+v %v, want 1 or 2 keys dating a writer (none before the first credit), none kept or damaged", own, i, res, err)
			}
			deleted += res.Deleted
		})
		keys, err := recs.Keys(context.Background(), ledger.RecordKeyPrefix, "", 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 3 || deleted < coldWrites-3 {
			t.Errorf("records store of their own %v: %d record keys left and %d deleted after %d credits; want at most 3 left", own, len(keys), deleted, coldWrites)
		}
	}
}

// TestColdAccountSweptBehindAWrapper: as above, the Books writing through
// a wrapper of the store (store/faulty, no faults: its Store(), which
// lists keys as the memory store does), the sweep running on the store
// itself. Through a wrapper that hid Keys, the ledgers named no key in
// their records, the sweep found no writer they date, and every credit
// left a live entry (40 of 40 in the review that found it).
func TestColdAccountSweptBehindAWrapper(t *testing.T) {
	coldAccount(t, false, func(st store.Siblings) store.Siblings {
		return faulty.NewSiblings(st, faulty.Options{}).Store()
	}, func(i int, res ledger.ExpireResult, err error) {
		if err != nil || res.Dating > 2 {
			t.Fatalf("sweep %d: %+v %v, want at most 2 keys dating a writer", i, res, err)
		}
	})
}

// coldWrites is coldAccount's number of credits.
const coldWrites = 20

// coldAccount credits account "cold" coldWrites times two days apart,
// each time by a new Book, first sweeping the records (ExpireAllRecords
// at its defaults but Accounts; its result goes to swept) unless swept is
// nil, and checks that the value is exact and that at most two entries
// are live. With own, the records are in a store of their own
// (Options.Records), which it returns, and the sweep names the accounts'
// store (ExpireOptions.Accounts). With wrap, the Books write through
// wrap(store), and the sweep runs on the store itself.
func coldAccount(t *testing.T, own bool, wrap func(store.Siblings) store.Siblings, swept func(i int, res ledger.ExpireResult, err error)) *memory.Siblings {
	t.Helper()
	ctx := context.Background()
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st, recs := memory.NewSiblings(), memory.NewSiblings()
	opts := ledger.Options{Actor: "billing", Clock: clock.Now, Records: recs}
	sweep := ledger.ExpireOptions{Clock: clock.Now, Accounts: st}
	if !own {
		recs, opts.Records, sweep.Accounts = st, nil, nil
	}
	for i := range coldWrites {
		if swept != nil {
			res, err := ledger.ExpireAllRecords(ctx, recs, sweep)
			swept(i, res, err)
		}
		var through store.Siblings = st
		if wrap != nil {
			through = wrap(st)
		}
		b, err := ledger.NewBook(through, ledger.BookOptions{Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Credit(ctx, "cold", crdt.TxnID("c"+strconv.Itoa(i)), 1); err != nil {
			t.Fatalf("credit %d: %v", i, err)
		}
		clock.Add(48 * time.Hour)
	}
	reader, err := ledger.New(st, "cold", ledger.Options{Actor: "reader", Clock: clock.Now, Records: opts.Records})
	if err != nil {
		t.Fatal(err)
	}
	c, err := reader.Find(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := c.Stats()
	if v := c.Value(); v != coldWrites {
		t.Errorf("value %d, want %d", v, coldWrites)
	}
	if s.Actors > 2 {
		t.Errorf("%d live entries after %d credits two days apart, each by a new process (swept: %v, records store of their own: %v; %d retired); want at most 2", s.Actors, coldWrites, swept != nil, own, s.Retired)
	}
	return recs
}

// creditAsNewProcess credits txn (1) on "acct" through a new Ledger, as
// a process started for that one call; it returns the call's error.
func creditAsNewProcess(t *testing.T, st *memory.Siblings, opts ledger.Options, txn string) error {
	t.Helper()
	l, err := ledger.New(st, "acct", opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Credit(context.Background(), crdt.TxnID(txn), 1)
	return err
}

// TestFullAccountTakesAWriterOnceTheOldestLeft: an account filled to
// MaxActors by restarts, then idle for two days, takes the next new
// writer: its first write retires the oldest entries, dated by their
// records, though they are past RetryWindow and no ledger saw them idle.
func TestFullAccountTakesAWriterOnceTheOldestLeft(t *testing.T) {
	const maxActors = 8
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.NewSiblings()
	opts := ledger.Options{Actor: "a", Clock: clock.Now, Counter: tpncounter.Options{MaxActors: maxActors}}
	credit := func(txn string) error { return creditAsNewProcess(t, st, opts, txn) }
	for i := range maxActors {
		if err := credit(fmt.Sprint("fill", i)); err != nil {
			t.Fatalf("credit %d: %v", i, err)
		}
		clock.Add(time.Minute)
	}
	if err := credit("over"); !errors.Is(err, crdt.ErrTooLarge) {
		t.Fatalf("a new writer of a full account, its writers active: %v, want ErrTooLarge", err)
	}
	clock.Add(48 * time.Hour)
	if err := credit("later"); err != nil {
		t.Errorf("a new writer two days after the account's writers left: %v, want it applied", err)
	}
}

// TestBookKeepsSightingsAcrossEviction: the records that date a writer
// that left are gone (deleted by a records store's TTL, here by hand); a
// Book that saw it idle, dropped the key's Ledger (MaxOpen 1, another key
// written meanwhile) and writes the key again RetireAfter later retires
// it, dated by its first sighting. Without the sightings kept, each
// reopening dated it from then on.
func TestBookKeepsSightingsAcrossEviction(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.NewSiblings()
	opts := ledger.Options{Actor: "billing", Clock: clock.Now}
	l, err := ledger.New(st, "cold", opts) // a process that wrote once and left
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Credit(ctx, "c0", 1); err != nil {
		t.Fatal(err)
	}
	left := l.Writer()
	clock.Add(48 * time.Hour)
	if _, tok, err := st.Fetch(ctx, ledger.RecordKey("cold", "c0")); err != nil {
		t.Fatal(err)
	} else if err := st.Delete(ctx, ledger.RecordKey("cold", "c0"), tok); err != nil || st.Count(ledger.RecordKey("cold", "c0")) != 0 {
		t.Fatalf("deleting c0's record: %v", err)
	}
	b, err := ledger.NewBook(st, ledger.BookOptions{Options: opts, MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := b.Credit(ctx, "cold", crdt.TxnID(fmt.Sprint("c", i+1)), 1); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Credit(ctx, "other", crdt.TxnID(fmt.Sprint("o", i+1)), 1); err != nil {
			t.Fatal(err)
		}
		clock.Add(ledger.DefaultRetireAfter)
	}
	c, err := b.Find(ctx, "cold")
	if err != nil {
		t.Fatal(err)
	}
	if _, live := maps.Collect(c.LiveActors())[left]; live {
		t.Errorf("the writer that left, seen idle by the Book for %v before its last write, is still live", 2*ledger.DefaultRetireAfter)
	}
	if v := c.Value(); v != 4 {
		t.Errorf("value %d, want 4", v)
	}
}

// TestAdmissionAtRetireAfterByRecordsPastTheWindow: with RetryWindow
// (30 minutes) shorter than RetireAfter (an hour), an account filled to
// MaxActors by writers that each credited once is dated by their records,
// already past the window: a new process is refused 1 ns before the
// oldest has been idle RetireAfter, and applied at exactly RetireAfter.
func TestAdmissionAtRetireAfterByRecordsPastTheWindow(t *testing.T) {
	const maxActors = 8
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := newFakeClock(t0)
	st := memory.NewSiblings()
	opts := ledger.Options{Actor: "a", Clock: clock.Now, RetryWindow: 30 * time.Minute, Counter: tpncounter.Options{MaxActors: maxActors}}
	credit := func(txn string) error { return creditAsNewProcess(t, st, opts, txn) }
	for i := range maxActors {
		clock.Set(t0.Add(time.Duration(i) * time.Minute))
		if err := credit(fmt.Sprint("fill", i)); err != nil {
			t.Fatalf("credit %d: %v", i, err)
		}
	}
	clock.Set(t0.Add(ledger.DefaultRetireAfter - time.Nanosecond))
	if err := credit("early"); !errors.Is(err, crdt.ErrTooLarge) {
		t.Fatalf("1 ns before the oldest writer has been idle RetireAfter: %v, want ErrTooLarge", err)
	}
	clock.Set(t0.Add(ledger.DefaultRetireAfter))
	if err := credit("on-time"); err != nil {
		t.Errorf("the oldest writer idle RetireAfter, dated by its record past the window: %v, want it applied", err)
	}
}

// TestColdAccountWithATTLRecordsStore: as TestColdAccountRetiresWritersThatLeft,
// the records in a store of their own whose values vanish
// DefaultExpireAfter after their Put (a Cassandra DB with SiblingsTTL):
// each new process finds the records of the writers before it gone, so no
// record dates them; the sightings the ledgers keep beside the account
// (SPEC.md 6.9, "Stored sightings") do, and at most three entries stay
// live (the last writer, the one before it, and the one the last process
// first saw). Without them every credit left a live entry.
func TestColdAccountWithATTLRecordsStore(t *testing.T) {
	ctx := context.Background()
	clock := newFakeClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	st := memory.NewSiblings()
	recs := &ttlStore{Siblings: memory.NewSiblings(), now: clock.Now, ttl: ledger.DefaultExpireAfter, written: map[string]time.Time{}}
	opts := ledger.Options{Actor: "billing", Clock: clock.Now, Records: recs}
	for i := range coldWrites {
		b, err := ledger.NewBook(st, ledger.BookOptions{Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.Credit(ctx, "cold", crdt.TxnID("c"+strconv.Itoa(i)), 1); err != nil {
			t.Fatalf("credit %d: %v", i, err)
		}
		clock.Add(48 * time.Hour)
	}
	c := storedAt(t, st, "cold")
	if s := c.Stats(); s.Actors > 3 || c.Value() != coldWrites {
		t.Errorf("%d live entries (%d retired), value %d after %d credits two days apart, each by a new process, records expiring; want at most 3 and %d", s.Actors, s.Retired, c.Value(), coldWrites, coldWrites)
	}
}
