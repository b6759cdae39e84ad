package ledger

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/txnrec"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// The transaction index (SPEC.md 6.11): every transaction a ledger lands is
// recorded under a key of its own (amount, writer, when), so that a later
// call on any ledger of the account finds it with one fetch, however many
// transactions came since. A ledger records a transaction after the write
// that landed it and before its next write, the only one that could fold
// it out of the counter; a record not written is kept (unindexed) for the
// next cycle, and a retirement first records what the retired entry holds.

// DefaultRetryWindow is Options.RetryWindow when it is zero.
const DefaultRetryWindow = 24 * time.Hour

// MaxRetryWindow is the largest Options.RetryWindow.
const MaxRetryWindow = 400 * 24 * time.Hour

// Record is a transaction record: Txn was applied with Amount (negative
// for a debit) by Writer, first at At, and Writer's entry held it at
// Version (tpncounter.Counter.Version) in the state that landed it. It is
// stored under RecordKey of the account and the transaction. Key, when
// set, is the key whose state holds Writer's entry (format version 2:
// what a Sharded's sub-ledger writes, since its records are the
// account's, and a ledger whose records store lists its keys, for the
// sweep); "" (version 1) names no key: every reader takes the record as
// its own key's.
type Record = txnrec.Record

// RecordKey is the store key of txn's record for account: a fixed prefix
// and a hash of both (SPEC.md 6.11), a valid key of 47 bytes whatever
// their lengths.
func RecordKey(account string, txn crdt.TxnID) string { return txnrec.Key(account, txn) }

// RecordKeyPrefix starts every transaction record's key (RecordKey).
const RecordKeyPrefix = txnrec.Prefix

// IsRecordKey reports whether key is the key of a transaction record (see
// Options.RetryWindow) rather than of a ledger: what a tool listing a
// store's keys, or a test injecting faults into the counter's calls alone,
// tells apart. No ledger, Book or Sharded account may use such a key.
func IsRecordKey(key string) bool { return txnrec.IsKey(key) }

// checkKey refuses (crdt.ErrInvalidKey) an invalid key and one in the
// records' space, whose writes would take a record's place (SPEC.md 6.11),
// or in the stored sightings' (6.9).
func checkKey(what, key string) error {
	if err := crdt.ValidateKey(what, key); err != nil {
		return err
	}
	if IsRecordKey(key) {
		return fmt.Errorf("%w: %s %q starts with %q, which only transaction records use", crdt.ErrInvalidKey, what, key, txnrec.Prefix)
	}
	if IsSeenKey(key) {
		return fmt.Errorf("%w: %s %q starts with %q, which only stored sightings use", crdt.ErrInvalidKey, what, key, SeenKeyPrefix)
	}
	return nil
}

// indexed is what the index knows of a transaction: the records of it still
// inside the retry window, of copies in this ledger's key (records) and in
// another key of its Sharded account (elsewhere: two layouts raced, SPEC.md
// 6.12), and the token of the fetch that read them. Only records are
// judged against the key's state; both answer a call (judge). old holds
// this key's records from before the retry window, which date an idle
// writer (lastApplied) and answer no call.
type indexed struct {
	records, elsewhere, old []Record
	token                   store.Token
}

// match returns the record with amount, if any, of this key first.
func (x indexed) match(amount int64) (Record, bool) {
	for _, rs := range [2][]Record{x.records, x.elsewhere} {
		for _, r := range rs {
			if r.Amount == amount {
				return r, true
			}
		}
	}
	return Record{}, false
}

// lookup reads txn's records inside the retry window at now (all of a timed
// transaction whose time is inside it, whatever the writers' clocks),
// passing over another transaction's (a hash collision) or older ones.
func (l *Ledger) lookup(ctx context.Context, txn crdt.TxnID, now time.Time) (indexed, error) {
	sibs, token, err := l.records.Fetch(ctx, RecordKey(l.indexBase, txn))
	if err != nil {
		return indexed{}, fmt.Errorf("ledger %q: reading the record of %q: %w", l.key, txn, err)
	}
	x := indexed{token: token}
	oldest := now.Add(-l.opts.RetryWindow).UnixNano()
	if at, ok := l.txnTime(txn); ok && at.UnixNano() >= oldest {
		oldest = math.MinInt64
	}
	for i, b := range sibs {
		r, err := txnrec.Decode(b)
		if err != nil {
			return indexed{}, fmt.Errorf("ledger %q: record of %q, sibling %d of %d: %w", l.key, txn, i+1, len(sibs), err)
		}
		switch {
		case r.Txn != txn:
		case r.At.UnixNano() < oldest:
			if r.Key == "" || r.Key == l.key {
				x.old = append(x.old, r)
			}
		case r.Key != "" && r.Key != l.key:
			if !l.sameAccount(r.Key) {
				return indexed{}, fmt.Errorf("%w: ledger %q: record of %q, sibling %d of %d, names key %q, not a sub-key of this account: no writer makes it",
					crdt.ErrCorruptEncoding, l.key, txn, i+1, len(sibs), r.Key)
			}
			x.elsewhere = append(x.elsewhere, r)
		default:
			x.records = append(x.records, r)
		}
	}
	return x, nil
}

// sameAccount reports whether key is another sub-key of the Sharded
// account this ledger's key is a sub-key of (account/i, i in
// 0..MaxShards−1, whatever layout): the only other key a record under this
// account's record keys can name (SPEC.md 6.11). A plain ledger has none.
func (l *Ledger) sameAccount(key string) bool {
	account, ok := ShardedAccount(key)
	return ok && l.indexBase != l.key && account == l.indexBase
}

// lookupAll reads, at once, the records of the calls whose transaction
// fetched does not hold and judges each (Ledger.judge), setting its known
// record and token, or its error. A failed read fails the attempt.
func (l *Ledger) lookupAll(ctx context.Context, fetched *tpncounter.Counter, calls []*call) error {
	now := l.now()
	var todo []*call
	for _, c := range calls {
		c.known, c.itoken = nil, nil
		if fetched.Status(c.txn) == tpncounter.Unknown {
			todo = append(todo, c)
		}
	}
	xs := make([]indexed, len(todo))
	errs := make([]error, len(todo))
	each(len(todo), func(i int) { xs[i], errs[i] = l.lookup(ctx, todo[i].txn, now) })
	for i, c := range todo {
		if errs[i] != nil {
			if errors.Is(errs[i], crdt.ErrCorruptEncoding) {
				c.err = errs[i] // this transaction's record alone is damaged
				continue
			}
			return errs[i]
		}
		if brokenCountWindow {
			xs[i] = indexed{token: xs[i].token} // broken: no call reads its records
		}
		c.itoken = xs[i].putToken()
		c.known, c.err = l.judge(xs[i], c.txn, c.amount, now)
	}
	return nil
}

// each calls fn(0) on this goroutine and fn(1) .. fn(n-1) concurrently, and
// returns when all have returned (also when fn(0) panics).
func each(n int, fn func(i int)) {
	if n == 1 { // the common case, without the WaitGroup's allocation
		fn(0)
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := 1; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); fn(i) }()
	}
	if n > 0 {
		fn(0)
	}
}

// pendingRecord is a record to write, with the token of the lookup that
// found none (nil if unknown); confirm: a landed transaction's, confirmed
// first when it names this writer (record); judge: the state in which it
// names another writer's copy, checked first; gives: it gives ours up.
type pendingRecord struct {
	rec     Record
	token   store.Token
	confirm bool
	judge   *tpncounter.Counter
	gives   bool
}

// record writes recs (SPEC.md 6.11 steps 3 and 6), keeping those that
// failed in l.unindexed; the reads, then the puts, run at once. One naming
// this ledger's writer is confirmed first: written with its key's read's
// token unless the records of its amount name only other writers (settle).
// owners[i] is set when recs[i]'s copy defers to another writer's: watched,
// or, counted there, taken out and written back at once; a copy given up
// is taken out once its record is written. One with judge names the writer
// judgeCopies finds counted a late copy instead (a stale judgement fails
// it, unless owed: confirm). l.mu is held.
func (l *Ledger) record(ctx context.Context, recs []pendingRecord) (errs []error, owners []*tpncounter.Copy) {
	if len(recs) == 0 {
		return nil, nil
	}
	errs, owners = make([]error, len(recs)), make([]*tpncounter.Copy, len(recs))
	xs, queued := make([]indexed, len(recs)), make([]Record, len(recs)) // queued: before judgement
	var mine, judged, puts []int
	for i, p := range recs {
		queued[i] = p.rec
		switch {
		case p.confirm && p.rec.Writer == l.writer:
			mine = append(mine, i)
		case p.judge != nil && p.rec.Writer != l.writer:
			judged = append(judged, i)
		default:
			puts = append(puts, i)
		}
	}
	read := append(slices.Clone(mine), judged...)
	each(len(read), func(k int) { i := read[k]; xs[i], errs[i] = l.lookup(ctx, recs[i].rec.Txn, recs[i].rec.At) })
	for _, i := range judged {
		if errs[i] != nil {
			continue
		}
		r := &recs[i].rec
		switch v, owner := judgeCopies(recs[i].judge, xs[i], *r, r.Writer); v {
		case stale:
			if !recs[i].confirm {
				errs[i] = l.staleRead(r.Txn)
				continue
			}
			// An owed record is judged against the state the ledger
			// last read, which its next read cannot follow until the
			// record is written: it names the owner, as it stands.
		case counted:
			if f := l.former; queued[i].Writer == f.Writer && l.cyc.Local != nil && l.cyc.Local.Version(f.Writer) == f.Version && holds(l.cyc.Local, f.Writer, r.Txn) {
				l.takeOut(f.Writer, f.Version, false, r.Txn) //nolint:errcheck // our late copy: only MaxSeq refuses, and then it stays
			}
			r.Writer, r.Version = owner.Writer, max(recs[i].judge.Version(owner.Writer), 1)
		}
		puts = append(puts, i)
	}
	var out []crdt.TxnID
	for _, i := range mine {
		rec := recs[i].rec
		o, deferred := xs[i].onlyElsewhere(rec.Amount)
		switch {
		case errs[i] != nil:
		case deferred:
			// Recorded first on another key of the account (a layout
			// race, SPEC.md 6.11 step 3): that copy counts, whatever its
			// amount; this one is taken out and not recorded.
			owners[i] = &tpncounter.Copy{Actor: o.Writer, Amount: o.Amount, Folded: true}
			out = append(out, rec.Txn)
		case !xs[i].namesOnlyOthers(l.writer, rec.Amount):
			recs[i].token = xs[i].putToken()
			puts = append(puts, i)
		default:
			v, owner, token, err := l.settle(ctx, rec)
			recs[i].token, errs[i] = token, err
			if owner != nil {
				owners[i] = &tpncounter.Copy{Actor: owner.Writer, Amount: owner.Amount, Folded: v == counted}
			}
			switch {
			case err != nil:
			case v == none:
				puts = append(puts, i)
			case v == counted:
				out = append(out, rec.Txn)
			}
		}
	}
	slices.Sort(puts)
	each(len(puts), func(k int) { i := puts[k]; errs[i] = l.putRecord(ctx, recs[i].rec, recs[i].token) })
	var given []crdt.TxnID
	for i, err := range errs {
		r := recs[i].rec
		// Our copy's owed record (owe: it landed) stays beside another's, to be confirmed.
		u, owed := l.unindexed[r.Txn]
		other := owed && u.Writer == l.writer && queued[i].Writer != l.writer
		if err == nil {
			if !other {
				delete(l.unindexed, r.Txn)
				delete(l.giving, r.Txn)
			}
			if recs[i].gives && l.cyc.Local != nil && holds(l.cyc.Local, l.writer, r.Txn) {
				given = append(given, r.Txn)
			}
			continue
		}
		if !other { // an ambiguous write may have landed: kept until one is acknowledged
			setIn(&l.unindexed, r.Txn, r)
			setIn(&l.giving, r.Txn, recs[i].gives)
		}
	}
	l.takeOut(l.writer, l.stored, true, given...) //nolint:errcheck // held: only MaxSeq refuses, and then the copy stays
	if len(out) > 0 && !l.rewriting && l.takeOut(l.writer, l.stored, false, out...) == nil {
		// Until the take-out is written the late copy counts too. A failed
		// write leaves it to the next one.
		l.rewriting = true
		l.rewrite(ctx, 1) //nolint:errcheck
		l.rewriting = false
	}
	return errs, owners
}

// takeOut takes the copies of txns in w's entry (its writer's, or an
// earlier incarnation's: retake), stored at v, out of this ledger's state:
// copies another writer counted (takenOut: written whatever the store
// shows, SPEC.md 6.11 step 3), or, given, ones given up (Ahead: 6.9).
func (l *Ledger) takeOut(w crdt.ActorID, v uint64, given bool, txns ...crdt.TxnID) error {
	switch {
	case len(txns) == 0:
		return nil
	case l.cyc.Local == nil:
		return fmt.Errorf("%w: ledger %q: taking back %q before a read", crdt.ErrUnavailable, l.key, txns[0])
	}
	local := l.cyc.Local.Clone()
	held := maps.Collect(local.Transactions(w))
	for _, x := range txns {
		if _, err := local.Retract(w, x); err != nil {
			return fmt.Errorf("ledger %q: taking back %q: %w", l.key, x, err)
		}
	}
	l.cyc.Local, l.cyc.Ahead = local, l.cyc.Ahead || given
	if !given {
		for _, x := range txns {
			l.takenOut = append(l.takenOut, Record{Txn: x, Amount: held[x], Writer: w, Version: v, At: l.now()})
		}
	}
	return nil
}

// putRecord puts rec under its key with token. A Sharded's sub-ledger
// names its sub-key in it, and so does a ledger whose records store lists
// its keys (KeyLister), which a sweep runs over: it reads the key to tell
// whether the record dates a live writer (ExpireRecords). Others write
// version 1, which every release reads.
func (l *Ledger) putRecord(ctx context.Context, rec Record, token store.Token) error {
	if _, swept := l.records.(KeyLister); swept || l.indexBase != l.key {
		rec.Key = l.key
	}
	b, err := rec.MarshalBinary()
	if err == nil {
		err = l.records.Put(ctx, RecordKey(l.indexBase, rec.Txn), l.writer, b, token)
	}
	return err
}

// verdict is what settle finds of a late copy (SPEC.md 6.11 step 3).
type verdict int

const (
	none    verdict = iota // no live record of its amount: write this one
	mine                   // a record names this writer: nothing to do
	meet                   // a named writer still holds it: that copy counts
	counted                // every named writer counted it: take this copy out
	stale                  // the state read is older than a record
)

// settle decides rec, the record of this ledger's copy that counted when it
// landed, when its records name only other writers (SPEC.md 6.11 step 3):
// it reads the account, then the records (step 6: a give-up follows a
// record), and judges them; on meet the copy is watched (l.met). owner is
// the record the copy defers to; token, the one to put rec with on none.
func (l *Ledger) settle(ctx context.Context, rec Record) (v verdict, owner *Record, token store.Token, err error) {
	sibs, _, err := l.store.Fetch(ctx, l.key)
	if err != nil {
		return none, nil, nil, fmt.Errorf("ledger %q: fetch: %w", l.key, err)
	}
	st, err := tpncounter.New(l.copts)
	if err == nil {
		_, err = ledgerOps{l}.Absorb(st, sibs)
	}
	if err != nil {
		return none, nil, nil, err
	}
	x, err := l.lookup(ctx, rec.Txn, rec.At)
	if err != nil {
		return none, nil, nil, err
	}
	if v, owner = judgeCopies(st, x, rec, l.writer); v == stale {
		return none, nil, nil, l.staleRead(rec.Txn)
	}
	if v == meet {
		setIn(&l.met, rec.Txn, metCopy{rec: rec, holder: owner.Writer})
	}
	return v, owner, x.putToken(), nil
}

// judgeCopies judges w's copy of rec's transaction and amount by its live
// records x against st, read after them: a record naming w is mine; else a
// named writer whose entry holds it is meet (its record returned: that
// copy landed first); else one below its record's version in st is stale;
// else, with named writers, counted (the last one's record); else none.
func judgeCopies(st *tpncounter.Counter, x indexed, rec Record, w crdt.ActorID) (verdict, *Record) {
	var named []Record
	for _, r := range x.records {
		switch {
		case r.Amount != rec.Amount:
		case r.Writer == w:
			return mine, nil
		default:
			named = append(named, r)
		}
	}
	for _, r := range named {
		if holds(st, r.Writer, rec.Txn) {
			return meet, &r
		}
	}
	for _, r := range named {
		if v := st.Version(r.Writer); v < r.Version && (v > 0 || !foldedAfter(st, r.At)) {
			return stale, nil
		}
	}
	if len(named) == 0 {
		return none, nil
	}
	return counted, &named[len(named)-1]
}

// metCopy is a copy of this ledger's entry that met holder's (settle).
type metCopy struct {
	rec    Record
	holder crdt.ActorID
}

// resettle decides again, at each read, every copy in this ledger's entry
// that met another writer's (settle) once no other entry in fetched holds
// the transaction: that writer counted it (forgotten in a cycle that read
// the account before this copy landed: taken out here, written next) or
// gave its copy up to this one (SPEC.md 6.11 step 3). A copy that left this
// entry, or that no live record names, is no longer watched.
func (l *Ledger) resettle(ctx context.Context, fetched *tpncounter.Counter) error {
	if len(l.met) == 0 {
		return nil
	}
	for _, txn := range slices.Sorted(maps.Keys(l.met)) {
		m := l.met[txn]
		if !holds(l.cyc.Local, l.writer, txn) {
			delete(l.met, txn)
			continue
		}
		if holds(fetched, m.holder, txn) {
			continue // still met
		}
		x, err := l.lookup(ctx, txn, m.rec.At) // live when the copies met
		if err != nil {
			return err
		}
		v, owner := judgeCopies(fetched, x, m.rec, l.writer)
		switch {
		case v == stale:
			return l.staleRead(txn)
		case v == meet:
			l.met[txn] = metCopy{rec: m.rec, holder: owner.Writer}
			continue
		case v == counted:
			if err := l.takeOut(l.writer, l.stored, false, txn); err != nil {
				return err
			}
		}
		delete(l.met, txn)
	}
	return nil
}

// putToken is the token a record Put after the fetch x takes: x's, when
// it read no live record of the transaction, else none, so that no record
// is superseded by another (each names a copy that counts, or counted:
// SPEC.md 6.11 step 3).
func (x indexed) putToken() store.Token {
	if len(x.records) > 0 || len(x.elsewhere) > 0 {
		return nil
	}
	return x.token
}

// onlyElsewhere returns a record of another key, of amount if there is
// one, when x has one and no record of this key has amount.
func (x indexed) onlyElsewhere(amount int64) (Record, bool) {
	for _, r := range x.records {
		if r.Amount == amount {
			return Record{}, false
		}
	}
	for _, r := range x.elsewhere {
		if r.Amount == amount {
			return r, true
		}
	}
	if len(x.elsewhere) > 0 {
		return x.elsewhere[0], true
	}
	return Record{}, false
}

// namesOnlyOthers reports whether x has a record with amount and every such
// record names a writer other than w.
func (x indexed) namesOnlyOthers(w crdt.ActorID, amount int64) bool {
	others := false
	for _, r := range x.records {
		if r.Amount == amount {
			if r.Writer == w {
				return false
			}
			others = true
		}
	}
	return others
}

// holds reports whether w's live entries in st hold txn.
func holds(st *tpncounter.Counter, w crdt.ActorID, txn crdt.TxnID) bool {
	for x := range st.Transactions(w) {
		if x == txn {
			return true
		}
	}
	return false
}

// holdsAmount reports whether w's live entries in st hold txn with amount.
func holdsAmount(st *tpncounter.Counter, w crdt.ActorID, txn crdt.TxnID, amount int64) bool {
	for x, a := range st.Transactions(w) {
		if x == txn && a == amount {
			return true
		}
	}
	return false
}

// foldedAfter reports whether a base of st was folded with a cutoff after
// t: an entry retired before it is no longer in st (SPEC.md 6.10).
func foldedAfter(st *tpncounter.Counter, t time.Time) bool {
	p, n := st.Bases()
	return p.Cutoff.After(t) || n.Cutoff.After(t)
}

// cede records, for every transaction whose copy in this ledger's entry
// in merged does not count, the copy that does, then takes its own out
// (SPEC.md 6.11 step 6): a late copy's writer can then tell a copy given
// up in its favour from one counted and forgotten. It fails, wrapping
// crdt.ErrUnavailable, when a record could not be written (owed).
func (l *Ledger) cede(ctx context.Context, merged *tpncounter.Counter) error {
	ceded := merged.Ceded(l.writer)
	if len(ceded) == 0 {
		return nil
	}
	now := l.now()
	recs := make([]pendingRecord, 0, len(ceded))
	for _, x := range slices.Sorted(maps.Keys(ceded)) {
		o := ceded[x]
		recs = append(recs, pendingRecord{rec: Record{Txn: x, Amount: o.Amount, Writer: o.Actor, At: now, Version: max(merged.Version(o.Actor), 1)}, judge: merged, gives: true})
	}
	errs, _ := l.record(ctx, recs)
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("%w: ledger %q: recording the copy that counts before giving this one up: %s", crdt.ErrUnavailable, l.key, err.Error())
		}
	}
	if merged != l.cyc.Local { // read apart: the copies taken out join it
		return ledgerOps{l}.Join(merged, l.cyc.Local)
	}
	return nil
}

// flush writes the records a previous cycle could not write, before this
// ledger writes again (l.mu held). It fails, wrapping crdt.ErrUnavailable,
// while any remains unwritten: the cycle must not run, since its write could
// fold an unrecorded transaction out of the counter's history.
func (l *Ledger) flush(ctx context.Context) error {
	// Writing a take-out (record) may learn that a pending write landed,
	// which owes its records in turn: they are written in the next round.
	// cause is the last round's first failure, which the error names.
	var cause error
	for range 3 {
		if len(l.unindexed) == 0 {
			return nil
		}
		gives := false
		for x := range l.unindexed {
			gives = gives || l.giving[x]
		}
		if g := l.opts.RetiredGrace; gives || l.cyc.Local == nil || g >= 0 && l.now().Sub(l.own.read) > g/2 {
			// A give-up is judged against a fresh state: a pass may have
			// retired this entry with its copy counted (SPEC.md 6.11
			// step 3). Else: no state, or a read would drop it
			// (renewStale), and a take-out needs one.
			if _, _, err := l.read(ctx); err != nil {
				return err
			}
		}
		recs := make([]pendingRecord, 0, len(l.unindexed))
		for _, x := range slices.Sorted(maps.Keys(l.unindexed)) {
			recs = append(recs, pendingRecord{rec: l.unindexed[x], confirm: true, judge: l.cyc.Local, gives: l.giving[x]})
		}
		errs, _ := l.record(ctx, recs)
		if i := slices.IndexFunc(errs, func(err error) bool { return err != nil }); i >= 0 {
			cause = errs[i]
			break
		}
	}
	if n := len(l.unindexed); n > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if cause != nil {
			return fmt.Errorf("%w: ledger %q: %d transaction records of earlier writes are not yet written: %s", crdt.ErrUnavailable, l.key, n, cause.Error())
		}
		return fmt.Errorf("%w: ledger %q: %d transaction records of earlier writes are not yet written", crdt.ErrUnavailable, l.key, n)
	}
	return nil
}

// recordRetiring records every transaction that actor's entry in merged
// still holds (it is about to be retired, which forgets them). It reports
// whether all were recorded.
func (l *Ledger) recordRetiring(ctx context.Context, merged *tpncounter.Counter, actor crdt.ActorID, now time.Time) bool {
	if brokenRetireUnrecorded {
		return true
	}
	var recs []pendingRecord
	late := l.sightings[actor].late
	for txn, amount := range merged.Transactions(actor) {
		if slices.Contains(late, txn) {
			continue // another writer counted it, and recorded it (SPEC.md 6.11 step 5)
		}
		// The record names the copy that counts: the retired actor's, or
		// the one its copy of the same amount leaves in favour of (step 6).
		w := actor
		if o, ok := merged.Owner(txn); ok && o.Actor != actor && o.Amount == amount {
			w = o.Actor
		}
		if _, doubt := l.unacked[txn]; w == l.writer && doubt && !brokenLongDoubt {
			// The copy that counts is this ledger's, in a write not known
			// to have landed: a pass over a state without it would retire
			// actor with the copy counted, and this record would keep
			// ours from being taken out (SPEC.md 6.11 step 5). Later.
			return false
		}
		if w == l.writer && l.exposed(merged, txn) {
			// So while that write, landed since, leaves the copy in this
			// writer's history with its record owed or the copy watched:
			// such a pass may not be written yet, and the copy's own
			// judgement then takes it out.
			return false
		}
		v := merged.Version(w)
		if w == l.writer && l.stored > 0 {
			v = l.stored // a version the store holds (SPEC.md 6.9)
		}
		recs = append(recs, pendingRecord{rec: Record{Txn: txn, Amount: amount, Writer: w, At: now, Version: max(v, 1)}})
	}
	if len(recs) == 0 {
		return true
	}
	// A record already made (by a call, a give-up, or a pass of another
	// Ledger value: a restart, a Book reopening the key) is not made
	// again, so that passes that keep declining do not pile siblings up
	// on a record key (SPEC.md 6.11 step 5); nor is one whose record is
	// past the retry window, which no retry is owed. The others are put
	// with the lookup's token when it found no live record, replacing dead
	// ones.
	xs, errs := make([]indexed, len(recs)), make([]error, len(recs))
	each(len(recs), func(i int) { xs[i], errs[i] = l.lookup(ctx, recs[i].rec.Txn, now) })
	var todo []pendingRecord
	for i, p := range recs {
		if errs[i] != nil {
			return false // tried again at a later pass
		}
		made := func(r Record) bool { return r.Writer == p.rec.Writer && r.Amount == p.rec.Amount }
		if !slices.ContainsFunc(xs[i].records, made) && !slices.ContainsFunc(xs[i].old, made) {
			p.token = xs[i].putToken()
			todo = append(todo, p)
		}
	}
	// Not all written (one already owed too): do not retire; the kept
	// records are written before the next cycle (flush), and it tries again.
	errs, _ = l.record(ctx, todo)
	return !slices.ContainsFunc(errs, func(err error) bool { return err != nil })
}

// exposed reports whether this ledger's copy of txn, the owner in merged,
// came from a write in doubt that landed since (owe) and may still be a
// late copy that a write made without it counts elsewhere, so that no pass
// records it as the copy that counts (SPEC.md 6.11 step 5): in this
// writer's history while its record is owed or it is watched (settle),
// whose judgement decides it. Folded, it lets the other writer retire with
// its own copy left out, which needs the record.
func (l *Ledger) exposed(merged *tpncounter.Counter, txn crdt.TxnID) bool {
	if !l.doubted[txn] || !l.unsettled(txn) || brokenLongDoubt {
		return false
	}
	o, ok := merged.Owner(txn)
	return ok && o.Actor == l.writer && !o.Folded
}

// unsettled reports whether txn's record is owed or this ledger's copy of
// it watched (SPEC.md 6.11 step 3).
func (l *Ledger) unsettled(txn crdt.TxnID) bool {
	_, owed := l.unindexed[txn]
	_, watched := l.met[txn]
	return owed || watched
}

// newestTxns returns actor's newest transaction in each half of c (its
// newest credit, then its newest debit), those it has.
func newestTxns(c *tpncounter.Counter, actor crdt.ActorID) []crdt.TxnID {
	var credit, debit crdt.TxnID
	for txn, amount := range c.Transactions(actor) { // oldest first, in each half
		if amount > 0 {
			credit = txn
		} else {
			debit = txn
		}
	}
	var out []crdt.TxnID
	for _, x := range []crdt.TxnID{credit, debit} {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// lastApplied returns when actor last applied one of txns, by their
// records naming it (false unless each has one: a txn whose record is
// owed, or names another writer, may have been applied later). late lists
// actor's copies of txns another writer counted first, which its ledger
// would take out (SPEC.md 6.11 step 3) and a retirement leaves out;
// unsure, a record not read or newer than merged (a give-up's included):
// not all copies are judged.
func (l *Ledger) lastApplied(ctx context.Context, merged *tpncounter.Counter, actor crdt.ActorID, txns []crdt.TxnID, now time.Time) (at time.Time, ok bool, late []crdt.TxnID, unsure bool) {
	held := maps.Collect(merged.Transactions(actor))
	dated := 0 // txns with a record naming actor
	for _, txn := range txns {
		x, err := l.lookup(ctx, txn, now)
		if err != nil {
			unsure = true
			continue
		}
		// A record from before the retry window dates the actor as well
		// as a live one: on an account written less often than that, the
		// writers that left are dated only so (SPEC.md 6.9).
		ownRecord := func(r Record) bool { return r.Writer == actor }
		if slices.ContainsFunc(x.records, ownRecord) || slices.ContainsFunc(x.old, ownRecord) {
			dated++
		}
		for _, r := range x.old {
			if ownRecord(r) && r.At.After(at) {
				at = r.At
			}
		}
		for _, r := range x.records {
			if r.Writer == actor && r.At.After(at) {
				at = r.At
			}
			// Another writer's record (a give-up's) the state is older
			// than, unless a base folded since explains the version.
			unsure = unsure || r.Writer != actor && merged.Version(r.Writer) < r.Version && !foldedAfter(merged, r.At)
		}
		switch v, _ := judgeCopies(merged, x, Record{Txn: txn, Amount: held[txn]}, actor); v {
		case counted:
			late = append(late, txn)
		case stale:
			unsure = true
		}
	}
	return at, (dated == len(txns) || brokenDateByAnyRecord) && !at.IsZero(), late, unsure
}

// takenElsewhere reports whether txn, which fetched does not hold, is
// counted by another writer: a record live at at (when this ledger applied
// it) names another, whose entry fetched holds at or after that version,
// or names another key of the account (its copy landed there, SPEC.md
// 6.11 step 4). One naming this writer means its copy landed: false. A
// fetch with only earlier versions of every writer recorded cannot tell:
// an error wrapping crdt.ErrUnavailable (taking txn out could leave it
// held by no one).
func (l *Ledger) takenElsewhere(ctx context.Context, fetched *tpncounter.Counter, txn crdt.TxnID, at time.Time) (bool, error) {
	x, err := l.lookup(ctx, txn, at)
	if err != nil {
		return false, err
	}
	stale := false
	for _, r := range x.records {
		if r.Writer == l.writer {
			return false, nil
		}
	}
	if len(x.elsewhere) > 0 {
		return true, nil
	}
	for _, r := range x.records {
		if v := fetched.Version(r.Writer); v >= r.Version || v == 0 && foldedAfter(fetched, r.At) {
			return true, nil // counted (retired, perhaps folded since)
		}
		stale = true
	}
	if stale {
		return false, l.staleRead(txn)
	}
	return false, nil
}

// staleRead is the error of a read of the account older than a record of
// txn (SPEC.md 6.11 steps 3 and 4).
func (l *Ledger) staleRead(txn crdt.TxnID) error {
	return fmt.Errorf("%w: ledger %q: the state read is older than the record of %q (a stale read); try again", crdt.ErrUnavailable, l.key, txn)
}
