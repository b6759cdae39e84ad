package modelcheck

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/counterkit/counterkit/crdt"
)

// Txn is a transaction of a scope with its signed amount, ±10^k with k
// distinct per transaction, so that a value tells how many times each
// transaction counts.
type Txn struct {
	ID     crdt.TxnID
	Amount int64
}

// Counts decodes value into how many times each of txns counts (0..9).
func Counts(value int64, txns []Txn) (map[crdt.TxnID]int, error) {
	byPow := map[int64]Txn{}
	var pows []int64
	for _, t := range txns {
		a := t.Amount
		if a < 0 {
			a = -a
		}
		byPow[a] = t
		pows = append(pows, a)
	}
	sort.Slice(pows, func(i, j int) bool { return pows[i] < pows[j] })
	out := map[crdt.TxnID]int{}
	v := value
	for p := int64(1); v != 0 || (len(pows) > 0 && p <= pows[len(pows)-1]); p *= 10 {
		t, ok := byPow[p]
		d := ((v % 10) + 10) % 10
		if !ok {
			if d != 0 {
				return nil, fmt.Errorf("value %d is no combination of the transactions' amounts", value)
			}
			v /= 10
			continue
		}
		c := d
		if t.Amount < 0 {
			c = (10 - d) % 10
			v += c
		} else {
			v -= c
		}
		out[t.ID] = int(c)
		v /= 10
		if p > 1e17 {
			break
		}
	}
	if v != 0 {
		return nil, fmt.Errorf("value %d is no combination of the transactions' amounts", value)
	}
	return out, nil
}

// CheckCounts checks the promise for counts, how many times each of txns
// counts in the store now: an acknowledged transaction counts exactly once;
// none counts twice; one whose every call answered a definite failure, with
// none still running, counts zero times; a retry of an acknowledged
// transaction inside the retry window (World.RetryWindow from the
// transaction's first call) is recognised, neither applied again nor
// refused with crdt.ErrOutsideWindow. After the window a timed transaction
// (World.Timed) is refused, never answered or counted again; an untimed one
// may be applied as new, so that transaction alone may count twice.
//
// A transaction no call has acknowledged may count twice while one of its
// calls still runs: a copy whose Put lands after the other copy left its
// writer's entry (a retirement counted it) counts twice until that call's
// record step takes it out (SPEC.md 6.11 Limits, "Concurrent copies").
// Once no call of it runs, the rules above hold.
//
// With doubled, a transaction may count twice for a while (a bounded
// counter's two holders, until the larger takes its copy back); then it
// must still never count more than twice, nor an acknowledged one zero
// times.
func (w *World) CheckCounts(counts map[crdt.TxnID]int, txns []Txn, doubled bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range txns {
		acked, running, late := false, false, false
		definite, n := true, 0
		var definiteErr error
		for _, op := range w.ops {
			if op.Txn != t.ID {
				continue
			}
			n++
			if op.Retry && !op.InWindow && !w.Timed {
				late = true
			}
			if !op.Finished {
				running = true
				continue
			}
			err := op.Result.Err
			if err == nil {
				acked = true
			}
			if !Definite(err) {
				definite = false
			} else {
				definiteErr = err
			}
			if op.InWindow {
				if op.AckedBefore && err == nil && op.Result.Applied {
					return fmt.Errorf("%s: a retry of %q inside the window, after it was acknowledged, answered Applied", op.Label, t.ID)
				}
				if errors.Is(err, crdt.ErrOutsideWindow) {
					return fmt.Errorf("%s: a retry of %q inside the window (%v after its first call, window %v) was refused: %v",
						op.Label, t.ID, op.Start.Sub(w.firstStart(t.ID)), w.RetryWindow, err)
				}
			} else if w.Timed && err == nil && op.Result.Applied {
				// Past the window a timed transaction is refused, or
				// recognised while the counter still holds it (SPEC.md
				// 6.11), never applied again.
				return fmt.Errorf("%s: a retry of timed %q %v after its first call, past the window %v, answered %s instead of a refusal",
					op.Label, t.ID, op.Start.Sub(w.firstStart(t.ID)), w.RetryWindow, op.Result)
			}
		}
		c := counts[t.ID]
		if doubled && c == 2 {
			late = true
		}
		switch {
		case acked && c != 1 && !(late && c == 2):
			return fmt.Errorf("%q was acknowledged and counts %d times", t.ID, c)
		case c > 1 && !late && !(running && c == 2):
			return fmt.Errorf("%q counts %d times", t.ID, c)
		case n > 0 && definite && !running && c != 0:
			return fmt.Errorf("%q counts %d times, though every call of it answered a definite failure (last: %v)", t.ID, c, definiteErr)
		}
	}
	return nil
}

// firstStart is firstCall's time; w.mu is held.
func (w *World) firstStart(txn crdt.TxnID) time.Time {
	t, _ := w.firstCall(txn)
	return t
}
