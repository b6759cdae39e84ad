package bounded

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/internal/txnrec"
	"github.com/counterkit/counterkit/store"
)

// DefaultRetryCount is the default AccountOptions.RetryCount.
const DefaultRetryCount = 3

// MaxRetryCount is the largest accepted AccountOptions.RetryCount.
const MaxRetryCount = 100

// DefaultRetryWindow is AccountOptions.RetryWindow when it is zero.
const DefaultRetryWindow = 24 * time.Hour

// MaxRetryWindow is the largest AccountOptions.RetryWindow.
const MaxRetryWindow = 400 * 24 * time.Hour

// MaxActorLen is the longest AccountOptions.Actor: the writer id adds an
// incarnation suffix to it.
const MaxActorLen = crdt.MaxIDLen - 1 - retry.IncarnationLen

// AccountOptions configure an Account.
type AccountOptions struct {
	// Actor names the writer (required), at most MaxActorLen bytes. The
	// account writes as a new incarnation of it (Writer), so a restarted
	// process never continues an entry whose writes may be in flight.
	Actor crdt.ActorID

	// Counter sets the window of the stored counter. Its Bound must be 0:
	// a negative bound's rights belong to an Origin, a fixed actor id no
	// Account writes as.
	Counter Options

	// Keep is what this account keeps of its own rights when it grants
	// other actors' requests: each request gets the shortfall it asked
	// for, out of the rights beyond Keep (default 0: all of them may go).
	Keep int64

	// RetryCount is how many more times a write is attempted after an
	// ambiguous or refused Put (0: DefaultRetryCount).
	RetryCount int

	// Backoff spaces the attempts of one operation.
	Backoff Backoff

	// RetryWindow is how long after a transaction lands a retry of it, on
	// any Account of the key, is recognised however many transactions
	// came since: the Account records each transaction it lands under a
	// key of its own in the same store (SPEC.md 13.5, "Records"). Zero
	// means DefaultRetryWindow (24 hours); at most MaxRetryWindow. The
	// records are a ledger's, and stay until deleted: by
	// ledger.ExpireRecords or ExpireAllRecords with an ExpireOptions.After
	// of at least this window plus the clock skew among the Accounts and
	// the sweep (SPEC.md 6.11, "Storage"; its default suits the default
	// window and less than an hour of skew). A TTL
	// cannot expire them: they share the store with the account's state,
	// and Open refuses a store whose values expire (store.Expiring).
	RetryWindow time.Duration

	// Clock returns the current time for RetryWindow. Nil means time.Now.
	// A call made while it reads outside 1970..2262, where no transaction
	// record can be timed, fails with crdt.ErrInvalidConfig before it
	// reads or writes.
	Clock func() time.Time
}

// Backoff is the wait between the attempts of one operation: before the
// k-th retry, a random duration up to min(Max, Initial·2^(k−1)). Zero
// fields mean 10 ms and 1 s; a negative Initial retries at once.
type Backoff struct{ Initial, Max time.Duration }

// Result describes a finished operation.
type Result struct {
	// Outcome is Applied when this call applied the transaction (even if
	// an earlier attempt of it is what landed), Duplicate when an earlier
	// call had: on any Account, or on this one in a write answered
	// crdt.ErrAmbiguousWrite, which this call may then be the one to
	// land (SPEC.md 13.5). Zero without a transaction.
	Outcome  Outcome
	Attempts int   // fetch-merge-put cycles run (0 for input refused before any)
	Landed   bool  // the write is known to be in the store (or not needed)
	Value    int64 // math.MaxInt64 past it (see Account.Value)
	Rights   int64 // what this account may debit now
	// Granted is what this call's grant step gave to other actors'
	// requests (SPEC.md 13.5 step 5). A Close with an heir gives to the
	// requests before that step, with what it hands to the heir, and
	// reports 0 here.
	Granted int64
	// Requested is, after a refused debit, this account's outstanding
	// request once the call ended (SPEC.md 13.5): the shortfall, or more
	// while an earlier refused debit's larger request is not met. A debit
	// the whole balance above the bound is short of asks nothing: 0 then,
	// or an earlier request still outstanding.
	Requested int64
}

// Account drives a bounded counter stored under one key of a
// store.Siblings: every operation fetches the siblings, merges them with
// its own last write, applies, grants the requests it can, and puts the
// result with the fetch's token. It is safe for concurrent use.
type Account struct {
	st     store.Siblings
	key    string
	opts   AccountOptions
	writer crdt.ActorID

	mu  sync.Mutex
	cyc retry.Cycle[*Counter, accountOps] // last state written, and whether pending
	// unconfirmed holds the amounts of the transactions whose outcome the
	// caller was told is unknown, until a later call settles them.
	unconfirmed map[crdt.TxnID]int64
	closed      bool
	closing     bool // Close's cycle runs: its grants are never left out

	// The records (SPEC.md 13.5): the transactions this attempt applied,
	// those applied in a write not known to have landed, and the records
	// of landed ones not yet written, which are written before the next
	// cycle. tokens holds the record fetch's token of a transaction whose
	// lookup found no live record, for its record's Put.
	applying   map[crdt.TxnID]int64
	unrecorded map[crdt.TxnID]int64
	owed       map[crdt.TxnID]txnrec.Record
	tokens     map[crdt.TxnID]store.Token
}

// Open returns an Account for key, without touching the store. Errors wrap
// crdt.ErrInvalidKey, crdt.ErrInvalidActor or crdt.ErrInvalidConfig (also
// for a store whose values expire, store.Expiring: an idle account would
// vanish). Its
// transaction records are keyed by key's name as a ledger's are, so a
// ledger account of the same name in the same store would share them:
// give the two distinct names (SPEC.md 13.5, "Records").
func Open(st store.Siblings, key string, opts AccountOptions) (*Account, error) {
	if storekit.Nil(st) {
		return nil, fmt.Errorf("%w: nil store", crdt.ErrInvalidConfig)
	}
	if err := crdt.ValidateKey("bounded key", key); err != nil {
		return nil, err
	}
	if txnrec.IsKey(key) {
		return nil, fmt.Errorf("%w: bounded key %q starts with %q, which only transaction records use", crdt.ErrInvalidKey, key, txnrec.Prefix)
	}
	if err := opts.Actor.Validate(); err != nil {
		return nil, err
	}
	if len(opts.Actor) > MaxActorLen {
		return nil, fmt.Errorf("%w: %d bytes, longer than %d", crdt.ErrInvalidActor, len(opts.Actor), MaxActorLen)
	}
	if err := store.CheckKeeps(st, "bounded accounts"); err != nil {
		return nil, err
	}
	o, err := opts.Counter.resolved()
	if err != nil {
		return nil, err
	}
	opts.Counter = o
	switch {
	case o.Bound != 0:
		return nil, fmt.Errorf("%w: an Account needs Bound 0: the %d rights of a negative bound would belong to Origin %q, which no Account writes as (each writes as a new incarnation)", crdt.ErrInvalidConfig, uint64(-o.Bound), o.Origin)
	case opts.Keep < 0:
		return nil, fmt.Errorf("%w: Keep %d is negative", crdt.ErrInvalidConfig, opts.Keep)
	case opts.RetryCount < 0 || opts.RetryCount > MaxRetryCount:
		return nil, fmt.Errorf("%w: RetryCount %d outside 0..%d", crdt.ErrInvalidConfig, opts.RetryCount, MaxRetryCount)
	case opts.Backoff.Max < 0:
		return nil, fmt.Errorf("%w: Backoff.Max %v is negative", crdt.ErrInvalidConfig, opts.Backoff.Max)
	case opts.RetryWindow < 0 || opts.RetryWindow > MaxRetryWindow:
		return nil, fmt.Errorf("%w: RetryWindow %v outside 0..%v", crdt.ErrInvalidConfig, opts.RetryWindow, MaxRetryWindow)
	}
	opts.RetryWindow = cmp.Or(opts.RetryWindow, DefaultRetryWindow)
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	opts.RetryCount = cmp.Or(opts.RetryCount, DefaultRetryCount)
	opts.Backoff.Initial = cmp.Or(opts.Backoff.Initial, 10*time.Millisecond)
	opts.Backoff.Max = cmp.Or(opts.Backoff.Max, time.Second)
	a := &Account{st: st, key: key, opts: opts, writer: retry.NewWriter(opts.Actor), unconfirmed: map[crdt.TxnID]int64{},
		applying: map[crdt.TxnID]int64{}, unrecorded: map[crdt.TxnID]int64{}, owed: map[crdt.TxnID]txnrec.Record{}, tokens: map[crdt.TxnID]store.Token{}}
	a.cyc.Ops = accountOps{a}
	return a, nil
}

// IsRecordKey reports whether key is the key of a transaction record
// (AccountOptions.RetryWindow) rather than of an account. Records share the
// ledger's key space (ledger.IsRecordKey): no Account key may start so.
func IsRecordKey(key string) bool { return txnrec.IsKey(key) }

// Key returns the account's key.
func (a *Account) Key() string { return a.key }

// Writer returns the id this account writes as: AccountOptions.Actor, "~",
// and its incarnation. Rights belong to it.
func (a *Account) Writer() crdt.ActorID { return a.writer }

// Pending reports whether the account's last write is not known to have
// landed.
func (a *Account) Pending() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cyc.Pending
}

// ErrClosed is returned by an Account after Close.
var ErrClosed = fmt.Errorf("%w: account closed", crdt.ErrInvalidConfig)

// Credit adds amount (> 0) under transaction txn. The rights it brings are
// this account's.
func (a *Account) Credit(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	if amount <= 0 {
		return Result{}, fmt.Errorf("%w: credit of %d; use a positive amount", crdt.ErrInvalidAmount, amount)
	}
	return a.update(ctx, txn, amount)
}

// Debit subtracts amount (> 0) under transaction txn, within this account's
// rights. A debit beyond them is refused with an *InsufficientRightsError
// and recorded as a request for the shortfall (Result.Requested), which
// holders of spare rights grant on their next write; retry it later with
// the same txn. A debit that goes through ends the request. The error's
// Available is what the account could debit when it refused; the call
// then grants as every call does (an account that asks gives to smaller
// requesters), so Result.Rights, what it may debit once the call ended,
// can be less.
func (a *Account) Debit(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	if amount <= 0 {
		return Result{}, fmt.Errorf("%w: debit of %d; use a positive amount", crdt.ErrInvalidAmount, amount)
	}
	return a.update(ctx, txn, -amount)
}

func (a *Account) update(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	if err := txn.Validate(); err != nil {
		return Result{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	defer clear(a.tokens)
	if err := a.flush(ctx); err != nil {
		return a.owedBefore(txn, err)
	}
	res, err := a.updateLocked(ctx, txn, amount)
	if errors.Is(err, errHeldBack) {
		// The cycle put the pending write alone, or had nothing to write;
		// once its records are written, the call runs again (SPEC.md 13.5).
		if ferr := a.flush(ctx); ferr == nil && !a.cyc.Pending {
			again, err := a.updateLocked(ctx, txn, amount)
			again.Attempts += res.Attempts
			return again, err
		}
	}
	return res, err
}

// errHeldBack is the error of a call held back (SPEC.md 13.5, "Records").
var errHeldBack = fmt.Errorf("%w: held back: this account's transactions not yet recorded fill its window", crdt.ErrUnavailable)

// updateLocked runs one cycle of a Credit or Debit (a.mu held).
func (a *Account) updateLocked(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	appliedHere, heldBack := false, false
	var refusal *InsufficientRightsError
	res, err := a.cycle(ctx, func(c *Counter) (bool, error) {
		refusal, heldBack = nil, false
		if known, err := c.Known(txn, amount); err != nil {
			return false, err
		} else if known {
			return false, a.vouch(ctx, c, txn, amount)
		}
		if known, err := a.lookup(ctx, txn, amount); (known || err != nil) && !brokenNoRecordLookup {
			return false, err
		}
		spendable := a.spendable(c)
		if amount < 0 && -amount > spendable {
			refusal = &InsufficientRightsError{Actor: a.writer, Amount: -amount, Available: max(0, spendable)}
			// Ask for the shortfall, unless the whole balance above the
			// bound is short of it: no one could grant that, and an
			// account that asks gives only to smaller requesters.
			short := -amount - max(0, spendable)
			if c.Value()-c.Bound()-max(0, spendable) < short {
				return false, nil
			}
			return c.Request(a.writer, short)
		}
		if a.unwritten() >= c.window() && !brokenNoHoldBack {
			// Applying would let the oldest of them leave this account's
			// window before its record is written (SPEC.md 13.5): the
			// cycle puts the pending write alone, if any.
			heldBack = true
			return false, nil
		}
		if _, err := c.Apply(a.writer, txn, amount); err != nil {
			return false, err
		}
		a.applying[txn] = amount
		appliedHere = true
		if amount < 0 {
			// A debit that went through needs nothing more.
			if _, err := c.Withdraw(a.writer); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if heldBack {
		return Result{Attempts: res.Attempts}, errHeldBack
	}
	if refusal != nil {
		res.Requested = a.cyc.Local.Outstanding(a.writer)
		if err != nil {
			return res, errors.Join(refusal, err)
		}
		return res, refusal
	}
	if err != nil && !appliedHere && (errors.Is(err, crdt.ErrUnavailable) || errors.Is(err, crdt.ErrAmbiguousWrite)) && a.stored(txn, amount) {
		// The transaction is in the store, by this account's landed write
		// or another actor's: only a resend failed, and the caller's
		// operation is done.
		res.Outcome, res.Landed = Duplicate, true
		if verr := a.vouch(ctx, a.cyc.Local, txn, amount); verr != nil {
			return res, fmt.Errorf("%w: %q landed, but its records could not be read: %w", crdt.ErrAmbiguousWrite, txn, verr)
		}
		if res, err = a.acknowledge(ctx, txn, res); err == nil {
			delete(a.unconfirmed, txn)
			res.Rights = a.rightsNow()
		}
		return res, err
	}
	if err != nil {
		if _, held := a.cyc.Local.Holds(a.writer, txn); held && a.cyc.Pending {
			// This account's write that holds txn may still land.
			if appliedHere {
				a.unconfirmed[txn] = amount
			}
			if errors.Is(err, crdt.ErrUnavailable) && !errors.Is(err, crdt.ErrAmbiguousWrite) {
				err = fmt.Errorf("%w: this account's pending write holds %q; the last attempt was refused (%v)", crdt.ErrAmbiguousWrite, txn, err)
			}
		}
		return res, err
	}
	res.Outcome = Duplicate
	if appliedHere {
		res.Outcome = Applied
	}
	if res, err = a.acknowledge(ctx, txn, res); err != nil {
		if appliedHere {
			a.unconfirmed[txn] = amount // in doubt to the caller: not spendable
		}
		return res, err
	}
	delete(a.unconfirmed, txn) // the caller now knows
	res.Rights = a.rightsNow()
	return res, nil
}

// rightsNow is Result.Rights at the end of a call that landed: the
// credits the call confirmed (its own, and those whose records it wrote)
// left the unconfirmed ones after step 5 computed it.
func (a *Account) rightsNow() int64 { return max(0, a.spendable(a.cyc.Local)) }

// unwritten is how many of this account's own transactions have no record
// yet: those in writes not known to have landed, and its owed records
// naming it.
func (a *Account) unwritten() int {
	n := len(a.unrecorded)
	for _, r := range a.owed {
		if r.Writer == a.writer {
			n++
		}
	}
	return n
}

// acknowledge writes the owed records after a call's cycle (SPEC.md 13.5,
// "Records"). The call is answered res unless txn's own record is among
// those still unwritten: then crdt.ErrAmbiguousWrite, landed, since a
// retry on an Account whose read lags behind the write would not find it.
func (a *Account) acknowledge(ctx context.Context, txn crdt.TxnID, res Result) (Result, error) {
	err := a.flush(ctx)
	if _, owed := a.owed[txn]; !owed {
		return res, nil
	}
	res.Landed = true
	return res, fmt.Errorf("%w: %q landed, but its record is not yet written: %w", crdt.ErrAmbiguousWrite, txn, err)
}

// owedBefore is the answer of a call that could not run because records
// of earlier writes could not be written (err, from flush): nothing is
// read or applied; crdt.ErrAmbiguousWrite as well when txn is one of them
// (it landed) or this account's writes hold it (an earlier call's copy,
// which may have landed).
func (a *Account) owedBefore(txn crdt.TxnID, err error) (Result, error) {
	res := Result{Attempts: 1}
	if _, owed := a.owed[txn]; owed {
		return res, fmt.Errorf("%w: %q landed, but its record is not yet written: %w", crdt.ErrAmbiguousWrite, txn, err)
	}
	if _, held := a.cyc.Local.Holds(a.writer, txn); held {
		return res, fmt.Errorf("%w: this account's writes hold %q: %w", crdt.ErrAmbiguousWrite, txn, err)
	}
	return res, err
}

// lookup reads txn's record key (SPEC.md 13.5, "Records"): a live record of
// txn (made within RetryWindow) with this amount makes the call known, one
// with another amount fails it with crdt.ErrConflictingTransaction. A
// record of another transaction (a hash collision) is passed over. With no
// live record the fetch's token is kept for txn's record Put.
func (a *Account) lookup(ctx context.Context, txn crdt.TxnID, amount int64) (bool, error) {
	recs, token, err := a.records(ctx, txn)
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		if r.Amount == amount {
			return true, nil
		}
	}
	if len(recs) > 0 {
		return false, fmt.Errorf("%w: transaction %q was recorded with amount %d, retried with %d", crdt.ErrConflictingTransaction, txn, recs[0].Amount, amount)
	}
	a.tokens[txn] = token
	return false, nil
}

// records returns the live records of txn (made within RetryWindow; a
// record of another transaction, a hash collision, is passed over) and the
// fetch's token.
func (a *Account) records(ctx context.Context, txn crdt.TxnID) ([]txnrec.Record, store.Token, error) {
	sibs, token, err := a.st.Fetch(ctx, txnrec.Key(a.key, txn))
	if err != nil {
		return nil, nil, fmt.Errorf("fetching the record of %q: %w", txn, err)
	}
	oldest := a.opts.Clock().Add(-a.opts.RetryWindow)
	var live []txnrec.Record
	for i, b := range sibs {
		r, err := txnrec.Decode(b)
		if err != nil {
			return nil, nil, fmt.Errorf("the record of %q, sibling %d of %d: %w", txn, i+1, len(sibs), err)
		}
		if r.Key != "" { // only a Sharded ledger's sub-ledger names a key
			return nil, nil, fmt.Errorf("%w: the record of %q names key %q: no Account writes one", crdt.ErrCorruptEncoding, txn, r.Key)
		}
		if r.Txn == txn && !r.At.Before(oldest) {
			live = append(live, r)
		}
	}
	return live, token, nil
}

// vouch makes sure that a call answered from another actor's copy in c,
// which is in the store, leaves a live record of txn (SPEC.md 13.5,
// "Records"): that actor may owe it (its call was answered
// ambiguous_write, or its process stopped), and an Account whose read lags
// behind the copy would find neither and apply txn again. With no live
// record, one naming that copy is owed, written before the call is
// acknowledged. This account's own copy counts only once landed: one in
// a write in doubt may never land.
func (a *Account) vouch(ctx context.Context, c *Counter, txn crdt.TxnID, amount int64) error {
	_, own := c.Holds(a.writer, txn)
	_, pending := a.unrecorded[txn] // own, in a write not known to have landed
	if _, owed := a.owed[txn]; owed || own && !pending {
		return nil // landed: its record is this account's (owed, or written)
	}
	var holder crdt.ActorID // the smallest other holder of this amount
	for _, h := range c.Holders(txn) {
		if h.Actor != a.writer && h.Amount == amount && (holder == "" || h.Actor < holder) {
			holder = h.Actor
		}
	}
	if holder == "" {
		return nil
	}
	recs, token, err := a.records(ctx, txn)
	if err != nil || len(recs) > 0 {
		return err
	}
	a.owed[txn] = txnrec.Record{Txn: txn, Amount: amount, Writer: holder, At: a.opts.Clock(), Version: max(c.entries[holder].seq, 1)}
	a.tokens[txn] = token
	return nil
}

// landed makes the records of the transactions this account applied in
// writes now known to have landed (c, its state) owed.
func (a *Account) landed(c *Counter) {
	version := uint64(1)
	if e := c.entries[a.writer]; e != nil {
		version = max(e.seq, 1)
	}
	now := a.opts.Clock()
	for _, m := range []map[crdt.TxnID]int64{a.unrecorded, a.applying} {
		for x, amount := range m {
			a.owed[x] = txnrec.Record{Txn: x, Amount: amount, Writer: a.writer, At: now, Version: version}
		}
		clear(m)
	}
}

// flush writes the owed records (SPEC.md 13.5): each with the token of its
// call's lookup when that found no live record. An owed record with no
// such token (an earlier call's) is fetched first: a live record of its
// amount makes it written already; with no live record its Put takes the
// fetch's token, superseding dead records (a store may refuse a Put past
// its siblings limit, as Riak does); else, or when the fetch fails, none.
// It fails, wrapping crdt.ErrUnavailable, while any remains unwritten.
func (a *Account) flush(ctx context.Context) error {
	for _, x := range slices.Sorted(maps.Keys(a.owed)) {
		if _, ok := a.tokens[x]; ok {
			continue
		}
		recs, token, err := a.records(ctx, x)
		switch {
		case err != nil: // a damaged record must not keep this one out
		case slices.ContainsFunc(recs, func(r txnrec.Record) bool { return r.Amount == a.owed[x].Amount }):
			delete(a.owed, x)
			a.confirmed(x)
		case len(recs) == 0:
			a.tokens[x] = token
		}
	}
	var errs []error
	for _, x := range slices.Sorted(maps.Keys(a.owed)) {
		b, err := a.owed[x].MarshalBinary()
		if err == nil {
			err = a.st.Put(ctx, txnrec.Key(a.key, x), a.writer, b, a.tokens[x])
		}
		delete(a.tokens, x) // a token serves one Put
		if err != nil {
			errs = append(errs, fmt.Errorf("%q: %w", x, err))
			continue
		}
		delete(a.owed, x)
		a.confirmed(x)
	}
	if len(errs) > 0 {
		// The Puts' own errors are details: an ambiguous record Put says
		// nothing of the caller's transaction.
		return fmt.Errorf("%w: bounded %q: %d transaction records of earlier writes not yet written: %v", crdt.ErrUnavailable, a.key, len(errs), errors.Join(errs...))
	}
	return nil
}

// confirmed takes txn, whose record is now written, out of the
// unconfirmed credits: a later call of txn on any Account is a duplicate
// by its record, so no retry will make another copy, and its rights are
// spendable as an acknowledged credit's are (SPEC.md 13.5). Else a caller
// that retried txn elsewhere, as it may, would leave them held back for
// good.
func (a *Account) confirmed(txn crdt.TxnID) { delete(a.unconfirmed, txn) }

// stored reports whether txn is known to be in the store with amount
// (signed): held so by another actor in a.cyc.Local, or by this account
// with no write pending. A copy of another amount is no answer: the call
// conflicts with it, which only a read can tell the caller.
func (a *Account) stored(txn crdt.TxnID, amount int64) bool {
	return slices.ContainsFunc(a.cyc.Local.Holders(txn), func(h Holder) bool {
		return h.Amount == amount && (h.Actor != a.writer || !a.cyc.Pending)
	})
}

// spendable is this account's rights in c less its unconfirmed credits,
// which it may have to take back.
func (a *Account) spendable(c *Counter) int64 {
	s := c.Rights(a.writer)
	for _, amt := range a.unconfirmed {
		if amt > 0 {
			s -= amt
		}
	}
	return s
}

// Transfer gives amount (> 0) of this account's rights to another actor
// (the Writer of another account), once per call, however many attempts
// it makes. It carries no transaction id: a call that fails
// crdt.ErrAmbiguousWrite may have given, and calling again gives again;
// Sync and Counter.Sent tell what was given.
func (a *Account) Transfer(ctx context.Context, to crdt.ActorID, amount int64) (Result, error) {
	if err := to.Validate(); err != nil {
		return Result{}, err
	}
	if amount <= 0 {
		return Result{}, fmt.Errorf("%w: transfer of %d", crdt.ErrInvalidAmount, amount)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.flush(ctx); err != nil {
		return Result{Attempts: 1}, err
	}
	before := int64(-1) // what this account had given to, before this call
	res, err := a.cycle(ctx, func(c *Counter) (bool, error) {
		if sent := c.Sent(a.writer, to); before < 0 {
			before = sent
		} else if sent != before {
			// An earlier attempt's transfer is in the state, in a write
			// in doubt: the cycle sends it again; made again, it would
			// give twice (a refused attempt's was taken back out).
			return false, nil
		}
		if s := a.spendable(c); s < amount {
			return false, &InsufficientRightsError{Actor: a.writer, Amount: amount, Available: max(0, s)}
		}
		return true, c.Transfer(a.writer, to, amount)
	})
	a.flush(ctx) // what is left is written before the next cycle
	if err == nil {
		res.Rights = a.rightsNow()
	}
	return res, err
}

// Sync reads and merges every sibling, settles, grants the requests it can
// and writes back if anything changed, there were several siblings or a
// write is pending; it returns a copy of the state. A holder that does
// nothing else should Sync now and then, so that requests are met.
func (a *Account) Sync(ctx context.Context) (*Counter, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.flush(ctx); err != nil {
		return nil, err
	}
	defer a.flush(ctx) // what is left is written before the next cycle
	var out *Counter
	_, err := a.cycle(ctx, func(c *Counter) (bool, error) {
		out = c
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return out.Clone(), nil
}

// Value returns the value of the merged siblings and this account's own
// writes, writing nothing. Accounts that could not see each other may
// credit past int64: Value then fails with crdt.ErrOverflow until debits
// bring it back (Sync's Counter gives it exactly; SPEC.md 13.5).
func (a *Account) Value(ctx context.Context) (int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, _, _, _, err := a.read(ctx)
	if err != nil {
		return 0, err
	}
	v, ok := c.value.Int64()
	if !ok {
		return 0, fmt.Errorf("%w: bounded %q: the value %s does not fit in int64", crdt.ErrOverflow, a.key, c.BigValue())
	}
	return v, nil
}

// Close withdraws this account's own request, gives every right it may
// spend to the outstanding requests its read shows, then to heir (when
// not empty), writes, and makes every later call fail with ErrClosed (a
// call with invalid input fails with its input's error first).
// Rights with no taker stay with this incarnation: with no heir, a request
// its read did not show (written at the same time, or hidden by a stale
// read) is never met from them (SPEC.md 13.5). An heir that is another
// live Account's Writer grants such requests later.
func (a *Account) Close(ctx context.Context, heir crdt.ActorID) (Result, error) {
	if heir != "" {
		if err := heir.Validate(); err != nil {
			return Result{}, err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.flush(ctx); err != nil {
		return Result{Attempts: 1}, err
	}
	keep := a.opts.Keep
	a.opts.Keep, a.closing = 0, true
	res, err := a.cycle(ctx, func(c *Counter) (bool, error) {
		// Its own request goes: rights granted to it after Close would
		// be stuck in an incarnation that never debits again.
		withdrawn, err := c.Withdraw(a.writer)
		if err != nil || heir == "" || heir == a.writer {
			return withdrawn, err // the cycle grants the requests
		}
		given, err := a.grant(c) // requests first
		if err != nil {
			return false, err
		}
		// The credits in doubt too (U): they are not spendable only so
		// that settling can take one back, and a closed account never
		// settles again.
		if rest := c.Rights(a.writer); rest > 0 {
			return true, c.Transfer(a.writer, heir, rest)
		}
		return withdrawn || given > 0, nil
	})
	a.opts.Keep, a.closing = keep, false
	if err == nil {
		// Records owed now would never be written: Close fails until they are.
		err = a.flush(ctx)
	}
	if err == nil {
		a.closed = true
	}
	return res, err
}

// read fetches the siblings and merges them into a.cyc.Local in place. It
// returns a.cyc.Local, the token, whether the store already holds all of
// it, and the number of siblings.
func (a *Account) read(ctx context.Context) (merged *Counter, token store.Token, storeHasAll bool, nsibs int, err error) {
	if a.closed {
		return nil, nil, false, 0, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, false, 0, err
	}
	if now := a.opts.Clock(); !now.After(time.Unix(0, 0)) || now.After(time.Unix(0, math.MaxInt64)) {
		// No record made now could be written (SPEC.md 13.5 "Records").
		return nil, nil, false, 0, fmt.Errorf("%w: bounded %q: the clock reads %v, outside 1970..2262 where transaction records are timed (AccountOptions.Clock)", crdt.ErrInvalidConfig, a.key, now)
	}
	sibs, token, err := a.st.Fetch(ctx, a.key)
	if err != nil {
		return nil, nil, false, 0, fmt.Errorf("bounded %q: fetch: %w", a.key, err)
	}
	pending := a.cyc.Pending
	if merged, storeHasAll, err = a.cyc.Read(sibs); err != nil {
		return nil, nil, false, 0, err
	}
	if pending && !a.cyc.Pending {
		a.landed(merged) // the store holds the write in doubt
	}
	return merged, token, storeHasAll, len(sibs), nil
}

type accountOps struct{ a *Account }

func (o accountOps) New() (*Counter, error) { return &Counter{o: o.a.opts.Counter}, nil }

// Absorb merges sibs into dst, recognising entries equal to dst's by their
// bytes; held reports whether every entry dst held is among them.
func (o accountOps) Absorb(dst *Counter, sibs [][]byte) (held bool, err error) {
	orig := maps.Clone(dst.entries)
	covered := make(map[crdt.ActorID]bool, len(orig))
	for i, b := range sibs {
		if err := dst.mergeEncoded(b, orig, covered); err != nil {
			dst.restore(orig)
			return false, fmt.Errorf("bounded %q: sibling %d of %d: %w", o.a.key, i+1, len(sibs), err)
		}
	}
	held = true
	for act := range orig {
		held = held && covered[act]
	}
	// States that each decode can still merge to one no decoder reads,
	// when an actor forked (wrote two states from one): refused here,
	// where it is read, rather than written for every other reader to
	// refuse. One sibling holding all dst held merged nothing new.
	if len(sibs) > 1 || !held {
		if err := dst.checkRights(); err != nil {
			dst.restore(orig) // else every later read of this Account merges into it
			return false, fmt.Errorf("bounded %q: the merge of %d siblings (an actor forked?): %w", o.a.key, len(sibs), err)
		}
	}
	return held, nil
}

// settle takes back every transaction this account holds that an actor
// with a smaller id also holds with the same amount, so that it counts
// once, by the smallest holder's copy (a credit whose rights it spent
// stays, and a debit whose return would take the value further past
// int64; copies of other amounts, a caller's reuse of an id, all count).
// It returns the transactions taken back.
func (a *Account) settle(c *Counter) ([]crdt.TxnID, error) {
	for x := range a.unconfirmed {
		if _, ok := c.Holds(a.writer, x); !ok {
			delete(a.unconfirmed, x) // taken back, or out of the window
		}
	}
	e := c.entries[a.writer]
	if e == nil {
		return nil, nil
	}
	var out []crdt.TxnID
	for _, t := range e.recent {
		if !c.anyHolder(t.ID, func(h crdt.ActorID, amount int64) bool {
			if h >= a.writer {
				return false // the smallest holder keeps its copy (no scan: the common case)
			}
			return amount == t.Amount
		}) {
			continue
		}
		if _, err := c.Retract(a.writer, t.ID); err != nil {
			// A credit whose rights it spent, or a debit whose return
			// would take the value further past int64, stays doubled.
			if errors.Is(err, crdt.ErrInsufficientRights) || errors.Is(err, crdt.ErrOverflow) {
				continue
			}
			return nil, fmt.Errorf("bounded %q: taking back %q: %w", a.key, t.ID, err)
		}
		out = append(out, t.ID)
	}
	return out, nil
}

// grant gives this account's spare rights beyond Keep to outstanding
// requests, in actor order, and returns what it gave. An account that asks
// too gives only to smaller requesters, so that rights never circle among
// requesters.
func (a *Account) grant(c *Counter) (int64, error) {
	spare := a.spendable(c) - a.opts.Keep
	asking := c.Outstanding(a.writer) > 0
	var given int64
	for _, r := range c.Requests() {
		if spare <= 0 || (asking && r.Actor >= a.writer) {
			break
		}
		if r.Actor == a.writer {
			continue
		}
		g := min(spare, r.Amount)
		if err := c.Transfer(a.writer, r.Actor, g); errors.Is(err, crdt.ErrOverflow) {
			continue // r's rights would pass int64 (a value past it): r debits first
		} else if errors.Is(err, crdt.ErrTooLarge) {
			continue // this writer gave to MaxActors others: r waits for another holder
		} else if err != nil {
			return given, err
		}
		spare -= g
		given += g
	}
	return given, nil
}

// cycle runs fetch, merge, settle, op, grant and put until the write is
// done: landed, nothing to write, or failed for good.
func (a *Account) cycle(ctx context.Context, op func(c *Counter) (bool, error)) (Result, error) {
	var res Result
	inDoubt := false // an attempt of this call may have landed
	defer clear(a.applying)
	for {
		res.Attempts++
		clear(a.applying)
		merged, token, storeHasAll, nsibs, err := a.read(ctx)
		if err != nil {
			if inDoubt {
				// The call's context ended, or the read failed, after
				// an attempt that may have landed: still ambiguous.
				err = retry.InDoubt(err, "an earlier attempt's write")
			}
			return res, err
		}
		prev := merged.entries[a.writer]
		undo := func() {
			a.cyc.Undo(merged, func(c *Counter) (bool, error) {
				if c.entries[a.writer] == prev {
					return false, nil
				}
				c.install(a.writer, prev)
				return true, nil
			})
		}
		var changed bool
		var given int64
		var b []byte
		settled, err := a.settle(merged)
		if err == nil {
			changed, err = op(merged)
		}
		if err == nil {
			granting := merged.entries[a.writer] // grants change only this entry
			if given, err = a.grant(merged); err == nil && given > 0 && !a.closing {
				if b, err = merged.MarshalBinary(); err == nil && len(b) > store.MaxValue {
					// The grants would make the state larger than a store
					// takes (a key near its limit): write without them, so
					// that this call lands; the requests wait (SPEC.md 13.5).
					// Not Close's: its rights would stay with no taker.
					merged.install(a.writer, granting)
					given, b = 0, nil
				}
			}
		}
		if err != nil {
			undo()
			return res, fmt.Errorf("bounded %q: %w", a.key, err)
		}
		res.Value, res.Rights, res.Granted = merged.Value(), max(0, a.spendable(merged)), given
		// Nothing to write: no change, no pending write, and the store
		// holds one sibling that already has everything merged holds.
		if len(settled) == 0 && !changed && given == 0 && !a.cyc.Pending && nsibs <= 1 && storeHasAll {
			res.Landed = true
			return res, nil
		}
		if b == nil {
			if b, err = merged.MarshalBinary(); err != nil {
				undo()
				return res, err
			}
		}
		err = a.st.Put(ctx, a.key, a.writer, b, token)
		switch retry.Classify(err) {
		case retry.Landed:
			a.cyc.Landed(merged, b)
			a.landed(merged)
			a.settled(settled)
			res.Landed = true
			return res, nil
		case retry.Invalid, retry.Refused:
			// This account's entry goes back to its last write.
			invalid := retry.Classify(err) == retry.Invalid
			undo()
			if inDoubt {
				// An earlier attempt of this call may have landed.
				err = retry.InDoubt(err, "an earlier attempt's write")
			}
			if invalid {
				return res, fmt.Errorf("bounded %q: put: %w", a.key, err)
			}
		default:
			// Ambiguous, or an error the store did not classify: kept
			// pending (retry.Cycle).
			inDoubt = true
			a.cyc.Ambiguous(merged)
			maps.Copy(a.unrecorded, a.applying)
			a.settled(settled)
			err = retry.AmbiguousErr(err)
		}
		if err := retry.Again(ctx, fmt.Sprintf("bounded %q: put", a.key), err, res.Attempts, a.opts.RetryCount, a.opts.Backoff.Initial, a.opts.Backoff.Max); err != nil {
			return res, err
		}
	}
}

func (a *Account) settled(txns []crdt.TxnID) {
	for _, x := range txns {
		delete(a.unconfirmed, x)
	}
}
