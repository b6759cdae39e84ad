//go:build counterkit_mutants

package ledger

import (
	"fmt"
	"os"

	"github.com/counterkit/counterkit/crdt"
)

// Known-broken variants of the ledger's rules, built only with the
// counterkit_mutants build tag. Tests switch them on
// (export_mutants_test.go), or name one in COUNTERKIT_BREAK for a whole
// process (init, below), to show that the tests and the simulation catch
// them. They apply to every Ledger of the process, so the tests that set
// them do not run in parallel with others. Without the tag they are false
// constants (variants.go) and the branches that read them are compiled out.
var (
	// brokenAckEarly acknowledges every member of a group but the first
	// when the shared write fails: callers are told their transaction
	// landed although the write carrying it did not.
	brokenAckEarly bool
	// brokenDropOnRetry writes only the first member again when a cycle
	// retries; the others are answered with its outcome, so they are
	// acknowledged although a refused write took them back.
	brokenDropOnRetry bool
	// brokenKeepRefused takes only the first member back out of the state
	// when the shared write is refused: the others are told the write was
	// refused, yet stay in the state and land with a later write.
	brokenKeepRefused bool
	// brokenRetireUnrecorded retires an idle writer without recording
	// the transactions its entry holds: a retry of one after the
	// retirement finds no record, and may count again.
	brokenRetireUnrecorded bool
	// brokenDateByAnyRecord dates an idle writer by the records it finds
	// of its newest credit and debit, even when one has none naming it
	// (owed): a writer that applied a credit since is retired too early.
	brokenDateByAnyRecord bool
	// brokenLongDoubt sends a copy in doubt for RetireAfter/2 again
	// beside another writer's copy that the store holds, and lets a pass
	// record that copy, not yet landed, as the one that counts: a pass of
	// another ledger that retires the other writer from a read without
	// it counts the transaction twice.
	brokenLongDoubt bool
	// brokenLongDoubtOwn takes a copy in doubt for RetireAfter/2 out by
	// its records even when it would count beside the copies the store
	// holds: a writer giving its own copy up to it loses the transaction.
	brokenLongDoubtOwn bool
	// brokenLateDeclined declines, as a pass did before, to retire an
	// idle writer holding a late copy: a writer that stopped leaves it
	// counted twice for good.
	brokenLateDeclined bool
	// brokenLateAll retires an idle writer with every copy it alone
	// holds left out, late or not: transactions it alone counted are
	// lost.
	brokenLateAll bool
	// brokenCountWindow reads no transaction record for a call: a retry
	// is recognised only while a writer's history or folded record in the
	// counter holds it, a window of so many transactions per writer,
	// whatever their time.
	brokenCountWindow bool
	// brokenCancelRefused takes a Put that failed with the context's
	// cancellation as not written, although the store may have applied
	// it: the caller is told the credit did not land.
	brokenCancelRefused bool
	// brokenBookForgets remembers no dropped key's incarnation: each
	// reopening of a key by a Book adds an actor entry to its state.
	brokenBookForgets bool
	// brokenSweepDating deletes every expired record, the last that date
	// a writer that left among them: on an account written less often
	// than a sweep's After, each time by a new process, no write dates
	// the writers before it, and their entries pile up.
	brokenSweepDating bool
	// brokenSeenIgnored neither reads nor writes stored sightings: a
	// writer that no record dates (its records deleted by a TTL, or one
	// owed when its process stopped) is dated from each new process's
	// first sight of it, so on an account written rarely, each time by a
	// new process, it is never retired.
	brokenSeenIgnored bool
	// brokenSeenAnyVersion dates a writer by a stored sighting of an
	// earlier version too: a writer that wrote since is retired before
	// it has been idle for RetireAfter.
	brokenSeenAnyVersion bool
	// brokenSeenCapped keeps at most 256 stored sightings, however many
	// live writers the account may hold: when more writers than that
	// stop before their records within RetireAfter, the rest are dated
	// from each new process's first sight, never retired, and the
	// account fills.
	brokenSeenCapped bool
)

// Breaks maps the names COUNTERKIT_BREAK takes to the variants they switch
// on: a test runs another test binary, of this module or one importing it,
// with one of them for the whole process.
var Breaks = map[string]*bool{
	"count-window":      &brokenCountWindow,
	"retire-unrecorded": &brokenRetireUnrecorded,
	"dating":            &brokenDateByAnyRecord,
	"long-doubt":        &brokenLongDoubt,
	"long-doubt-own":    &brokenLongDoubtOwn,
	"ack-early":         &brokenAckEarly,
	"drop-on-retry":     &brokenDropOnRetry,
	"keep-refused":      &brokenKeepRefused,
	"late-declined":     &brokenLateDeclined,
	"late-all":          &brokenLateAll,
	"cancel-refused":    &brokenCancelRefused,
	"book-forgets":      &brokenBookForgets,
	"sweep-dating":      &brokenSweepDating,
	"seen-ignored":      &brokenSeenIgnored,
	"seen-any-version":  &brokenSeenAnyVersion,
	"seen-capped":       &brokenSeenCapped,
}

func init() {
	v := os.Getenv("COUNTERKIT_BREAK")
	if v == "" {
		return
	}
	b, ok := Breaks[v]
	if !ok {
		panic(fmt.Sprintf("COUNTERKIT_BREAK=%q: no such variant of the ledger", v))
	}
	*b = true
}

// brokenRouting, when set, routes a Sharded's transactions in place of
// ShardOf: by something other than the id alone (the writer, a seed of
// the process), so that a retry on another ledger may go to another
// sub-key.
var brokenRouting func(s *Sharded, txn crdt.TxnID) int

// route is Shard's routing, or brokenRouting's when set.
func (s *Sharded) route(txn crdt.TxnID) int {
	if brokenRouting != nil {
		return brokenRouting(s, txn)
	}
	return ShardOf(txn, s.n)
}
