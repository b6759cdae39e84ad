package ledger

import (
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/store/faulty"
)

// ContinueActorEntry makes l write as Options.Actor itself, continuing the
// actor's entry across Ledger values as ledgers did before incarnations.
// It exists so that the simulation can show that this loses acknowledged
// writes after a restart.
func ContinueActorEntry(l *Ledger) { l.setWriter(l.opts.Actor, l.own) }

// SetWriter makes a new l write as incarnation w of its actor (a
// simulation that replays its seed chooses them).
func SetWriter(l *Ledger, w crdt.ActorID) { l.setWriter(w, l.own) }

// BackoffLimit is the longest wait b allows before the retry after attempt.
func BackoffLimit(b Backoff, attempt int) time.Duration {
	return retry.Limit(b.Initial, b.Max, attempt)
}

// Queued returns how many Updates wait in l's queue for a cycle.
func Queued(l *Ledger) int {
	l.gmu.Lock()
	defer l.gmu.Unlock()
	return len(l.queue)
}

// QueuedBook is Queued of the Ledger a Book holds for key (0 if none).
func QueuedBook(b *Book, key string) int {
	b.mu.Lock()
	e := b.entries[key]
	b.mu.Unlock()
	if e == nil {
		return 0
	}
	return Queued(e.l)
}

// QueuedSharded is Queued of the sub-ledger of shard i.
func QueuedSharded(s *Sharded, i int) int { return Queued(s.sub(i)) }

// MaxGroupOf returns the ledger's group bound after defaults.
func MaxGroupOf(l *Ledger) int { return l.opts.MaxGroup }

// counterCalls confines p to the ledger's own keys: the calls on
// transaction records (IsRecordKey) pass untouched.
func counterCalls(p faulty.Policy) faulty.Policy {
	return faulty.Keys(p, func(k string) bool { return !IsRecordKey(k) })
}

// FreshRecords is p with no stale read of a transaction record: a record
// Fetch reflects every record Put acknowledged before it (SPEC.md 6.11,
// "Reads of records"). Reads of the account's key may lag.
func FreshRecords(p faulty.Policy) faulty.Policy {
	return func(c faulty.Call) faulty.Fault {
		if f := p(c); f.Kind() != faulty.Stale || !IsRecordKey(c.Key) {
			return f
		}
		return faulty.Pass
	}
}

// BookHolding reports what keeps key's Ledger in b open when idle
// (Ledger.mustStay): a pending write or an owed record (unwritten), and the
// watch of a copy (watching); false, false when b holds no Ledger for key.
func BookHolding(b *Book, key string) (unwritten, watching bool) {
	b.mu.Lock()
	e := b.entries[key]
	b.mu.Unlock()
	if e == nil {
		return false, false
	}
	return e.l.holding()
}

// WriteRoom is writeRoom: what the cap on Apply keeps below store.MaxValue.
var WriteRoom = writeRoom

// LayoutRecheck is layoutRecheck: how long a Sharded's write trusts the
// layout it last checked.
const LayoutRecheck = layoutRecheck

// Holding is l.holding: a pending write, a take-out not yet written or an
// owed record (unwritten), and a watched copy (watching).
func Holding(l *Ledger) (unwritten, watching bool) { return l.holding() }
