package ledger

import (
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/tpncounter"
)

// ownEntry is when each half of this ledger's entry (credits, debits: each
// retired apart) last changed in a state it wrote, at which seq; and read.
type ownEntry struct {
	seq  [2]uint64
	at   [2]time.Time
	read time.Time
}

// note records that st, a state about to be written, holds the entry.
func (o *ownEntry) note(st *tpncounter.Counter, w crdt.ActorID, now time.Time) {
	for h, s := range st.Seqs(w) {
		if s != o.seq[h] {
			o.seq[h], o.at[h] = s, now
		}
	}
}

// changed is when the half that changed least recently last changed.
func (o *ownEntry) changed() time.Time {
	if o.seq[0] != 0 && (o.seq[1] == 0 || o.at[0].Before(o.at[1])) {
		return o.at[0]
	}
	return o.at[1]
}

// foldRetired folds, in merged, the entries retired more than
// Options.RetiredGrace ago (SPEC.md 6.10).
func (l *Ledger) foldRetired(merged *tpncounter.Counter, now time.Time) {
	if l.opts.RetiredGrace < 0 {
		return
	}
	l.stats.folded += merged.Fold(now.Add(-l.opts.RetiredGrace))
}

// renewStale keeps this ledger within the grace period (SPEC.md 6.10):
//   - when its last read is more than RetiredGrace/2 old, it drops its state
//     and write in doubt (sent again, they could bring back entries folded
//     since), keeping a take-out for retake; a new incarnation if a write
//     in doubt (it may land), else kept if the read shows it as stored.
//   - it starts a new incarnation when a half of its entry last changed
//     more than RetireAfter + RetiredGrace/2 ago by its clock: others may
//     have retired and folded that half (half a grace: the clocks' margin).
func (l *Ledger) renewStale() {
	now := l.now()
	if l.opts.RetiredGrace < 0 {
		return
	}
	doubt := false // a write in doubt dropped: it may still land, so its entry is never written again
	if now.Sub(l.own.read) > l.opts.RetiredGrace/2 {
		if doubt = l.cyc.Pending || len(l.unacked) > 0; !doubt {
			l.resume = max(l.resume, l.stored) // a staler read would fork it (a Book's stands)
			l.carry = append(l.carry, l.takenOut...)
		}
		l.cyc.Local, l.cyc.Seen, l.cyc.Pending, l.cyc.Ahead, l.unacked, l.takenOut = nil, nil, false, false, nil, nil
	}
	if !doubt && (l.cyc.Pending || len(l.unacked) > 0 || l.own.changed().IsZero() || now.Sub(l.own.changed()) <= max(l.opts.RetireAfter, 0)+l.opts.RetiredGrace/2) {
		return
	}
	if l.cyc.Ahead && l.takenOut == nil { // its entry may be retired: continue from the store
		l.cyc.Local, l.cyc.Seen, l.cyc.Ahead = nil, nil, false
	}
	if l.incarnate(); doubt {
		l.former = Record{} // its write may still land: that entry is never written again
	}
}

// retake makes each dropped take-out (carry) again, under any incarnation, in
// a read in place showing its entry at its version or later with the copy;
// a staler read keeps it to RetiredGrace after the take-out, a fold drops it.
func (l *Ledger) retake(fetched *tpncounter.Counter) error {
	if fetched != l.cyc.Local {
		return nil // read apart: l's state is not that read
	}
	var kept []Record
	for _, c := range l.carry {
		switch v := fetched.Version(c.Writer); {
		case v > 0 && v < c.Version && l.now().Sub(c.At) <= l.opts.RetiredGrace:
			kept = append(kept, c)
		case v > 0 && v < c.Version: // past the grace: its entry may have been folded
		case v > 0 && holds(fetched, c.Writer, c.Txn):
			if err := l.takeOut(c.Writer, v, false, c.Txn); err != nil {
				return err // l.carry kept whole: a take-out made twice is one
			}
		}
	}
	l.carry = kept
	return nil
}

// incarnate makes this ledger write as a new incarnation of its actor.
func (l *Ledger) incarnate() {
	l.former = Record{Writer: l.writer, Version: l.stored}
	l.setWriter(retry.NextWriter(l.opts.Actor, l.writer), ownEntry{read: l.own.read})
}
