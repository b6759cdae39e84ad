package proptest_test

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/leanovate/gopter/gen"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
)

// counter is a test-only grow-only counter: one max-register per actor. It
// is written here, not imported, so that proptest tests depend on nothing
// but crdt.
type counter struct{ n map[crdt.ActorID]int64 }

func newCounter() *counter { return &counter{n: map[crdt.ActorID]int64{}} }

func (c *counter) String() string {
	keys := slices.Sorted(maps.Keys(c.n))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, c.n[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func applyCounter(c *counter, a crdt.ActorID, amount int64) error {
	if amount <= 0 {
		return fmt.Errorf("%w: %d", crdt.ErrInvalidAmount, amount)
	}
	if c.n[a] > math.MaxInt64-amount {
		return crdt.ErrOverflow
	}
	c.n[a] += amount
	return nil
}

func mergeCounter(dst, src *counter) error {
	for a, v := range src.n {
		if v > dst.n[a] {
			dst.n[a] = v
		}
	}
	return nil
}

func cloneCounter(c *counter) *counter { return &counter{n: maps.Clone(c.n)} }

func equalCounter(a, b *counter) bool { return maps.Equal(a.n, b.n) }

func valueCounter(c *counter) any {
	var sum int64
	for _, v := range c.n {
		sum += v
	}
	return sum
}

// leqCounter is the pointwise order, a missing actor counting as zero.
func leqCounter(a, b *counter) bool {
	for k, v := range a.n {
		if v > b.n[k] {
			return false
		}
	}
	for k, v := range b.n {
		if a.n[k] > v {
			return false
		}
	}
	return true
}

// expectSum is the plain reference model: the sum of the accepted amounts.
func expectSum(ops []int64) any {
	var sum int64
	for _, op := range ops {
		sum += op
	}
	return sum
}

// counterModel is the correct model. Amounts in [-1, 9]: zero and negative
// ones are rejected, so rejections are exercised too.
func counterModel() proptest.Model[*counter, int64] {
	return proptest.Model[*counter, int64]{
		Name:   "counter",
		New:    newCounter,
		GenOp:  gen.Int64Range(-1, 9),
		Apply:  applyCounter,
		Merge:  mergeCounter,
		Clone:  cloneCounter,
		Equal:  equalCounter,
		Value:  valueCounter,
		Expect: expectSum,
		Leq:    leqCounter,
	}
}

// txn is an operation with a client-chosen id. Its amount is a function of
// its id, so the same id never carries two amounts.
type txn struct{ ID crdt.TxnID }

func (t txn) amount() int64 { return int64(len(t.ID)) }

// ledger is a test-only exactly-once counter: a grow-only map from
// transaction id to amount. Applying an id twice, at any actor, counts once.
type ledger struct{ seen map[crdt.TxnID]int64 }

func newLedger() *ledger { return &ledger{seen: map[crdt.TxnID]int64{}} }

func (l *ledger) String() string { return fmt.Sprint(l.seen) }

func ledgerModel() proptest.Model[*ledger, txn] {
	return proptest.Model[*ledger, txn]{
		Name: "ledger",
		New:  newLedger,
		// Few distinct ids, so the same transaction often reaches two actors.
		GenOp: gen.IntRange(1, 6).Map(func(n int) txn { return txn{ID: crdt.TxnID(strings.Repeat("t", n))} }),
		Apply: func(l *ledger, _ crdt.ActorID, t txn) error {
			l.seen[t.ID] = t.amount()
			return nil
		},
		Merge: func(dst, src *ledger) error {
			for id, v := range src.seen {
				if old, ok := dst.seen[id]; ok && old != v {
					return fmt.Errorf("%w: %s", crdt.ErrConflictingTransaction, id)
				}
			}
			maps.Copy(dst.seen, src.seen)
			return nil
		},
		Clone: func(l *ledger) *ledger { return &ledger{seen: maps.Clone(l.seen)} },
		Equal: func(a, b *ledger) bool { return maps.Equal(a.seen, b.seen) },
		Value: func(l *ledger) any {
			var sum int64
			for _, v := range l.seen {
				sum += v
			}
			return sum
		},
		// The plain model: each transaction id counts once.
		Expect: func(ops []txn) any {
			ids := map[crdt.TxnID]int64{}
			for _, t := range ops {
				ids[t.ID] = t.amount()
			}
			var sum int64
			for _, v := range ids {
				sum += v
			}
			return sum
		},
		Leq: func(a, b *ledger) bool {
			for id := range a.seen {
				if _, ok := b.seen[id]; !ok {
					return false
				}
			}
			return true
		},
	}
}

// perActorLedger reproduces a known ledger bug: each actor deduplicates
// only its own transactions, so one transaction applied by two actors counts
// twice.
type perActorLedger struct {
	byActor map[crdt.ActorID]map[crdt.TxnID]int64
}

func perActorLedgerModel() proptest.Model[*perActorLedger, txn] {
	ok := ledgerModel()
	clone := func(l *perActorLedger) *perActorLedger {
		c := &perActorLedger{byActor: map[crdt.ActorID]map[crdt.TxnID]int64{}}
		for a, m := range l.byActor {
			c.byActor[a] = maps.Clone(m)
		}
		return c
	}
	return proptest.Model[*perActorLedger, txn]{
		Name:  "ledger/per-actor-dedup",
		New:   func() *perActorLedger { return &perActorLedger{byActor: map[crdt.ActorID]map[crdt.TxnID]int64{}} },
		GenOp: ok.GenOp,
		Apply: func(l *perActorLedger, a crdt.ActorID, t txn) error {
			if l.byActor[a] == nil {
				l.byActor[a] = map[crdt.TxnID]int64{}
			}
			l.byActor[a][t.ID] = t.amount()
			return nil
		},
		Merge: func(dst, src *perActorLedger) error {
			for a, m := range src.byActor {
				if dst.byActor[a] == nil {
					dst.byActor[a] = map[crdt.TxnID]int64{}
				}
				maps.Copy(dst.byActor[a], m)
			}
			return nil
		},
		Clone: clone,
		Equal: func(a, b *perActorLedger) bool {
			return maps.EqualFunc(a.byActor, b.byActor, func(x, y map[crdt.TxnID]int64) bool { return maps.Equal(x, y) })
		},
		Value: func(l *perActorLedger) any {
			var sum int64
			for _, m := range l.byActor {
				for _, v := range m {
					sum += v
				}
			}
			return sum
		},
		Expect: ok.Expect,
	}
}
