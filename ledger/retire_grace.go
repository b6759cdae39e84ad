package ledger

import (
	"time"

	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/tpncounter"
)

// ownEntry is when this ledger's own entry last changed in a state it
// wrote (at which version), and when it last began a read.
type ownEntry struct {
	version uint64
	at      time.Time
	read    time.Time
}

// note records that a state about to be written holds the entry at v.
func (o *ownEntry) note(v uint64, now time.Time) {
	if v != o.version {
		o.version, o.at = v, now
	}
}

// foldRetired folds, in merged, the entries retired more than
// Options.RetiredGrace ago (SPEC.md 6.10).
func (l *Ledger) foldRetired(merged *tpncounter.Counter, now time.Time) {
	if l.opts.RetiredGrace < 0 {
		return
	}
	l.stats.folded += merged.Fold(now.Add(-l.opts.RetiredGrace))
}

// renewStale keeps this ledger within the grace period (SPEC.md 6.10)
// before a read:
//
//   - when its last read began more than RetiredGrace/2 ago, its state and
//     its write in doubt are dropped and the read starts from the store:
//     merging or sending them again could bring back entries folded since,
//     counted twice. A dropped write in doubt may still land, so the
//     ledger takes a new incarnation (else its next write would fork it).
//   - it starts a new incarnation when its entry last changed more than
//     RetireAfter + RetiredGrace/2 ago by its clock: others may have
//     retired the entry and folded it, and a write under a folded entry
//     would count its total twice. The half grace is the margin for clocks
//     and for the write to reach every state.
func (l *Ledger) renewStale() {
	now := l.now()
	defer func() { l.own.read = now }()
	if l.opts.RetiredGrace < 0 {
		return
	}
	doubt := false // a write in doubt dropped: it may still land, so its entry is never written again
	if now.Sub(l.own.read) > l.opts.RetiredGrace/2 {
		doubt = l.cyc.Pending || len(l.unacked) > 0
		l.cyc.Local, l.cyc.Seen, l.cyc.Pending, l.cyc.Ahead, l.unacked, l.takenOut = nil, nil, false, false, nil, false
	}
	if !doubt && (l.cyc.Pending || len(l.unacked) > 0 || l.own.at.IsZero() || now.Sub(l.own.at) <= max(l.opts.RetireAfter, 0)+l.opts.RetiredGrace/2) {
		return
	}
	if l.cyc.Ahead && !l.takenOut { // its entry may be retired: continue from the store
		l.cyc.Local, l.cyc.Seen, l.cyc.Ahead, l.takenOut = nil, nil, false, false
	}
	l.incarnate()
}

// incarnate makes this ledger write as a new incarnation of its actor.
func (l *Ledger) incarnate() {
	l.setWriter(retry.NextWriter(l.opts.Actor, l.writer), ownEntry{read: l.own.read})
}
