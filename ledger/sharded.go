package ledger

import (
	"context"
	"errors"
	"fmt"
	"github.com/counterkit/counterkit/observe"
	"hash/fnv"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// MaxShards is the largest number of sub-keys of a Sharded account.
const MaxShards = 1024

// shardedMarkerPrefix starts the layout marker stored under the account key
// itself; the number of sub-keys follows in decimal.
const shardedMarkerPrefix = "counterkit.ledger.sharded/1 shards="

// Sharded is one account's balance spread over n sub-keys, each
// stored as a plain Ledger key, so that many concurrent actors credit and
// debit it without all reading and rewriting one key. Write a sub-key only
// through a Sharded: a plain Ledger opened on one keeps its records under
// its own key, so it does not recognise a retry the Sharded recorded.
//
// A transaction belongs to the sub-key ShardOf(txn, n): every attempt and
// every retry of it, by any actor in any process, goes to that sub-key and
// is recognised there exactly as on a plain Ledger, with the same outcomes
// and within the same RetryWindow (its record is the account's, SPEC.md
// 6.11).
//
// The sub-keys are account/0 … account/n-1; a marker under the account key
// fixes n for the account's lifetime (SPEC.md 6.12: the layout, the
// refusals, crdt.ErrInvalidConfig, and what racing first uses, or a
// refused one's marker landing late, can do).
//
// Cost: a credit reads and writes one sub-key, whose state holds an entry
// for every incarnation that wrote there: sharding divides the writes per
// key, not the entries, so a process's goroutines should share one Sharded
// (BenchmarkHotAccount). On a store with the Partitions shape, a hot
// account belongs on balance.Transactions, whose credit does not grow with
// the writers.
//
// Sub-ledgers are created lazily, each with its own incarnation (Writer).
// A Sharded is safe for concurrent use (sub-keys in parallel); create one
// per account and actor when the process starts and reuse it.
type Sharded struct {
	store   store.Siblings
	account string
	n       int
	opts    Options // validated by New; Backoff normalised as New does
	marker  []byte

	subs []atomic.Pointer[Ledger]

	layoutMu sync.Mutex
	layoutOK atomic.Bool // the marker was seen or written by this value
	// recheck is when (Options.Clock; nil: now) a write next reads the
	// marker again (see layout); failed counts the sub-key writes that
	// failed, each clearing it, and voiding a check it overlaps.
	recheck atomic.Pointer[time.Time]
	failed  atomic.Uint64
	// width is the number of sub-keys Value sums: the largest n the
	// account's markers name (at least n); others, the other n they name
	// (two first uses raced), ascending; both under layoutMu.
	width  int
	others []int
}

// NewSharded returns a ledger spreading account over n
// sub-keys of st (1 ≤ n ≤ MaxShards), writing as opts.Actor. It does no
// I/O: the first operation reads the account's layout marker, and writes it
// when the account is new. Errors wrap crdt.ErrInvalidConfig,
// crdt.ErrInvalidKey or crdt.ErrInvalidActor, as New's do.
func NewSharded(st store.Siblings, account string, n int, opts Options) (*Sharded, error) {
	if n < 1 || n > MaxShards {
		return nil, fmt.Errorf("%w: %d shards, outside 1..%d (MaxShards)", crdt.ErrInvalidConfig, n, MaxShards)
	}
	if err := checkKey("account", account); err != nil {
		return nil, err
	}
	// The longest sub-key must be a valid key; New validates the rest.
	l, err := New(st, shardKey(account, n-1), opts)
	if err != nil {
		return nil, err
	}
	s := &Sharded{store: st, account: account, n: n, opts: l.opts, width: n,
		marker: []byte(shardedMarkerPrefix + strconv.Itoa(n)),
		subs:   make([]atomic.Pointer[Ledger], n)}
	return s, nil
}

// ShardOf returns the shard of transaction txn in an account of n shards:
// the 64-bit FNV-1a hash of the id's bytes modulo n (SPEC.md 6.12), the
// same in every process and version. It panics if n < 1.
func ShardOf(txn crdt.TxnID, n int) int {
	if n < 1 {
		panic("ledger.ShardOf: n < 1")
	}
	h := fnv.New64a()
	h.Write([]byte(txn))
	return int(h.Sum64() % uint64(n))
}

// ShardedAccount reports whether key has the form of a Sharded account's
// sub-key, account/i with i in 0..MaxShards−1 in decimal without leading
// zeros (SPEC.md 6.12, whatever the layout), and returns the account, the
// key that holds its records.
func ShardedAccount(key string) (account string, ok bool) {
	j := strings.LastIndexByte(key, '/')
	if j <= 0 { // no slash, or no account before it
		return "", false
	}
	i := key[j+1:]
	n, err := strconv.Atoi(i)
	if err != nil || n < 0 || n >= MaxShards || strconv.Itoa(n) != i {
		return "", false
	}
	return key[:j], true
}

// shardKey is the key of shard i of account.
func shardKey(account string, i int) string { return account + "/" + strconv.Itoa(i) }

// Account returns the account key, which holds the layout marker.
func (s *Sharded) Account() string { return s.account }

// Shards returns n, the number of sub-keys.
func (s *Sharded) Shards() int { return s.n }

// Shard returns the shard of txn (ShardOf(txn, Shards())).
func (s *Sharded) Shard(txn crdt.TxnID) int { return s.route(txn) }

// Key returns the key of shard i: the account, "/", and i in decimal.
func (s *Sharded) Key(i int) string { return shardKey(s.account, i) }

// Actor returns Options.Actor.
func (s *Sharded) Actor() crdt.ActorID { return s.opts.Actor }

// sub returns the ledger of shard i, creating it on first use.
func (s *Sharded) sub(i int) *Ledger {
	if l := s.subs[i].Load(); l != nil {
		return l
	}
	l, err := New(s.store, s.Key(i), s.opts)
	if err != nil {
		panic(fmt.Sprintf("ledger: options validated by NewSharded refused: %v", err))
	}
	l.indexBase = s.account // a retry is recognised whatever sub-key it reaches
	if s.subs[i].CompareAndSwap(nil, l) {
		return l
	}
	return s.subs[i].Load() // another goroutine's; l never wrote
}

// Writer returns the incarnation this Sharded writes on txn's sub-key, as
// Result.Owner.Actor names it. It does no I/O. Owner does not pick one
// caller to run a side effect (package documentation, "Side effects").
func (s *Sharded) Writer(txn crdt.TxnID) crdt.ActorID { return s.sub(s.route(txn)).Writer() }

// Pending reports whether a sub-ledger holds a write in doubt (see
// Ledger.Pending); Land, FindAll, or the next write to that sub-key, lands
// it.
func (s *Sharded) Pending() bool {
	for i := range s.subs {
		if l := s.subs[i].Load(); l != nil && l.Pending() {
			return true
		}
	}
	return false
}

// Credit adds amount (> 0) under transaction txn on txn's sub-key.
func (s *Sharded) Credit(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	if err := positive("credit", amount); err != nil {
		return Result{}, refused(ctx, s.opts.Observer, err)
	}
	return s.Update(ctx, txn, amount)
}

// Debit subtracts amount (> 0) under transaction txn on txn's sub-key.
func (s *Sharded) Debit(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	if err := positive("debit", amount); err != nil {
		return Result{}, refused(ctx, s.opts.Observer, err)
	}
	return s.Update(ctx, txn, -amount)
}

// Update is Ledger.Update on txn's sub-key (Result.Value is that
// sub-key's); a layout it may not write is refused with
// crdt.ErrInvalidConfig (see Sharded). What Update refuses whatever the
// store holds (an invalid id or amount, an id TxnTime refuses) is refused
// before the layout is read or written. On an account whose markers name
// other layouts (two first uses raced), it first reads txn's sub-key under
// each, and a state there that holds txn answers the call (SPEC.md 6.12).
func (s *Sharded) Update(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	// One operation per call, begun before the layout marker's store
	// calls so that they nest in it; the sub-key's ledger runs the cycle
	// in it and ends it (run).
	ctx, op := observe.Start(ctx, s.opts.Observer, "ledger", "update")
	l := s.sub(s.route(txn))
	if err := l.checkCall(txn, amount); err != nil {
		op.End(refusal(err))
		return Result{}, err
	}
	handed := false
	defer func() {
		if !handed {
			op.End(panickedWrite) // a panic before run; else a no-op
		}
	}()
	if err := s.layout(ctx, false); err != nil {
		op.End(refusal(err))
		return Result{}, err
	}
	if r, ok, err := s.elsewhere(ctx, txn, amount); ok || err != nil {
		return answered(&op, r, err)
	}
	handed = true
	r, err := l.run(call{ctx: ctx, txn: txn, amount: amount, op: op})
	return r, s.wrote(err)
}

// answered ends op, an update that elsewhere answered, and returns r and
// err.
func answered(op *observe.Operation, r Result, err error) (Result, error) {
	if err != nil {
		op.End(refusal(err))
		return Result{}, err
	}
	op.End(observe.Event{Outcome: outcomeName(r.Outcome), Attempts: 1})
	return r, nil
}

// elsewhere answers a write of txn from txn's sub-key under each other n
// the markers name (two first uses raced, SPEC.md 6.12), read in order of
// n, when its state holds txn: a copy the smaller layout landed but has
// not recorded yet. ok is false when none does (the write goes on).
func (s *Sharded) elsewhere(ctx context.Context, txn crdt.TxnID, amount int64) (r Result, ok bool, err error) {
	merged, err := s.heldElsewhere(ctx, txn)
	if merged == nil || err != nil {
		return Result{}, false, err
	}
	out, owner, err := merged.Known(txn, amount)
	if err == nil && out == 0 {
		return Result{}, false, nil
	}
	return Result{Outcome: out, Owner: owner, Attempts: 1, Landed: err == nil, Value: merged.Value()}, err == nil, err
}

// heldElsewhere returns the state of txn's sub-key under the first other
// n the markers name (in order of n) that holds txn, or nil. Its reads are
// part of the caller's operation, reported by none of their own.
func (s *Sharded) heldElsewhere(ctx context.Context, txn crdt.TxnID) (*tpncounter.Counter, error) {
	s.layoutMu.Lock()
	others := s.others
	s.layoutMu.Unlock()
	own := s.route(txn)
	for _, n := range others {
		i := ShardOf(txn, n)
		if i == own {
			continue
		}
		l := s.reader(i)
		l.mu.Lock()
		merged, err := l.readView(ctx, false)
		if err == nil && merged.Status(txn) == tpncounter.Unknown {
			merged = nil
		}
		l.mu.Unlock()
		if err != nil || merged != nil {
			return merged, err
		}
	}
	return nil, nil
}

// wrote passes on a sub-key write's error; a failure voids the trust.
func (s *Sharded) wrote(err error) error {
	if errors.Is(err, crdt.ErrUnavailable) || errors.Is(err, crdt.ErrAmbiguousWrite) {
		s.failed.Add(1)
		s.recheck.Store(nil)
	}
	return err
}

// HasTransaction is Ledger.HasTransaction on txn's sub-key, and, after two
// layouts raced, on its sub-key under each other n, as a write reads them.
func (s *Sharded) HasTransaction(ctx context.Context, txn crdt.TxnID) (bool, error) {
	ctx, op := observe.Start(ctx, s.opts.Observer, "ledger", "read")
	if err := txn.Validate(); err != nil {
		op.End(refusal(err))
		return false, err
	}
	defer op.End(panickedRead)
	if err := s.layout(ctx, false); err != nil {
		op.End(refusal(err))
		return false, err
	}
	has, e, err := s.sub(s.route(txn)).has(ctx, txn, op.Observed())
	if !has && err == nil {
		var other *tpncounter.Counter
		other, err = s.heldElsewhere(ctx, txn)
		has = other != nil
		failed(&e, err)
	}
	op.End(e)
	return has, err
}

// failed sets e, the event of an operation that went on to fail with err
// (nil: nothing), to report err: a read refused counts.
func failed(e *observe.Event, err error) {
	if err == nil {
		return
	}
	e.Err, e.Outcome = err, observe.OutcomeOf(err)
	if retry.Classify(err) == retry.Refused {
		e.Refused++
	}
}

// Find runs Ledger.Find on txn's sub-key and returns its counter, whose
// Status, Owner and Conflicts describe txn (its Value is the sub-key's);
// after two layouts raced, the state of txn's sub-key under another n
// that holds txn when its own does not, as a write reads them.
func (s *Sharded) Find(ctx context.Context, txn crdt.TxnID) (*tpncounter.Counter, error) {
	ctx, op := observe.Start(ctx, s.opts.Observer, "ledger", "find")
	if err := txn.Validate(); err != nil {
		op.End(refusal(err))
		return nil, err
	}
	defer op.End(panickedWrite)
	if err := s.layout(ctx, false); err != nil {
		op.End(refusal(err))
		return nil, err
	}
	c, e, err := s.sub(s.route(txn)).findEvent(ctx, op.Observed())
	if err != nil || c.Status(txn) != tpncounter.Unknown {
		op.End(e)
		return c, s.wrote(err)
	}
	other, err := s.heldElsewhere(ctx, txn)
	failed(&e, err)
	op.End(e)
	if other != nil || err != nil {
		return other, err
	}
	return c, nil
}

// FindAll runs Ledger.Find on every sub-key, in order, collapsing their
// siblings and landing this Sharded's pending writes, and returns the n
// counters. It stops at the first error. The Observer sees one event per
// sub-key found; the layout marker's read is in sub-key 0's.
func (s *Sharded) FindAll(ctx context.Context) ([]*tpncounter.Counter, error) {
	ctx0, op0 := observe.Start(ctx, s.opts.Observer, "ledger", "find")
	defer op0.End(panickedWrite)
	if err := s.layout(ctx0, false); err != nil {
		op0.End(refusal(err))
		return nil, err
	}
	out := make([]*tpncounter.Counter, s.n)
	for i := range out {
		c, err := s.findSub(ctx, ctx0, &op0, i)
		if err != nil {
			return nil, s.wrote(err)
		}
		out[i] = c
	}
	return out, nil
}

// findSub runs Ledger.Find on sub-key i: in op0, begun in ctx0, for
// sub-key 0; in an operation of its own for the others.
func (s *Sharded) findSub(ctx, ctx0 context.Context, op0 *observe.Operation, i int) (*tpncounter.Counter, error) {
	op := op0
	if i == 0 {
		ctx = ctx0
	} else {
		var opi observe.Operation
		ctx, opi = observe.Start(ctx, s.opts.Observer, "ledger", "find")
		op = &opi
	}
	defer op.End(panickedWrite)
	c, e, err := s.sub(i).findEvent(ctx, op.Observed())
	op.End(e)
	return c, err
}

// Value returns the account's value: the sum of the sub-keys' values, each
// read as Ledger.Value reads, concurrently, after the layout marker (an
// account whose marker names another n is refused). It writes nothing.
// The Observer sees one read per sub-key; the marker's is in sub-key 0's.
//
// The sum is not a snapshot: each sub-key is read at its own moment. Each
// transaction counts fully or not at all, and every one acknowledged before
// the call counts; but of those landing during the call, one may count
// while an earlier one on a sub-key read sooner does not. The sum may be a
// balance the account never held, which a check such as "debit only if the
// balance covers it" must allow for.
func (s *Sharded) Value(ctx context.Context) (int64, error) {
	ctx0, op0 := observe.Start(ctx, s.opts.Observer, "ledger", "read")
	defer op0.End(panickedRead)
	if err := s.layout(ctx0, true); err != nil {
		op0.End(refusal(err))
		return 0, err
	}
	s.layoutMu.Lock()
	width := s.width
	s.layoutMu.Unlock()
	vals := make([]*big.Int, width)
	errs := make([]error, width)
	each(width, func(i int) { vals[i], errs[i] = s.readSub(ctx, ctx0, &op0, i) }) // each runs 0 on this goroutine
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	sum := new(big.Int)
	for _, v := range vals {
		sum.Add(sum, v)
	}
	if !sum.IsInt64() {
		return 0, fmt.Errorf("%w: account %q: the sum of its sub-keys, %s, does not fit in int64", crdt.ErrOverflow, s.account, sum)
	}
	return sum.Int64(), nil
}

// readSub reads sub-key i's exact value as Value does: in op0, begun in
// ctx0, for sub-key 0; in an operation of its own for the others.
func (s *Sharded) readSub(ctx, ctx0 context.Context, op0 *observe.Operation, i int) (*big.Int, error) {
	op := op0
	if i == 0 {
		ctx = ctx0
	} else {
		var opi observe.Operation
		ctx, opi = observe.Start(ctx, s.opts.Observer, "ledger", "read")
		op = &opi
	}
	defer op.End(panickedRead)
	v, e, err := s.reader(i).exactValue(ctx, op.Observed(), false)
	op.End(e)
	return v, err
}

// reader returns a ledger that reads sub-key i: this Sharded's sub-ledger,
// or, past n (markers naming a larger n), a fresh one that never writes.
func (s *Sharded) reader(i int) *Ledger {
	if i < s.n {
		return s.sub(i)
	}
	l, err := New(s.store, s.Key(i), s.opts)
	if err != nil {
		panic(fmt.Sprintf("ledger: options validated by NewSharded refused: %v", err))
	}
	return l
}

// layoutRecheck is how long a write trusts the layout it checked (see
// Sharded): a read of the account key a second, beside many credits.
const layoutRecheck = time.Second

// layout checks the account's marker (SPEC.md 6.12): for a write unless
// trusted (recheck), writing it on a new account; for a read (again) every
// time, writing nothing.
func (s *Sharded) layout(ctx context.Context, again bool) (err error) {
	trusted := func() bool {
		until := s.recheck.Load()
		return !again && s.layoutOK.Load() && until != nil && s.opts.Clock().Before(*until)
	}
	if trusted() {
		return nil
	}
	s.layoutMu.Lock()
	defer s.layoutMu.Unlock()
	if trusted() {
		return nil
	}
	failed := s.failed.Load() // a write failing during the read voids it
	doubt := false            // a marker Put may have landed: every error says so
	defer func() {
		if doubt && !errors.Is(err, crdt.ErrInvalidConfig) {
			err = retry.InDoubt(err, "the layout marker's write")
		}
	}()
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		vals, token, err := s.store.Fetch(ctx, s.account)
		if err != nil {
			return fmt.Errorf("sharded ledger %q: fetch layout: %w", s.account, err)
		}
		ns, err := s.checkMarkers(vals)
		if err != nil {
			return err
		}
		if len(ns) > 0 {
			largest, named := slices.Max(ns), slices.Contains(ns, s.n)
			switch {
			case !named:
				return fmt.Errorf("%w: account %q is sharded over %v sub-keys, not %d; the number of shards is fixed for an account's lifetime", crdt.ErrInvalidConfig, s.account, ns, s.n)
			case !again && largest != s.n:
				_ = s.Land(ctx) // refused, callers go elsewhere: what this n holds in doubt lands first
				return fmt.Errorf("%w: account %q was given the layouts %v concurrently; only %d may write or look up transactions, and Value reads for every n", crdt.ErrInvalidConfig, s.account, ns, largest)
			}
			s.width = max(largest, s.n)
			s.others = slices.DeleteFunc(slices.Sorted(slices.Values(ns)), func(m int) bool { return m == s.n })
		} else if !again && !s.layoutOK.Load() {
			// (A read writes nothing; seen before, absent now is a stale
			// replica, with nothing to refuse.)
			switch err = s.store.Put(ctx, s.account, markerActor(s.opts.Actor, s.n), s.marker, token); retry.Classify(err) {
			case retry.Invalid:
				return fmt.Errorf("sharded ledger %q: put layout: %w", s.account, err)
			case retry.Ambiguous: // or an error the store did not classify
				err, doubt = retry.AmbiguousErr(err), true
				fallthrough
			case retry.Refused:
				if err := retry.Again(ctx, fmt.Sprintf("sharded ledger %q: put layout", s.account), err, attempt, s.opts.RetryCount, s.opts.Backoff.Initial, s.opts.Backoff.Max); err != nil {
					return err
				}
				continue
			}
		}
		if !again {
			s.layoutOK.Store(true)
			until := s.opts.Clock().Add(layoutRecheck)
			if s.recheck.Store(&until); s.failed.Load() != failed {
				s.recheck.Store(nil)
			}
		}
		return nil
	}
}

// markerActor is the actor the layout marker of n shards is put as:
// actor, "~n" and n (SPEC.md 6.12). One per n, so that two processes of
// one actor racing first uses with different n keep both markers on a
// store that keeps one value per actor (10.1); an incarnation id has 8
// characters after its "~".
func markerActor(actor crdt.ActorID, n int) crdt.ActorID {
	return actor + "~n" + crdt.ActorID(strconv.Itoa(n))
}

// Land runs Ledger.Land on every sub-ledger that holds anything unwritten
// (a write in doubt, an owed record, a take-out: see Ledger.Land) and
// returns their errors, joined. Call it on a timer, and once when the
// service stops.
func (s *Sharded) Land(ctx context.Context) error {
	var errs []error
	for i := range s.subs {
		if l := s.subs[i].Load(); l != nil {
			if unwritten, _ := l.holding(); unwritten {
				if err := l.Land(ctx); err != nil {
					errs = append(errs, fmt.Errorf("sub-key %d: %w", i, err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// LayoutMarker reports whether a value stored under a key is the layout
// marker of a Sharded account (SPEC.md 6.12) and, if so, its number of
// sub-keys. A plain Ledger refuses the marker as crdt.ErrCorruptEncoding;
// a tool that repairs plain ledger keys must leave it alone.
func LayoutMarker(value []byte) (shards int, ok bool) {
	t, ok := strings.CutPrefix(string(value), shardedMarkerPrefix)
	n, err := strconv.Atoi(t)
	if !ok || err != nil || n < 1 || n > MaxShards || strconv.Itoa(n) != t {
		return 0, false
	}
	return n, true
}

// checkMarkers returns the n the account key's siblings name, or refuses.
func (s *Sharded) checkMarkers(vals [][]byte) ([]int, error) {
	var ns []int
	for _, v := range vals {
		n, ok := LayoutMarker(v)
		if !ok {
			return nil, fmt.Errorf("%w: account %q holds something other than a sharded ledger's layout (a plain ledger?); it cannot be sharded", crdt.ErrInvalidConfig, s.account)
		}
		if !slices.Contains(ns, n) {
			ns = append(ns, n)
		}
	}
	return ns, nil
}
