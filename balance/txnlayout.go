package balance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/rowlog"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/timeid"
)

// An account's layout is the options that name its partitions:
// Partitions, RecordShards and RetryWindow. Two Transactions with different
// layouts would read and write different partitions of one account: one
// would miss rows the other wrote, and a retry through one would not find
// the other's records. So the account's first Apply writes its layout into
// the account's layout marker, and every call checks it (SPEC.md 9.4
// "Layout").

// layoutTrust is how long Apply and Recorded trust a layout check of an
// account (by the Transactions' clock), so that a hot account's calls
// read the marker about once a second per Transactions; at most
// SafetyMargin (trust).
const layoutTrust = time.Second

// trust is how long tx trusts a layout check: layoutTrust, or SafetyMargin
// if shorter. A Delete of the account deletes its marker, and the key is
// reused no sooner than SafetyMargin after it returned; a check made
// before the Delete is then no longer trusted, so the first Apply after
// it finds the marker empty and writes its layout again.
func (tx *Transactions) trust() time.Duration { return min(layoutTrust, tx.opts.SafetyMargin) }

// layoutChecksMax is the most accounts whose last check a Transactions
// remembers. When full, it forgets the checks it no longer trusts and, if
// that frees fewer than an eighth, other checks at random up to an eighth
// (trustLayout), so a full table costs O(1) a check: an account's marker
// is read about once a second (by each call running when the trust has
// run out) while fewer than this many accounts are written in a second.
const layoutChecksMax = 1 << 14

// layoutMarkID is the update id of the layout marker's rows.
var layoutMarkID = timeid.FromParts(uuidEpoch, 0, 1)

// layoutPartition is the partition of account's layout marker:
// "<account>#txn.layout", holding an N row of layoutMarkID for each layout
// an Apply wrote, whose amount is the layout (TxnOptions.layout).
func layoutPartition(account string) string { return account + "#txn.layout" }

// layout returns o's layout as one positive int64: Partitions − 1 in bits
// 57–62, RetryWindow in µs in bits 8–56 and RecordShards − 1 in bits 0–7,
// so that, of two layouts, the one with more Partitions is the larger.
func (o TxnOptions) layout() int64 {
	return int64(o.Partitions-1)<<57 | o.RetryWindow.Microseconds()<<8 | int64(o.RecordShards-1)
}

// layoutString describes a layout (an amount of the marker).
func layoutString(l int64) string {
	o := layoutOptions(l)
	return fmt.Sprintf("Partitions %d, RecordShards %d, RetryWindow %v", o.Partitions, o.RecordShards, o.RetryWindow)
}

// layoutOptions returns the options layout l names (the others zero).
func layoutOptions(l int64) TxnOptions {
	return TxnOptions{Partitions: int(l>>57) + 1, RecordShards: int(l&0xff) + 1,
		RetryWindow: time.Duration(l>>8&(1<<49-1)) * time.Microsecond}
}

// layoutChecks remembers when each account's layout was last found to be
// this Transactions'.
type layoutChecks struct {
	mu sync.Mutex
	at map[string]time.Time
}

// checkLayout reads account's layout marker and fails crdt.ErrInvalidConfig
// unless it is empty or names this Transactions' layout as the largest;
// empty reports an empty marker. With trust, it skips the read within
// tx.trust() of the last check that passed on a marker naming the layout.
func (tx *Transactions) checkLayout(ctx context.Context, account string, trust bool) (empty bool, err error) {
	now := tx.opts.Clock()
	if trust {
		tx.checked.mu.Lock()
		at, ok := tx.checked.at[account]
		tx.checked.mu.Unlock()
		if ok && !now.Before(at) && now.Sub(at) < tx.trust() {
			return false, nil
		}
	}
	mine := tx.opts.layout()
	named, err := readLayouts(ctx, &tx.ac.t, account)
	if err != nil {
		return false, err
	}
	switch {
	case len(named) == 0:
		return true, nil
	case !slices.Contains(named, mine) || slices.Max(named) != mine:
		return false, fmt.Errorf("%w: account %q has the layout %s; this Transactions has %s (TxnOptions: every Transactions of an account must use the same)",
			crdt.ErrInvalidConfig, account, layoutString(slices.Max(named)), layoutString(mine))
	}
	if trust {
		tx.trustLayout(account, now)
	}
	return false, nil
}

// readLayouts returns the layouts account's marker names.
func readLayouts(ctx context.Context, t *rowlog.Table[Row], account string) ([]int64, error) {
	rows, err := t.Snapshot(ctx, layoutPartition(account), MaxRows, store.ReadAny)
	if err != nil {
		return nil, err
	}
	var named []int64
	for _, r := range rows {
		if r.UpdateID != layoutMarkID || r.Kind != KindNormal || r.Amount <= 0 {
			return nil, fmt.Errorf("%w: account %q: its layout marker holds a row no Transactions writes (%v)", crdt.ErrCorruptEncoding, account, r.Key())
		}
		named = append(named, r.Amount)
	}
	return named, nil
}

// AccountLayout reads account's layout marker in st (SPEC.md 9.4
// "Layout"): the Partitions, RecordShards and RetryWindow its first Apply
// recorded (the largest named, after a layout race), in TxnOptions that
// open a Transactions that reads the account: their other fields are
// zero, except that a RetryWindow shorter than the default SettleGrace
// (1 minute) comes with timing Options scaled to it (SettleGrace the
// RetryWindow), which bear on merges, not on reads; ok is false when no
// Apply wrote the marker. An account key Transactions refuses is
// crdt.ErrInvalidKey; a marker row no Transactions writes, or one naming
// a RetryWindow no Transactions takes, is crdt.ErrCorruptEncoding.
func AccountLayout(ctx context.Context, st store.Partitions, account string) (o TxnOptions, ok bool, err error) {
	if err := checkTxnAccount(account); err != nil {
		return TxnOptions{}, false, err
	}
	ac, err := New(st, Options{})
	if err != nil {
		return TxnOptions{}, false, err
	}
	named, err := readLayouts(ctx, &ac.t, account)
	if err != nil || len(named) == 0 {
		return TxnOptions{}, false, err
	}
	o = layoutOptions(slices.Max(named))
	if o.RetryWindow <= 0 || o.RetryWindow > MaxRetryWindow {
		return TxnOptions{}, false, fmt.Errorf("%w: account %q: its layout marker names %s, which no Transactions takes",
			crdt.ErrCorruptEncoding, account, layoutString(slices.Max(named)))
	}
	if r := o.RetryWindow; r < time.Minute {
		o.SettleGrace, o.SafetyMargin, o.MaxMerge, o.FutureSkew, o.Deadline = r, r/4, r/4, r/16, r/4
	}
	return o, true, nil
}

// trustLayout trusts a check of account's layout, or its marking, at now.
func (tx *Transactions) trustLayout(account string, now time.Time) {
	tx.checked.mu.Lock()
	defer tx.checked.mu.Unlock()
	if tx.checked.at == nil {
		tx.checked.at = map[string]time.Time{}
	}
	if _, ok := tx.checked.at[account]; !ok && len(tx.checked.at) >= layoutChecksMax {
		for a, at := range tx.checked.at {
			if now.Before(at) || now.Sub(at) >= tx.trust() {
				delete(tx.checked.at, a)
			}
		}
		for a := range tx.checked.at { // in Go's random order
			if len(tx.checked.at) <= layoutChecksMax-layoutChecksMax/8 {
				break
			}
			delete(tx.checked.at, a)
		}
	}
	tx.checked.at[account] = now
}
