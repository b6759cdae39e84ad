package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/txnrec"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// DefaultExpireAfter is ExpireOptions.After when it is zero: the default
// RetryWindow (of ledgers and bounded Accounts alike) and an hour, room for
// FutureSkew's default minute and 59 minutes by which the clock of the
// program that calls ExpireRecords may run ahead of the writers' (SPEC.md
// 6.11, "Storage").
const DefaultExpireAfter = DefaultRetryWindow + time.Hour

// ExpireOptions configure ExpireRecords.
type ExpireOptions struct {
	// After is how long a record is kept after it was made (its At, by
	// the writer's clock). It must be at least the longest RetryWindow of
	// every ledger and bounded Account whose records the store holds, plus
	// FutureSkew and the writers' clock skew (SPEC.md 6.11, "Storage"):
	// a record deleted earlier lets a retry inside the window count again.
	// Zero means DefaultExpireAfter; negative is refused.
	After time.Duration
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// Page is how many keys ExpireAllRecords lists and expires at a time.
	// Zero means DefaultExpirePage; negative is refused.
	Page int
	// Accounts is the store of the accounts whose records the sweep
	// reads, when it is not the swept store: the ledgers' store when
	// their Options.Records is another. The sweep reads the state a
	// record names there to keep the records that date a live writer
	// (Dating); nil reads the swept store, where a records store of
	// their own holds no state, so that every expired record goes and a
	// writer that left stays live on an account written less often than
	// After, each time by a new process.
	Accounts store.Siblings
}

// DefaultExpirePage is ExpireOptions.Page when it is zero.
const DefaultExpirePage = 1000

// ExpireResult counts the keys ExpireRecords was given.
type ExpireResult struct {
	// Deleted: every record the sweep read under the key was made more
	// than After ago, and it deleted them with the read's token (a record
	// written since that read stays).
	Deleted int
	// Kept: a record under the key may still answer a retry.
	Kept int
	// Dating: every record under the key was made more than After ago,
	// but one is of the newest credit or debit that its writer's live
	// entry still holds in the state of the record's key: what a
	// retirement dates that writer by once it has left (SPEC.md 6.9).
	// Such a key goes once the writer writes again or is retired.
	Dating int
	// Empty: the key held nothing.
	Empty int
	// Damaged: a sibling under the key does not decode as a record. Such
	// a key is kept, and its error joined into ExpireRecords' error.
	Damaged int
}

// ExpireRecords deletes from st the transaction records (SPEC.md 6.11)
// under keys whose every sibling is a record made more than opts.After
// ago: no retry inside a window needs them any more, though a ledger
// that held a write in doubt, an owed record or a watch for longer counts
// that transaction twice (SPEC.md 6.11, "Storage"). It keeps (Dating) a
// key with a record of the newest credit or debit its writer's live entry
// holds in the ledger state under the record's key, read from
// opts.Accounts (nil: st): the record a retirement dates that writer by
// (SPEC.md 6.9), two per live writer in each sibling of the state. A
// state that does not decode, unless it is another type's value, keeps
// every record naming it.
//
// Nothing else deletes records: on a store without a TTL, such as the
// embedded or the memory store, each transaction leaves a key until this
// is called. On a store that lists its keys (both of those: Siblings.Keys)
// run ExpireAllRecords on a timer; this is for keys found otherwise, for
// example RecordKey of each account and transaction.
//
// Each key is read, then deleted with the read's token: a record written
// under it in between survives (store.SiblingDeleter). On a store that
// deletes in batches (store.SiblingBatchDeleter: the embedded and memory
// stores) the keys found dead are deleted together once every key is
// read, in one write. A key that is not a valid key with RecordKeyPrefix
// is refused with crdt.ErrInvalidKey before anything is read (one with
// the prefix that RecordKey cannot make is read as a record's); a
// sibling that does
// not decode as a record leaves its key as it is, counted Damaged, its
// error (crdt.ErrCorruptEncoding, beside crdt.ErrTypeMismatch for
// another type's value or crdt.ErrUnsupportedVersion for a newer format)
// joined into the result's. A read or delete
// that fails ends the call with what was done so far (a failed batch
// counts none of its keys Deleted).
func ExpireRecords(ctx context.Context, st interface {
	store.Siblings
	store.SiblingDeleter
}, keys []string, opts ExpireOptions) (ExpireResult, error) {
	var res ExpireResult
	if opts.After < 0 {
		return res, fmt.Errorf("%w: ExpireOptions.After %v is negative", crdt.ErrInvalidConfig, opts.After)
	}
	for _, k := range keys {
		if !IsRecordKey(k) {
			return res, fmt.Errorf("%w: %q is not a transaction record's key (RecordKeyPrefix)", crdt.ErrInvalidKey, k)
		}
		if err := crdt.ValidateKey("record key", k); err != nil {
			return res, fmt.Errorf("ledger: expiring records: %w", err)
		}
	}
	after := opts.After
	if after == 0 {
		after = DefaultExpireAfter
	}
	now := time.Now
	if opts.Clock != nil {
		now = opts.Clock
	}
	var damaged []error
	// dates holds, per key a dead record names, the newest transactions
	// of its live writers (datingRecord).
	dates := map[string]map[writerTxn]bool{}
	accounts := cmp.Or[store.Siblings](opts.Accounts, st)
	// With a batch deleter, the keys found dead wait in pending for one
	// DeleteBatch, and end joins its error (if any) to errs.
	batch, _ := st.(store.SiblingBatchDeleter)
	pending := map[string]store.Token{}
	end := func(errs ...error) (ExpireResult, error) {
		if len(pending) > 0 {
			ks, toks := make([]string, 0, len(pending)), make([]store.Token, 0, len(pending))
			for k, tok := range pending {
				ks, toks = append(ks, k), append(toks, tok)
			}
			if err := batch.DeleteBatch(ctx, ks, toks); err != nil {
				errs = append(errs, fmt.Errorf("ledger: expiring records: deleting %d keys: %w", len(ks), err))
			} else {
				res.Deleted += len(ks)
			}
		}
		return res, errors.Join(append(damaged, errs...)...)
	}
	for _, k := range keys {
		if err := ctx.Err(); err != nil {
			return end(err)
		}
		if _, ok := pending[k]; ok {
			res.Empty++ // listed twice: gone once the batch runs
			continue
		}
		sibs, token, err := st.Fetch(ctx, k)
		if err != nil {
			return end(fmt.Errorf("ledger: expiring records: reading %q: %w", k, err))
		}
		if len(sibs) == 0 {
			res.Empty++
			continue
		}
		oldest := now().Add(-after)
		dead, bad := true, error(nil)
		recs := make([]Record, 0, len(sibs))
		for i, b := range sibs {
			r, err := txnrec.Decode(b)
			if err != nil {
				bad = fmt.Errorf("ledger: expiring records: %q, sibling %d of %d: %w", k, i+1, len(sibs), err)
				break
			}
			recs = append(recs, r)
			dead = dead && r.At.Before(oldest)
		}
		dating := false
		for i := 0; i < len(recs) && bad == nil && dead && !dating && !brokenSweepDating; i++ {
			if dating, err = datingRecord(ctx, accounts, recs[i], dates); err != nil {
				return end(err)
			}
		}
		switch {
		case bad != nil:
			res.Damaged++
			damaged = append(damaged, bad)
		case !dead:
			res.Kept++
		case dating:
			res.Dating++
		case batch != nil:
			pending[k] = token
		default:
			if err := st.Delete(ctx, k, token); err != nil {
				return res, errors.Join(append(damaged, fmt.Errorf("ledger: expiring records: deleting %q: %w", k, err))...)
			}
			res.Deleted++
		}
	}
	return end()
}

// KeyLister lists a store's keys by prefix a page at a time: up to limit
// keys that start with prefix and come after the key after ("": from the
// first), in an order the store keeps from page to page
// (embedded.Siblings.Keys), and none once the last key is passed. A key
// never comes after itself: ExpireAllRecords refuses a page that holds
// the key it was asked to list after, a listing that loops (a page ending
// on the key an earlier page ended on), and a page with a key that is not
// a valid key with RecordKeyPrefix, with crdt.ErrMisconfiguredStore,
// before it reads the page. A key listed again on a later page without a
// loop is judged, and counted, again.
//
// A ledger whose records store is a KeyLister names its key in its
// records, which lets a sweep keep those that date its writers (SPEC.md
// 6.11, "Storage"): a wrapper of such a store (metrics, faults) must list
// keys too, as observe's wrappers and faulty.Siblings.Store do, or a
// sweep of the store beneath deletes the records that date the writers of
// an account written less often than After.
type KeyLister interface {
	Keys(ctx context.Context, prefix, after string, limit int) ([]string, error)
}

// ExpireAllRecords runs ExpireRecords over every transaction record key
// st lists, opts.Page keys at a time, and sums the pages' results: the
// sweep a program runs on a timer over a store without a TTL, such as the
// embedded store. A damaged record is counted and passed over, its error
// joined into the result's (errors.Join: one error per key, beside the
// failure that ended the sweep, if any); a failed listing, read or
// delete, or ctx done, ends the sweep with what was done so far, and the
// next sweep takes up what is left. A KeyLister that does not move past
// the keys it listed, or lists a key that is not a record's, ends it too
// (crdt.ErrMisconfiguredStore), so the sweep always ends.
func ExpireAllRecords(ctx context.Context, st interface {
	store.Siblings
	store.SiblingDeleter
	KeyLister
}, opts ExpireOptions) (ExpireResult, error) {
	var total ExpireResult
	if opts.Page < 0 {
		return total, fmt.Errorf("%w: ExpireOptions.Page %d is negative", crdt.ErrInvalidConfig, opts.Page)
	}
	if opts.After < 0 {
		return total, fmt.Errorf("%w: ExpireOptions.After %v is negative", crdt.ErrInvalidConfig, opts.After)
	}
	page := cmp.Or(opts.Page, DefaultExpirePage)
	var errs []error
	// seen is the cursor of an earlier page, renewed at pages 1, 2, 4,
	// 8... (Brent's cycle detection): a store whose listing comes back to
	// it would loop. Each cursor of a store that keeps to KeyLister comes
	// after the one before.
	seen, renew := "", 1
	for after, n := "", 0; ; n++ {
		keys, err := st.Keys(ctx, RecordKeyPrefix, after, page)
		if err != nil {
			err = fmt.Errorf("ledger: expiring records: listing keys after %q: %w", after, err)
		} else if len(keys) > 0 && (after != "" && slices.Contains(keys, after) || seen != "" && keys[len(keys)-1] == seen) {
			err = fmt.Errorf("%w: ledger: expiring records: the store's Keys after %q lists a key it listed before (KeyLister)", crdt.ErrMisconfiguredStore, after)
		}
		if err != nil || len(keys) == 0 {
			return total, errors.Join(append(errs, err)...)
		}
		for _, k := range keys {
			if kerr := crdt.ValidateKey("listed key", k); kerr != nil || !IsRecordKey(k) {
				err = fmt.Errorf("%w: ledger: expiring records: the store's Keys for prefix %q lists %.80q, not a record key (KeyLister)", crdt.ErrMisconfiguredStore, RecordKeyPrefix, k)
				return total, errors.Join(append(errs, err)...)
			}
		}
		res, err := ExpireRecords(ctx, st, keys, opts)
		total.Deleted += res.Deleted
		total.Kept += res.Kept
		total.Dating += res.Dating
		total.Empty += res.Empty
		total.Damaged += res.Damaged
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = append(errs, j.Unwrap()...) // one error per damaged key
		} else if err != nil {
			errs = append(errs, err)
		}
		if res.Deleted+res.Kept+res.Dating+res.Empty+res.Damaged < len(keys) {
			return total, errors.Join(errs...) // a read or delete failed, or ctx is done
		}
		if n == renew {
			seen, renew = after, 2*renew
		}
		after = keys[len(keys)-1]
	}
}

// writerTxn is a writer's transaction.
type writerTxn struct {
	writer crdt.ActorID
	txn    crdt.TxnID
}

// datingRecord reports whether r is the record of the newest credit or
// debit that r.Writer's live entry holds in the ledger state st keeps
// under r.Key (in any sibling), which dates that writer once it has left
// (SPEC.md 6.9). dates caches each key's such transactions (nil: all, a
// state that does not decode). A key that is not a ledger's (invalid, a
// record's, empty, another type's value) dates no one.
func datingRecord(ctx context.Context, st store.Siblings, r Record, dates map[string]map[writerTxn]bool) (bool, error) {
	if r.Key == "" || IsRecordKey(r.Key) || crdt.ValidateKey("", r.Key) != nil {
		return false, nil
	}
	newest, ok := dates[r.Key]
	if !ok {
		sibs, _, err := st.Fetch(ctx, r.Key)
		if err != nil {
			return false, fmt.Errorf("ledger: expiring records: reading %q, the key a record names: %w", r.Key, err)
		}
		newest = map[writerTxn]bool{}
		for _, b := range sibs {
			var c tpncounter.Counter
			if err := c.UnmarshalBinary(b); errors.Is(err, crdt.ErrTypeMismatch) {
				continue // no ledger's state
			} else if err != nil {
				newest = nil // damaged, or a newer format: which records date a writer cannot be told
				break
			}
			for a := range c.LiveActors() {
				for _, txn := range newestTxns(&c, a) {
					newest[writerTxn{a, txn}] = true
				}
			}
		}
		dates[r.Key] = newest
	}
	return newest == nil || newest[writerTxn{r.Writer, r.Txn}], nil
}
