package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/gcounter"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/ledger/ledgertest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// deadRecords: n records of acct made two days before now, past every
// default window, on a memory store; their keys. Its writer then credits
// "last", whose record, of the newest credit its live entry holds, a
// sweep keeps (ExpireResult.Dating), and which keys leave out.
func deadRecords(t *testing.T, now time.Time, n int) (*memory.Siblings, []string) {
	t.Helper()
	st := memory.NewSiblings()
	l, err := ledger.New(st, "acct", ledger.Options{Actor: "w", Clock: func() time.Time { return now.Add(-48 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range n {
		txn := crdt.TxnID(fmt.Sprint("pay-", i))
		if _, err := l.Credit(context.Background(), txn, 1); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ledger.RecordKey("acct", txn))
	}
	if _, err := l.Credit(context.Background(), "last", 1); err != nil {
		t.Fatal(err)
	}
	return st, keys
}

// TestExpireRecordsRefusesAnInvalidRecordKeyFirst: a key that starts
// with RecordKeyPrefix but is no valid key (a control character, too
// long) is refused with crdt.ErrInvalidKey before anything is read or
// deleted, wherever it stands among dead records, on a store that
// deletes in batches as on one that deletes a key at a time.
func TestExpireRecordsRefusesAnInvalidRecordKeyFirst(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, bad := range []string{ledger.RecordKeyPrefix + "\x00", ledger.RecordKeyPrefix + strings.Repeat("x", crdt.MaxKeyLen)} {
		for _, batch := range []bool{true, false} {
			st, keys := deadRecords(t, now, 3)
			var sw ledgertest.SweepStore = st
			if !batch {
				sw = perKey{st, st}
			}
			res, err := ledger.ExpireRecords(context.Background(), sw, append(keys, bad), ledger.ExpireOptions{Clock: func() time.Time { return now }})
			if !errors.Is(err, crdt.ErrInvalidKey) || res != (ledger.ExpireResult{}) {
				t.Fatalf("batch=%v, %.20q after 3 dead records: %+v %v; want ErrInvalidKey and nothing done", batch, bad, res, err)
			}
			for _, k := range keys {
				if st.Count(k) != 1 {
					t.Fatalf("batch=%v: a refused call deleted %q", batch, k)
				}
			}
		}
	}
}

// TestExpireRecordsDamagedValuesWrapCorruptEncoding: whatever stops a
// sibling under a record key from decoding as a record (bytes that are
// no encoding, another type's state, a record of a newer format, a value
// above a record's size), the key is counted Damaged and kept, the other
// keys are expired, and the error wraps crdt.ErrCorruptEncoding as the
// documentation says, besides the decoder's own sentinel.
func TestExpireRecordsDamagedValuesWrapCorruptEncoding(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	g := gcounter.New()
	if err := g.Increment("a", 1); err != nil {
		t.Fatal(err)
	}
	gb, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	rec, err := (ledger.Record{Txn: "x", Amount: 1, Writer: "w", At: now.Add(-48 * time.Hour), Version: 1}).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	newer := []byte(strings.Replace(string(rec), "ledger.txn\x01", "ledger.txn\x03", 1))
	for _, c := range []struct {
		name  string
		value []byte
		also  error
	}{
		{"not an encoding", []byte("not a record"), crdt.ErrCorruptEncoding},
		{"a gcounter", gb, crdt.ErrTypeMismatch},
		{"a newer format", newer, crdt.ErrUnsupportedVersion},
		{"too large", make([]byte, 4096), crdt.ErrTooLarge},
	} {
		for _, all := range []bool{false, true} {
			st, keys := deadRecords(t, now, 2)
			damaged := ledger.RecordKey("other", "x")
			if err := st.Put(ctx, damaged, "x", c.value, nil); err != nil {
				t.Fatal(err)
			}
			opts := ledger.ExpireOptions{Clock: func() time.Time { return now }}
			var res ledger.ExpireResult
			want := ledger.ExpireResult{Deleted: 2, Damaged: 1}
			if all {
				res, err = ledger.ExpireAllRecords(ctx, st, opts)
				want.Dating = 1 // "last"
			} else {
				res, err = ledger.ExpireRecords(ctx, st, append(keys, damaged), opts)
			}
			if !errors.Is(err, crdt.ErrCorruptEncoding) || !errors.Is(err, c.also) || res != want {
				t.Fatalf("%s (all=%v): %+v %v; want %+v, ErrCorruptEncoding and %v", c.name, all, res, err, want, c.also)
			}
			if st.Count(damaged) != 1 {
				t.Fatalf("%s: the damaged key changed", c.name)
			}
		}
	}
}

// listingOf is a store whose Keys returns what list makes of the page
// the memory store lists, or its error.
type listingOf struct {
	*memory.Siblings
	list func(keys []string) ([]string, error)
}

func (s listingOf) Keys(ctx context.Context, prefix, after string, limit int) ([]string, error) {
	keys, err := s.Siblings.Keys(ctx, prefix, after, limit)
	if err != nil {
		return nil, err
	}
	return s.list(keys)
}

// TestExpireAllRecordsRefusesAListingOutsideTheRecords: a store whose
// Keys lists a key that is not a valid record key (one outside the
// prefix, the account's own, one no store holds) ends the sweep with
// crdt.ErrMisconfiguredStore before that page is read, having deleted
// nothing of it.
func TestExpireAllRecordsRefusesAListingOutsideTheRecords(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, extra := range []string{"acct", "", ledger.RecordKeyPrefix + "\x00", ledger.RecordKeyPrefix + strings.Repeat("x", crdt.MaxKeyLen)} {
		st, keys := deadRecords(t, now, 3)
		w := listingOf{st, func(keys []string) ([]string, error) { return append(keys, extra), nil }}
		res, err := ledger.ExpireAllRecords(context.Background(), w, ledger.ExpireOptions{Clock: func() time.Time { return now }})
		if !errors.Is(err, crdt.ErrMisconfiguredStore) || res != (ledger.ExpireResult{}) {
			t.Fatalf("a listing with %.20q: %+v %v; want ErrMisconfiguredStore and nothing done", extra, res, err)
		}
		for _, k := range append(keys, "acct") {
			if st.Count(k) != 1 {
				t.Fatalf("a listing with %.20q deleted %q", extra, k)
			}
		}
	}
}

// TestExpireAllRecordsJoinsOneErrorPerDamagedKey: the sweep's error joins
// the error of each damaged key (and of the failure that ended it, if
// any) side by side, one level deep, whatever page they were found on, so
// that a caller unwrapping it (errors.Join's Unwrap() []error) reports
// each apart.
func TestExpireAllRecordsJoinsOneErrorPerDamagedKey(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, page := range []int{1, 2, 3, 0} {
		st, _ := deadRecords(t, now, 2)
		for i := range 3 {
			if err := st.Put(ctx, ledger.RecordKey("other", crdt.TxnID(fmt.Sprint("x", i))), "x", []byte("not a record"), nil); err != nil {
				t.Fatal(err)
			}
		}
		res, err := ledger.ExpireAllRecords(ctx, st, ledger.ExpireOptions{Page: page, Clock: func() time.Time { return now }})
		j, ok := err.(interface{ Unwrap() []error })
		if !ok || res != (ledger.ExpireResult{Deleted: 2, Dating: 1, Damaged: 3}) {
			t.Fatalf("page %d: %+v %v", page, res, err)
		}
		errs := j.Unwrap()
		if len(errs) != 3 {
			t.Fatalf("page %d: %d errors joined, want one per damaged key: %q", page, len(errs), errs)
		}
		for _, e := range errs {
			if !errors.Is(e, crdt.ErrCorruptEncoding) || strings.Contains(e.Error(), "\n") {
				t.Fatalf("page %d: %q", page, e)
			}
		}
	}
}

// TestExpireRecordsDatingNeedsALiveWriter: a sweep keeps an expired
// record (Dating) only when the state under the key it names holds its
// transaction as the newest credit or debit of its writer's live entry:
// both of a writer that credited and debited; not an older one, nor one
// of a writer since retired, nor one naming a key that holds another
// type's value or nothing (a records store of their own, unless
// ExpireOptions.Accounts names the accounts' store); every one naming a
// state that does not decode (which it cannot judge); a failed read of
// the key ends the sweep with that key left.
func TestExpireRecordsDatingNeedsALiveWriter(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := newFakeClock(t0)
	sweepIn := func(st ledgertest.SweepStore, accounts store.Siblings, txns ...crdt.TxnID) (ledger.ExpireResult, error) {
		var keys []string
		for _, x := range txns {
			keys = append(keys, ledger.RecordKey("acct", x))
		}
		return ledger.ExpireRecords(ctx, st, keys, ledger.ExpireOptions{Clock: clock.Now, Accounts: accounts})
	}
	sweep := func(st ledgertest.SweepStore, txns ...crdt.TxnID) (ledger.ExpireResult, error) {
		return sweepIn(st, nil, txns...)
	}
	st := memory.NewSiblings()
	l, err := ledger.New(st, "acct", ledger.Options{Actor: "w", Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		txn    crdt.TxnID
		amount int64
	}{{"c1", 5}, {"d1", -2}, {"c2", 5}, {"d2", -2}} {
		if _, err := l.Update(ctx, c.txn, c.amount); err != nil {
			t.Fatal(err)
		}
	}
	clock.Add(48 * time.Hour)
	res, err := sweep(st, "c1", "d1", "c2", "d2")
	if err != nil || res != (ledger.ExpireResult{Deleted: 2, Dating: 2}) {
		t.Fatalf("a live writer's records: %+v %v, want c1, d1 deleted and c2, d2 dating", res, err)
	}
	for _, x := range []crdt.TxnID{"c2", "d2"} {
		if st.Count(ledger.RecordKey("acct", x)) != 1 {
			t.Fatalf("%s's record deleted", x)
		}
	}

	// A failed read of the account ends the sweep; the key stays.
	failing := &failFetch{Siblings: st, key: "acct"}
	if _, err := sweep(failing, "c2"); !errors.Is(err, errFetch) || st.Count(ledger.RecordKey("acct", "c2")) != 1 {
		t.Fatalf("a failed read of the account: %v, want errFetch and the key kept", err)
	}

	// The key holds another type's value, nothing (a records store of
	// their own, but with Accounts), damaged bytes, or a newer format.
	gc := gcounter.New()
	_ = gc.Increment("a", 1)
	gb, _ := gc.MarshalBinary()
	acct, _, _ := st.Fetch(ctx, "acct")
	newer := slices.Clone(acct[0])
	newer[1+1+len("tpncounter")] = 99 // the envelope's format version
	if err := new(tpncounter.Counter).UnmarshalBinary(newer); !errors.Is(err, crdt.ErrUnsupportedVersion) {
		t.Fatalf("a state of format 99: %v, want ErrUnsupportedVersion", err)
	}
	for _, c := range []struct {
		v        []byte
		accounts store.Siblings
		want     ledger.ExpireResult
	}{
		{gb, nil, ledger.ExpireResult{Deleted: 2}},
		{nil, nil, ledger.ExpireResult{Deleted: 2}},
		{nil, st, ledger.ExpireResult{Dating: 2}},
		{[]byte("not a state"), nil, ledger.ExpireResult{Dating: 2}},
		{newer, nil, ledger.ExpireResult{Dating: 2}},
	} {
		other := memory.NewSiblings()
		for _, x := range []crdt.TxnID{"c2", "d2"} {
			sibs, _, _ := st.Fetch(ctx, ledger.RecordKey("acct", x))
			_ = other.Put(ctx, ledger.RecordKey("acct", x), "w", sibs[0], nil)
		}
		if c.v != nil {
			_ = other.Put(ctx, "acct", "w", c.v, nil)
		}
		if res, err := sweepIn(other, c.accounts, "c2", "d2"); err != nil || res != c.want {
			t.Fatalf("the key holding %.12q (accounts %v): %+v %v, want %+v", c.v, c.accounts != nil, res, err, c.want)
		}
	}

	// Another writer's first write retires w, dated by those records; the
	// next sweep deletes them.
	b, err := ledger.New(st, "acct", ledger.Options{Actor: "b", Clock: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Credit(ctx, "b1", 1); err != nil {
		t.Fatal(err)
	}
	if c, _ := b.Find(ctx); c.Stats().Actors != 1 {
		t.Fatalf("%d live entries after b's first write, want w retired", c.Stats().Actors)
	}
	if res, err := sweep(st, "c2", "d2"); err != nil || res.Deleted+res.Kept != 2 || res.Dating != 0 {
		t.Fatalf("a retired writer's records: %+v %v, want none dating", res, err)
	}
}

// errFetch is failFetch's error.
var errFetch = errors.New("fetch failed")

// failFetch fails every Fetch of key.
type failFetch struct {
	*memory.Siblings
	key string
}

func (s *failFetch) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	if key == s.key {
		return nil, nil, errFetch
	}
	return s.Siblings.Fetch(ctx, key)
}
