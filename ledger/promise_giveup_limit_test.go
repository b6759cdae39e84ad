package ledger_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// landedPuts keeps, in order, every transaction record a Put landed in
// the store it wraps.
type landedPuts struct {
	store.Siblings
	mu      sync.Mutex
	records []landedRecord
}

// landedRecord is a record that landed, with the writer that put it.
type landedRecord struct {
	rec   ledger.Record
	putBy crdt.ActorID
}

func (s *landedPuts) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	err := s.Siblings.Put(ctx, key, actor, value, token)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var r ledger.Record
	if ledger.IsRecordKey(key) && r.UnmarshalBinary(value) == nil {
		s.records = append(s.records, landedRecord{r, actor})
	}
	return nil
}

// giveUpLimit reports whether the account's excess over the transactions'
// amounts is what SPEC.md 6.11 (Limits, "Concurrent copies") states the
// ledger does not promise: "x also stays counted twice when a writer
// giving its copy up (step 6) records the late copy as the one that counts
// while the writer that recorded x first still holds it and later counts
// it" (TestLimitGiveUpNamesALateCopy builds one such schedule). A
// transaction x is such a case when the first record of x that
// landed names a writer C that lists x no longer in the account's final
// state and put no record of x naming another writer (it did not give its
// copy up), and a record naming another writer A that still lists x there
// was put by a third writer (a give-up). The excess must be the sum of the
// amounts of some of those transactions (each counted once more).
func giveUpLimit(t *testing.T, mem *memory.Siblings, puts *landedPuts, excess int64) bool {
	t.Helper()
	if excess <= 0 {
		return false
	}
	final := storedAt(t, mem, "acct")
	puts.mu.Lock()
	defer puts.mu.Unlock()
	var amounts []int64
	var cases []string
	amountOf := transactionsOf(puts.records)
	for _, x := range slices.Sorted(maps.Keys(amountOf)) {
		amount := amountOf[x]
		first := slices.IndexFunc(puts.records, func(r landedRecord) bool { return r.rec.Txn == x })
		recorder := puts.records[first].rec.Writer
		gaveUp := slices.ContainsFunc(puts.records, func(r landedRecord) bool {
			return r.rec.Txn == x && r.putBy == recorder && r.rec.Writer != recorder
		})
		if gaveUp || holdsTxn(final, recorder, x) {
			continue
		}
		i := slices.IndexFunc(puts.records, func(r landedRecord) bool {
			return r.rec.Txn == x && r.putBy != r.rec.Writer && r.rec.Writer != recorder && holdsTxn(final, r.rec.Writer, x)
		})
		if i >= 0 {
			amounts = append(amounts, amount)
			cases = append(cases, fmt.Sprintf("%s (%d): recorded first by %s, which lists it no longer and gave it up to no one; %s's give-up record names %s, which still lists it",
				x, amount, recorder, puts.records[i].putBy, puts.records[i].rec.Writer))
		}
	}
	if !subsetSums(amounts, excess) {
		t.Logf("excess %d is not made of the give-up cases %v", excess, cases)
		return false
	}
	t.Logf("counted %d more than the transactions' sum: SPEC.md 6.11's limit of a give-up that names a late copy: %v", excess, cases)
	return true
}

// transactionsOf returns each recorded transaction's amount.
func transactionsOf(recs []landedRecord) map[crdt.TxnID]int64 {
	out := map[crdt.TxnID]int64{}
	for _, r := range recs {
		out[r.rec.Txn] = r.rec.Amount
	}
	return out
}

// subsetSums reports whether some of the (positive) amounts sum to want.
func subsetSums(amounts []int64, want int64) bool {
	reach := map[int64]bool{0: true}
	for _, a := range amounts {
		for _, s := range slices.Collect(maps.Keys(reach)) {
			if s+a <= want {
				reach[s+a] = true
			}
		}
	}
	return reach[want]
}

// TestGiveUpLimitOnlyExplainsItsCase: giveUpLimit accepts an excess made
// of the stated case (c recorded x first, folded and forgot it; b's
// give-up record names a, which still lists x) and refuses the same
// double count when the record naming a is a's own or c gave x up too, an
// excess of another size, and a shortfall. x counts 6, y and z 1.
func TestGiveUpLimitOnlyExplainsItsCase(t *testing.T) {
	for _, tc := range []struct {
		name    string
		putBy   crdt.ActorID // of the record naming a
		cGave   bool         // c also put a record naming a: it gave x up
		excess  int64
		explain bool
	}{
		{"b's give-up names a", "b", false, 6, true},
		{"a's own record", "a", false, 6, false},
		{"c gave x up", "b", true, 6, false},
		{"another excess", "b", false, 5, false},
		{"a shortfall", "b", false, -6, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			mem := memory.NewSiblings()
			puts := &landedPuts{Siblings: mem}
			opts := tpncounter.Options{HistoryLength: 1, FoldedLength: 1}
			put := func(actor crdt.ActorID, c *tpncounter.Counter) {
				b, err := c.MarshalBinary()
				require.NoError(t, err)
				require.NoError(t, puts.Put(ctx, "acct", actor, b, nil))
			}
			c, err := tpncounter.New(opts)
			require.NoError(t, err)
			for i, x := range []crdt.TxnID{"x", "y", "z"} {
				_, err := c.Apply("c", x, []int64{6, 1, 1}[i])
				require.NoError(t, err)
				_, err = c.Compact("c")
				require.NoError(t, err)
				put("c", c) // x folded after y, forgotten after z
			}
			require.False(t, holdsTxn(c, "c", "x"))
			a, err := tpncounter.New(opts)
			require.NoError(t, err)
			_, err = a.Apply("a", "x", 6)
			require.NoError(t, err)
			put("a", a)
			puts.records = []landedRecord{
				{ledger.Record{Txn: "x", Amount: 6, Writer: "c"}, "c"},
				{ledger.Record{Txn: "x", Amount: 6, Writer: "a"}, tc.putBy},
			}
			if tc.cGave {
				puts.records = append(puts.records, landedRecord{ledger.Record{Txn: "x", Amount: 6, Writer: "a"}, "c"})
			}
			require.Equal(t, tc.explain, giveUpLimit(t, mem, puts, tc.excess))
		})
	}
}
