package ledger

import "time"

// ContinueActorEntry makes l write as Options.Actor itself, continuing the
// actor's entry across Ledger values as ledgers did before incarnations.
// It exists so that the simulation can show that this loses acknowledged
// writes after a restart.
func ContinueActorEntry(l *Ledger) { l.writer = l.opts.Actor }

// BackoffLimit exposes Backoff.limit.
func BackoffLimit(b Backoff, attempt int) time.Duration { return b.limit(attempt) }
