package ledger

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/big"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/retry"
	"github.com/counterkit/counterkit/internal/storekit"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// DefaultRetryCount is the number of extra attempts when Options.RetryCount
// is zero.
const DefaultRetryCount = 3

// MaxRetryCount is the largest accepted Options.RetryCount.
const MaxRetryCount = 100

// DefaultRetireAfter is Options.RetireAfter when it is zero. It assumes
// that a write stays in flight, plus the writers' clock skew, for less
// than that (SPEC.md 6.11 Limits, "Clocks").
const DefaultRetireAfter = time.Hour

// DefaultRetiredGrace is Options.RetiredGrace when it is zero: 10 days,
// Cassandra's default gc_grace_seconds (864000).
const DefaultRetiredGrace = 10 * 24 * time.Hour

// DefaultFutureSkew is Options.Counter.FutureSkew when it is zero and
// TxnTime is set: how far after the ledger's clock a transaction's time
// may be (SPEC.md 6.11).
const DefaultFutureSkew = time.Minute

// DefaultMaxGroup is the largest group of Updates one write carries when
// Options.MaxGroup is zero (at most the counter's window; see MaxGroup).
const DefaultMaxGroup = 16

// Options configure a Ledger.
type Options struct {
	// Actor names the writer (required), at most MaxActorLen bytes; the
	// ledger writes as an incarnation of it (see Writer).
	Actor crdt.ActorID

	// RetryCount is how many more times a write is attempted after an
	// ambiguous or refused Put; each attempt fetches, merges and applies
	// again. Zero means DefaultRetryCount.
	RetryCount int

	// Backoff spaces the attempts of one operation (see Backoff). The zero
	// value waits DefaultBackoff.
	Backoff Backoff

	// Counter sets the history length and limits of the stored counter,
	// and with TxnTime makes transactions timed: a retry too late to be
	// recognised is refused (crdt.ErrOutsideWindow) instead of counted
	// twice. Every ledger writing one key must use the same Counter options.
	// Its MaxEncodedSize is lowered to the ledger's cap, store.MaxValue less
	// room for a write's retirements (SPEC.md 6.9), when zero or larger.
	Counter tpncounter.Options

	// RetryWindow is how long after a transaction is first applied a
	// retry of it, on any ledger of the key, is recognised (Duplicate),
	// whatever the rate of writes and the writers in between (SPEC.md
	// 6.11). Zero means DefaultRetryWindow (24 hours); at most
	// MaxRetryWindow. After it, a retry the counter still holds is a
	// duplicate; else a transaction timed by Counter.TxnTime is refused
	// (crdt.ErrOutsideWindow) and an untimed one applied as new.
	RetryWindow time.Duration

	// Records, when set, is the store of the ledger's transaction records
	// (RecordKey); nil keeps them in the ledger's own store. The ledger
	// never deletes a record: a store of its own can expire them, with a
	// TTL longer than RetryWindow plus FutureSkew plus the writers' clock
	// skew (DefaultExpireAfter), where a TTL on the accounts' store would
	// expire idle accounts. New refuses a store that says its TTL
	// (store.Expiring) for the accounts, or for Records when it is shorter
	// than RetryWindow plus FutureSkew. Every ledger of a key must use the
	// same records store.
	Records store.Siblings

	// RetireAfter lets this ledger retire, in the writes it makes anyway,
	// the entries of other actors it has seen unchanged that long, after
	// recording their transactions, so that the state follows the actors
	// that still write (SPEC.md 6.9). Zero means DefaultRetireAfter; a
	// negative value never retires. It must exceed the longest a write
	// stays in flight plus the writers' clock skew: a copy landing later
	// counts twice until its own writer is retired (SPEC.md 6.11 Limits).
	RetireAfter time.Duration

	// RetiredGrace is how long a retired entry stays in the state before a
	// pass folds it into the state's base: the grace period of SPEC.md 6.10,
	// within which every state must reach every replica; every ledger of a
	// key must use the same. Zero means DefaultRetiredGrace; negative: never.
	RetiredGrace time.Duration

	// Clock returns the current time for RetryWindow, RetireAfter and a
	// Sharded's layout re-check. Nil means time.Now.
	Clock func() time.Time

	// MaxGroup bounds group commit: Updates that arrive while a cycle runs
	// wait, and the next cycle applies up to MaxGroup of them in one write,
	// each with its own Result (SPEC.md 6.9). Zero means DefaultMaxGroup, at
	// most HistoryLength + FoldedLength of Counter, which it may not exceed;
	// 1 turns grouping off (measure: BenchmarkGroupCommitNoLatency).
	MaxGroup int

	// Observer, when set, receives one observe.Event per Update, Find,
	// Value and HasTransaction (outcome, attempts, ambiguous and refused
	// writes, siblings, conflicts, size, as Retired the actors retired and
	// as Folded the retired entries folded into the base).
	Observer observe.Observer
}

// Backoff is the wait between the attempts of one operation: before the
// k-th retry, a random duration in [0, min(Max, Initial·2^(k−1))] ("full
// jitter"), so that ledgers retrying together spread out. The wait ends
// early, with the context's error, when the context is done.
type Backoff struct {
	// Initial is the longest first wait; zero means DefaultBackoff.Initial,
	// and a negative value disables waiting (every retry is immediate).
	Initial time.Duration
	// Max caps every wait; zero means DefaultBackoff.Max.
	Max time.Duration
}

// DefaultBackoff is used for the zero fields of Options.Backoff.
var DefaultBackoff = Backoff{Initial: 10 * time.Millisecond, Max: time.Second}

// Result describes a finished write. With an error, only Landed and
// Attempts are meaningful: Outcome and Owner are what the call had found
// before it failed (Applied for a write that was refused).
type Result struct {
	// Outcome is what the transaction did: Applied when this call added it
	// (even if an earlier attempt of it landed), Duplicate or DuplicateFolded
	// when it was already stored (also when this call's copy met another
	// writer's, SPEC.md 6.11 step 3), Superseded when a concurrent write of
	// the id with another amount or sign counts (see Owner).
	//
	// Applied means this call wrote the transaction, not that its copy is
	// the one that counts: one delivered to two ledgers at once may be
	// Applied on both and counts once (SPEC.md 6.11). Neither Outcome nor
	// Owner picks one caller to run a side effect ("Side effects", package
	// doc).
	Outcome tpncounter.Outcome

	// Owner is the copy of the transaction that counts as this write saw it
	// (zero when the transaction did not land). A concurrent write of the
	// transaction that lands later may change it.
	Owner tpncounter.Copy

	// Attempts is the number of fetch-merge-put cycles run: at least 1,
	// but 0 for a call refused for its input and one that left the queue
	// of a group commit (Options.MaxGroup) as its context ended.
	Attempts int

	// Landed reports whether the transaction is known to be in the store.
	// It is false only together with an error; after an error wrapping
	// crdt.ErrAmbiguousWrite the transaction may still have landed, and it
	// will land with this ledger's next successful write (see Pending).
	Landed bool

	// Value is the ledger's value as this write saw it, including the
	// transaction when Landed; math.MaxInt64 or math.MinInt64 when it does
	// not fit (see Ledger.Value).
	Value int64
}

// MaxActorLen is the longest Options.Actor: the writer id adds the
// incarnation suffix ("~" and 8 random characters) to it.
const MaxActorLen = crdt.MaxIDLen - 1 - retry.IncarnationLen

// Ledger is an idempotent ledger: a tpncounter.Counter under one key, read,
// merged with its siblings, changed and written back by one actor, with
// transaction ids recognised within Options.RetryWindow (SPEC.md 6.11). It
// is safe for concurrent use; its operations are serialised, as an actor's
// must be, and concurrent Updates share writes (Options.MaxGroup).
type Ledger struct {
	store   store.Siblings
	records store.Siblings // the records' store: opts.Records or store
	key     string
	opts    Options
	writer  crdt.ActorID                 // the entry this ledger writes: an incarnation of opts.Actor
	shown   atomic.Pointer[crdt.ActorID] // writer, for Writer without mu

	mu sync.Mutex
	// cyc holds this ledger's state (cyc.Local) and whether its last
	// write is pending (retry.Cycle; ledgerOps reads apart).
	cyc retry.Cycle[*tpncounter.Counter, ledgerOps]
	// unacked: txns of writes not known landed, callers never told: when applied.
	unacked map[crdt.TxnID]time.Time
	// doubt: the txns of unacked while the last write is pending, as of the
	// last release of mu after a write (noteDoubt), for a queued call that
	// leaves without taking mu. Guarded by gmu.
	doubt     []crdt.TxnID
	sightings map[crdt.ActorID]sighting // each other live actor's version as first seen (RetireAfter)
	resume    uint64                    // not 0: writer's version last known stored, kept if the next read shows it (Book, renewStale)
	former    Record                    // the incarnation before writer, last known stored at Version: record takes out its late copies
	stored    uint64                    // writer's version last known stored (a landed write, a read in place); 0: none
	// lastPass and nextPass are when retireIdle last visited the live
	// actors and when it visits them next (zero: on the next write).
	lastPass, nextPass time.Time
	own                ownEntry // when writer's entry last changed (see renewStale)
	// indexBase names the account in the keys of transaction records
	// (index.go): the key, or a Sharded's account. unindexed holds the
	// records not yet written; giving, those giving this copy up (cede).
	indexBase string
	unindexed map[crdt.TxnID]Record
	giving    map[crdt.TxnID]bool
	// met holds this writer's copies of transactions that met another
	// writer's copy when they landed, until a read decides them (resettle).
	met       map[crdt.TxnID]metCopy
	takenOut  []Record // copies another writer counted that Local took out (takeOut), not yet written
	carry     []Record // a take-out renewStale dropped: each Txn out of Writer's entry, stored at Version (retake)
	rewriting bool     // record is writing back a copy it took out
	// doubted holds the txns of a write in doubt that a read or a Put
	// showed landed with this writer's copy the owner (owe): while its
	// record is owed or the copy watched, a write made without it may
	// still count the txn elsewhere (exposed).
	doubted map[crdt.TxnID]bool
	// copts are the stored counter's options: Options.Counter without
	// TxnTime, which the ledger applies itself against RetryWindow, and
	// with Apply capped below what a store accepts (writeRoom).
	copts tpncounter.Options

	stats opStats // of the operation in progress, for Options.Observer

	// Group commit (group.go): gmu guards busy, set while a leader runs
	// or is about to run a cycle of Updates, and queue, the Updates
	// waiting for the next cycle, in arrival order, and free, records
	// for queued calls. leader is the call record of a leader that did
	// not queue, and group the leader's group, both under mu (see run).
	gmu    sync.Mutex
	busy   bool
	queue  []*call
	free   []*call
	leader call
	group  []*call
}

// sighting is an actor's version as this ledger first saw it, and since
// when it has been unchanged: when this ledger first saw it, or earlier,
// when its newest transaction was recorded (dated: that was looked up).
type sighting struct {
	version uint64
	since   time.Time
	dated   bool
	// checked: once due, the records of all its transactions were read at
	// this version, against a state no older than them.
	checked bool
	// late: its copies of transactions another writer counted first
	// (SPEC.md 6.9, 6.11 step 3), which leave uncounted when it retires.
	late     []crdt.TxnID
	pass     bool // seen in the latest pass
	recorded bool // its transactions are recorded at this version
}

// writeRoom is what the cap on Apply keeps free below store.MaxValue for
// what a write changes after its Applys: Compact and retirements add at
// most 36 bytes to an entry, every live entry at most once, and a fold at
// most 30 bytes to each half, a base (37 bytes with a total past int64)
// less the retired entry it takes out (SPEC.md 6.9).
func writeRoom(o tpncounter.Options) int {
	return 36*(cmp.Or(o.MaxActors, tpncounter.DefaultMaxActors)+1) + 64
}

// MaxRetirePerWrite bounds the actors whose transactions one write records
// before retiring them (Options.RetireAfter), so a write's cost stays
// bounded; an actor retires once recorded at its version, and idle actors
// that share transactions retire together, as one group of any size.
const MaxRetirePerWrite = 16

// RetirePassDivisor sets how often a ledger looks for idle actors (a pass
// over the live actors, Options.RetireAfter): every
// RetireAfter/RetirePassDivisor, and when SPEC.md 6.9 says one is due.
// Other writes skip it, so that a busy account's write costs the same
// whatever the number of actors.
const RetirePassDivisor = 8

// retireIdle retires in merged, a state about to be written, the actors
// this ledger has seen unchanged for Options.RetireAfter, and records the
// versions of the others, in a pass over the live actors when one is due
// (see RetirePassDivisor); with own, its own entry counts in the order.
func (l *Ledger) retireIdle(ctx context.Context, merged *tpncounter.Counter, own bool) {
	now := l.now()
	l.own.note(merged, l.writer, now)
	if l.opts.RetireAfter <= 0 {
		return
	}
	if !l.nextPass.IsZero() && now.Before(l.nextPass) && !now.Before(l.lastPass) {
		return // no pass due (and the clock did not go back)
	}
	l.lastPass = now
	l.nextPass = l.retirePass(ctx, merged, now, own)
	l.foldRetired(merged, now)
}

// retirePass is a pass of retireIdle at now. It returns when the next pass
// is due: the zero time when this one left work.
func (l *Ledger) retirePass(ctx context.Context, merged *tpncounter.Counter, now time.Time, own bool) (next time.Time) {
	if l.sightings == nil {
		l.sightings = map[crdt.ActorID]sighting{}
	}
	var idle []crdt.ActorID
	lookups := 0
	live := maps.Collect(merged.LiveActors())
	if _, ok := live[l.writer]; own && !ok {
		live[l.writer] = 0 // skipped below
	}
	actors := slices.Sorted(maps.Keys(live))
	// The pass starts at an actor chosen by this ledger's writer id, so
	// that ledgers that each write a few times (restarts) date different
	// actors, while one ledger's calls stay deterministic (SPEC.md 6.9).
	if n := len(actors); n > 1 {
		h := fnv.New32a()
		h.Write([]byte(l.writer))
		k := int(h.Sum32() % uint32(n))
		actors = append(actors[k:], actors[:k]...)
	}
	next = now.Add(l.opts.RetireAfter / RetirePassDivisor)
	undated, restRead := false, false
	// A writer first seen may be dated by no record: the key's stored
	// sightings are read once, before the pass visits anyone, so that
	// the calls of a pass do not depend on where it starts.
	var seen storedSightings
	if !brokenSeenIgnored && slices.ContainsFunc(actors, func(a crdt.ActorID) bool {
		s, ok := l.sightings[a]
		return a != l.writer && (!ok || s.version == live[a] && !s.dated)
	}) {
		seen.fetch(ctx, l)
	}
	for _, a := range actors {
		v := live[a]
		if a == l.writer {
			continue
		}
		s, ok := l.sightings[a]
		if ok && s.version != v {
			// It wrote since: idle from now, no record to read.
			s = sighting{version: v, since: now, dated: true}
		}
		if !ok {
			s = sighting{version: v, since: now}
		}
		dueAt := func() time.Time { return s.since.Add(l.opts.RetireAfter) }
		if !s.dated || !s.checked && !now.Before(dueAt()) {
			// How long has it been idle? The records of its newest
			// credit and debit say when it last applied one (a writer
			// that restarts often still retires the incarnations it
			// leaves); once due, those of all its copies are read too.
			if newest := newestTxns(merged, a); lookups+len(newest) <= MaxRetirePerWrite {
				lookups += len(newest)
				at, ok, late, unsure := l.lastApplied(ctx, merged, a, newest, now)
				if !s.dated && ok && at.Before(s.since) {
					s.since = at
				}
				if !s.dated && !ok && !brokenSeenIgnored {
					// No record dates it: a stored sighting of this
					// version may, else this one is stored.
					if at, found := seen.dating(a, v, now); found && at.Before(s.since) {
						s.since = at
					} else if !found {
						seen.add = append(seen.add, Sighting{Writer: a, Version: v, At: now})
					}
				}
				due := !now.Before(dueAt())
				if !unsure && due {
					rest := slices.DeleteFunc(slices.Sorted(maps.Keys(maps.Collect(merged.Transactions(a)))), func(x crdt.TxnID) bool { return slices.Contains(newest, x) })
					if unsure = len(rest) > 0 && restRead && lookups+len(rest) > MaxRetirePerWrite; len(rest) > 0 && !unsure { // else at the next pass
						lookups, restRead = lookups+len(rest), true
						var more []crdt.TxnID
						_, _, more, unsure = l.lastApplied(ctx, merged, a, rest, now)
						late = append(late, more...)
					}
				}
				s.dated, s.checked, s.late = true, !unsure && due, late
			}
		}
		if _, found := seen.dating(a, v, now); !s.dated && seen.ok && !found {
			// Left unread (past the lookups of a write): its
			// sighting is stored too, whatever its records say.
			seen.add = append(seen.add, Sighting{Writer: a, Version: v, At: now})
		}
		due := dueAt()
		ready := !now.Before(due)
		undated = undated || !s.dated || ready && !s.checked
		s.pass = true
		l.sightings[a] = s
		if ready && s.checked && !(brokenLateDeclined && len(s.late) > 0) {
			idle = append(idle, a)
		} else if !ready && due.Before(next) {
			next = due
		}
	}
	seen.put(ctx, l, merged)
	for a, s := range l.sightings {
		if !s.pass {
			delete(l.sightings, a) // retired or gone
			continue
		}
		s.pass = false
		l.sightings[a] = s
	}
	var shared []crdt.ActorID
	unrecorded := false
	// Each actor's records are written once per version, for at most
	// MaxRetirePerWrite actors a pass, each tried once.
	budget, tried := MaxRetirePerWrite, map[crdt.ActorID]bool{}
	record := func(a crdt.ActorID) bool {
		s := l.sightings[a]
		if s.recorded || tried[a] || budget == 0 {
			return s.recorded
		}
		budget--
		tried[a] = true
		s.recorded = l.recordRetiring(ctx, merged, a, now)
		l.sightings[a] = s
		return s.recorded
	}
	for _, a := range idle {
		// Its transactions are recorded first, so that retiring forgets
		// none inside the retry window; declined (and tried again on a
		// later write) when a record could not be written, or while
		// another actor holds one of a's transactions. Every retirable
		// actor is visited, so that ones that keep declining do not hide
		// the others; the record budget bounds the write's cost.
		if !record(a) {
			unrecorded = true
			continue
		}
		late := l.sightings[a].late
		if brokenLateAll {
			late = slices.Collect(maps.Keys(maps.Collect(merged.Transactions(a))))
		}
		if ok, _ := merged.RetireLateAt(now, late, a); ok {
			l.stats.retired++
		} else {
			shared = append(shared, a)
		}
	}
	// Idle actors that share transactions only among themselves (one
	// transaction given to two incarnations that both went idle) retire
	// together, each shared transaction counted once (SPEC.md 6.10): the
	// actors linked to a declined one by shared transactions, directly or
	// through others, once every one of them is retirable and recorded,
	// whatever their number.
	isIdle := make(map[crdt.ActorID]bool, len(idle))
	for _, a := range idle {
		isIdle[a] = true
	}
	for _, g := range sharingGroups(merged, shared) {
		if slices.ContainsFunc(g, func(a crdt.ActorID) bool { return !isIdle[a] }) {
			continue // a member still writes, or is not idle for RetireAfter yet
		}
		all := true
		for _, a := range g {
			all = record(a) && all
		}
		if !all {
			unrecorded = true
			continue
		}
		var late []crdt.TxnID
		for _, a := range g {
			late = append(late, l.sightings[a].late...)
		}
		if ok, _ := merged.RetireLateAt(now, late, g...); ok {
			l.stats.retired += len(g)
		}
	}
	if undated || unrecorded {
		// Actors left undated, or records left to write (a refused
		// record, written first by the next cycle, or more actors to
		// record than one write records): pass again on the next
		// write. A retirement declined because another actor shares a
		// transaction waits for the next pass as scheduled.
		return time.Time{}
	}
	return next
}

// sharingGroups returns, for the actors of from, the groups of live actors
// of c linked by transactions they hold, directly or through others: the
// sets RetireAll can retire together. Groups are in order of their first
// actor in from, each sorted.
func sharingGroups(c *tpncounter.Counter, from []crdt.ActorID) [][]crdt.ActorID {
	if len(from) == 0 {
		return nil
	}
	holders := map[crdt.TxnID][]crdt.ActorID{}
	for a := range c.LiveActors() {
		for txn := range c.Transactions(a) {
			holders[txn] = append(holders[txn], a)
		}
	}
	seen := map[crdt.ActorID]bool{}
	var groups [][]crdt.ActorID
	for _, start := range from {
		if seen[start] {
			continue
		}
		seen[start] = true
		g := []crdt.ActorID{start}
		for i := 0; i < len(g); i++ {
			for txn := range c.Transactions(g[i]) {
				for _, b := range holders[txn] {
					if !seen[b] {
						seen[b] = true
						g = append(g, b)
					}
				}
			}
		}
		slices.Sort(g)
		groups = append(groups, g)
	}
	return groups
}

// now is the ledger's clock (Options.Clock).
func (l *Ledger) now() time.Time { return l.opts.Clock() }

// setIn sets (*m)[k] to v, making the map when it is nil.
func setIn[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
}

// opStats counts what one operation did, for the Observer.
type opStats struct {
	ambiguous, refused, siblings, bytes, retired, folded int
	// attempt is the group cycle's attempt running (1 first; 0 outside
	// its attempts), and failed[i] how attempt i+1 ended: refused ('r'),
	// ambiguous ('a'), or neither (0), for failedIn.
	attempt int
	failed  []byte
}

// fail counts an attempt that ended refused ('r') or ambiguous ('a').
func (s *opStats) fail(kind byte) {
	if kind == 'r' {
		s.refused++
	} else {
		s.ambiguous++
	}
	if i := s.attempt - 1; i >= 0 && i < 128 { // a cycle makes at most 101 attempts (RetryCount)
		for len(s.failed) <= i {
			s.failed = append(s.failed, 0)
		}
		s.failed[i] = kind
	}
}

// failedIn returns how many of the first n attempts ended refused and
// ambiguous.
func (s *opStats) failedIn(n int) (refused, ambiguous int) {
	for _, k := range s.failed[:min(n, len(s.failed))] {
		switch k {
		case 'r':
			refused++
		case 'a':
			ambiguous++
		}
	}
	return refused, ambiguous
}

// New returns a ledger for key in store, writing as opts.Actor. It does no
// I/O. Errors wrap crdt.ErrInvalidKey (also for a key IsRecordKey
// reports), crdt.ErrInvalidActor or crdt.ErrInvalidConfig (also for a
// store whose values expire, store.Expiring, and for Options.Records
// expiring them sooner than RetryWindow plus FutureSkew).
func New(st store.Siblings, key string, opts Options) (*Ledger, error) {
	if storekit.Nil(st) {
		return nil, fmt.Errorf("%w: nil store", crdt.ErrInvalidConfig)
	}
	if opts.Records != nil && storekit.Nil(opts.Records) {
		return nil, fmt.Errorf("%w: Options.Records holds a nil store (leave it unset to keep records in the ledger's store)", crdt.ErrInvalidConfig)
	}
	if err := checkKey("ledger key", key); err != nil {
		return nil, err
	}
	if err := opts.Actor.Validate(); err != nil {
		return nil, err
	}
	if len(opts.Actor) > MaxActorLen {
		return nil, fmt.Errorf("%w: %d bytes, longer than %d (MaxActorLen)", crdt.ErrInvalidActor, len(opts.Actor), MaxActorLen)
	}
	if opts.RetryCount < 0 || opts.RetryCount > MaxRetryCount {
		return nil, fmt.Errorf("%w: RetryCount %d outside 0..%d", crdt.ErrInvalidConfig, opts.RetryCount, MaxRetryCount)
	}
	opts.RetryCount = cmp.Or(opts.RetryCount, DefaultRetryCount)
	opts.Backoff.Initial = cmp.Or(opts.Backoff.Initial, DefaultBackoff.Initial)
	opts.Backoff.Max = cmp.Or(opts.Backoff.Max, DefaultBackoff.Max)
	if opts.Backoff.Max < 0 {
		return nil, fmt.Errorf("%w: Backoff.Max %v is negative", crdt.ErrInvalidConfig, opts.Backoff.Max)
	}
	if err := opts.Counter.Validate(); err != nil {
		return nil, err
	}
	if opts.RetryWindow < 0 || opts.RetryWindow > MaxRetryWindow {
		return nil, fmt.Errorf("%w: RetryWindow %v outside 0..%v", crdt.ErrInvalidConfig, opts.RetryWindow, MaxRetryWindow)
	}
	opts.RetryWindow = cmp.Or(opts.RetryWindow, DefaultRetryWindow)
	opts.RetireAfter = cmp.Or(opts.RetireAfter, DefaultRetireAfter)
	opts.RetiredGrace = cmp.Or(opts.RetiredGrace, DefaultRetiredGrace)
	if opts.Counter.TxnTime != nil {
		opts.Counter.FutureSkew = cmp.Or(opts.Counter.FutureSkew, DefaultFutureSkew)
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if err := store.CheckKeeps(st, "ledger accounts"); err != nil {
		return nil, err
	}
	least := opts.RetryWindow + opts.Counter.FutureSkew
	if least < opts.RetryWindow { // the sum passed the largest Duration
		least = math.MaxInt64
	}
	if ttl := store.TTL(opts.Records); ttl > 0 && ttl < least {
		return nil, fmt.Errorf("%w: Options.Records expires records %v after they are written, before RetryWindow plus FutureSkew (%v): a retry inside the window would count again (SPEC.md 6.11, \"Storage\")", crdt.ErrInvalidConfig, ttl, least)
	}
	window := windowOf(opts.Counter)
	if opts.MaxGroup < 0 || opts.MaxGroup > window {
		return nil, fmt.Errorf("%w: MaxGroup %d outside 0..%d (HistoryLength + FoldedLength: a larger group would forget its own first members)", crdt.ErrInvalidConfig, opts.MaxGroup, window)
	}
	opts.MaxGroup = cmp.Or(opts.MaxGroup, min(DefaultMaxGroup, window))
	copts := opts.Counter
	copts.TxnTime = nil
	copts.MaxEncodedSize = min(cmp.Or(copts.MaxEncodedSize, store.MaxValue), store.MaxValue-writeRoom(copts))
	l := &Ledger{store: st, records: opts.Records, key: key, opts: opts, copts: copts, indexBase: key}
	if l.records == nil {
		l.records = st
	}
	l.setWriter(retry.NewWriter(opts.Actor), ownEntry{})
	l.cyc.Ops = ledgerOps{l}
	return l, nil
}

// Key returns the ledger's key.
func (l *Ledger) Key() string { return l.key }

// Actor returns Options.Actor.
func (l *Ledger) Actor() crdt.ActorID { return l.opts.Actor }

// Writer returns the id of the entry this ledger writes in the counter:
// Options.Actor, "~", and 8 base32 characters, random, and counted up
// when the ledger takes a new incarnation (SPEC.md 6.9).
func (l *Ledger) Writer() crdt.ActorID { return *l.shown.Load() }

// setWriter makes l write as w, whose entry last changed as own says.
func (l *Ledger) setWriter(w crdt.ActorID, own ownEntry) {
	l.writer, l.resume, l.own, l.stored = w, 0, own, 0
	l.shown.Store(&w)
}

// Pending reports whether the ledger holds a write not known to have landed
// (its last Put was ambiguous). The next successful write, Find or Land
// lands it, and Land also writes owed records, take-outs and copies given
// up (SPEC.md 6.11), which Pending does not report: call Land on a timer
// whatever Pending says, or use a Book, whose LandPending lands each ledger
// that holds any of them. A service that stops calls Land once. Land them
// well within RetireAfter, say every few seconds (examples/service: every
// second): a ledger that holds such a write, or answers only duplicates,
// looks idle to the others, and once another ledger has retired its
// entry, a write in doubt that lands can count a transaction twice (SPEC.md
// 6.11, Limits, "Retirement of a writer whose write is in doubt").
func (l *Ledger) Pending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cyc.Pending
}

// mustStay reports whether a Book must keep l open when idle (holding).
func (l *Ledger) mustStay() bool { unwritten, watching := l.holding(); return unwritten || watching }

// Land writes what the ledger holds unwritten: a write in doubt (see
// Pending), owed records, take-outs and copies given up (SPEC.md 6.11). It
// runs Find, and again while any of them is left, at most three times in
// all: one write's read can find more to write, such as a late copy of
// this ledger's, landed beside a recorded one, to take out. A copy that
// met another writer's stays watched: if the process stops before the
// watch ends, the copy counts until another ledger retires this one's
// entry (SPEC.md 6.11, Limits).
func (l *Ledger) Land(ctx context.Context) error {
	for range 3 {
		if _, err := l.Find(ctx); err != nil {
			return err
		}
		if unwritten, _ := l.holding(); !unwritten {
			return nil
		}
	}
	return nil
}

// holding reports what a Ledger opened in l's place would not know: a
// pending write, an entry ahead of the store (a copy given up, a
// refusal's compaction), a take-out not yet written or an owed record
// (unwritten), a copy that met another writer's (watching, resettle).
func (l *Ledger) holding() (unwritten, watching bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cyc.Pending || l.cyc.Ahead || l.takenOut != nil || l.carry != nil || len(l.unindexed) > 0, len(l.met) > 0
}

// Credit adds amount (> 0) under transaction txn.
func (l *Ledger) Credit(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	if err := positive("credit", amount); err != nil {
		return Result{}, refused(ctx, l.opts.Observer, err)
	}
	return l.Update(ctx, txn, amount)
}

// refused reports to o an update refused before any cycle (invalid input,
// a Sharded layout it may not write); it returns err.
func refused(ctx context.Context, o observe.Observer, err error) error {
	return refusedOp(ctx, o, "update", err)
}

// refusedOp reports to o an operation named op refused before it read
// (invalid input); it returns err.
func refusedOp(ctx context.Context, o observe.Observer, op string, err error) error {
	_, oper := observe.Start(ctx, o, "ledger", op)
	oper.End(refusal(err))
	return err
}

// refusal is the event of an operation that ended with err before its
// cycle: one attempt (observe.Event.Attempts), refused or ambiguous if err
// says so (a Sharded's layout marker read or written).
func refusal(err error) observe.Event {
	e := observe.Event{Err: err, Attempts: 1}
	switch retry.Classify(err) {
	case retry.Refused:
		e.Refused = 1
	case retry.Ambiguous:
		if errors.Is(err, crdt.ErrAmbiguousWrite) {
			e.Ambiguous = 1
		}
	}
	return e
}

// The events of operations that panicked (a store, say), with which they
// end as the panic goes on, so that an observe.Starter's span does not
// leak: a write's may have landed.
var (
	panickedWrite = observe.Event{Attempts: 1, Ambiguous: 1,
		Err: fmt.Errorf("ledger: the operation panicked; its write may have landed: %w", crdt.ErrAmbiguousWrite)}
	panickedRead = observe.Event{Attempts: 1, Err: errors.New("ledger: the read panicked")}
)

// checkUpdate refuses an invalid transaction id or a zero amount.
func checkUpdate(txn crdt.TxnID, amount int64) error {
	if err := txn.Validate(); err != nil {
		return err
	}
	if amount == 0 || amount == math.MinInt64 {
		return fmt.Errorf("%w: amount %d for transaction %q", crdt.ErrInvalidAmount, amount, txn)
	}
	return nil
}

// positive refuses an amount of a credit or debit that is not above zero.
func positive(op string, amount int64) error {
	if amount <= 0 {
		return fmt.Errorf("%w: %s of %d; use a positive amount", crdt.ErrInvalidAmount, op, amount)
	}
	return nil
}

// Debit subtracts amount (> 0) under transaction txn.
func (l *Ledger) Debit(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	if err := positive("debit", amount); err != nil {
		return Result{}, refused(ctx, l.opts.Observer, err)
	}
	return l.Update(ctx, txn, -amount)
}

// Update applies a signed amount under transaction txn: fetch every sibling,
// merge them and this ledger's own last write, apply, and put with the
// fetch's token, retrying an ambiguous or refused Put up to
// Options.RetryCount times. A transaction already stored is not written
// again (Duplicate, Landed true). Updates that arrive while another runs
// share the next cycle and its Put (group commit), each with its own Result.
//
// Errors: invalid input (crdt.ErrInvalidTxnID, crdt.ErrInvalidAmount,
// crdt.ErrConflictingTransaction, crdt.ErrOverflow, crdt.ErrTooLarge) with
// nothing written (but a retirement pass's records, SPEC.md 6.9); with
// Counter.TxnTime, crdt.ErrOutsideWindow for an unknown transaction older
// than RetryWindow or more than Counter.FutureSkew ahead; a stored sibling
// the ledger cannot read, which stops every operation on the key
// (crdt.ErrCorruptEncoding, ErrTypeMismatch, ErrUnsupportedVersion,
// ErrTooLarge); the store's last error after the retries
// (crdt.ErrAmbiguousWrite: may have landed; crdt.ErrUnavailable alone:
// did not; both when an earlier attempt's write may still land and the
// store refused the last: test crdt.ErrAmbiguousWrite first); the
// context's error. Once the transaction has landed, an error
// writing its record (the store's or the context's) is
// crdt.ErrAmbiguousWrite, with the cause in its text but not wrapped, so
// that it matches no other sentinel (Landed is true: retry the call).
func (l *Ledger) Update(ctx context.Context, txn crdt.TxnID, amount int64) (Result, error) {
	// The operation starts before its first store call, so that the
	// store's calls are reported inside it (observe.Start).
	ctx, op := observe.Start(ctx, l.opts.Observer, "ledger", "update")
	if err := l.checkCall(txn, amount); err != nil {
		op.End(refusal(err))
		return Result{}, err
	}
	return l.run(call{ctx: ctx, txn: txn, amount: amount, op: op})
}

// checkCall refuses, before anything is read or written, an update of txn
// with amount that Update refuses whatever the store holds: an invalid id
// or amount, and, with Options.Counter.TxnTime, an id that carries no time
// or one more than FutureSkew after the clock (SPEC.md 6.11 step 1).
func (l *Ledger) checkCall(txn crdt.TxnID, amount int64) error {
	if err := checkUpdate(txn, amount); err != nil {
		return err
	}
	if l.opts.Counter.TxnTime == nil {
		return nil
	}
	if at, ok := l.txnTime(txn); !ok {
		return fmt.Errorf("%w: %q carries no time (Options.Counter.TxnTime)", crdt.ErrInvalidTxnID, txn)
	} else if skew := l.opts.Counter.FutureSkew; at.After(l.now().Add(skew)) {
		return fmt.Errorf("%w: transaction %q is more than %v after the clock (Options.Counter.FutureSkew)", crdt.ErrOutsideWindow, txn, skew)
	}
	return nil
}

// judge returns what txn's records x say of a call of txn with amount at
// now: the record with that amount (the call is known), or an error that
// fails the call with nothing written: a record with another amount only
// (crdt.ErrConflictingTransaction), or, unrecorded, a timed transaction
// older than the retry window (crdt.ErrOutsideWindow).
func (l *Ledger) judge(x indexed, txn crdt.TxnID, amount int64, now time.Time) (*Record, error) {
	if r, ok := x.match(amount); ok {
		return &r, nil
	}
	if rs := slices.Concat(x.records, x.elsewhere); len(rs) > 0 {
		return nil, fmt.Errorf("%w: ledger %q: transaction %q was applied with amount %d, not %d", crdt.ErrConflictingTransaction, l.key, txn, rs[0].Amount, amount)
	}
	if at, ok := l.txnTime(txn); ok && at.Before(now.Add(-l.opts.RetryWindow)) {
		return nil, fmt.Errorf("%w: ledger %q: transaction %q from %s is older than the retry window (%v)", crdt.ErrOutsideWindow, l.key, txn, at.UTC().Format(time.RFC3339Nano), l.opts.RetryWindow)
	}
	return nil, nil
}

// txnTime is txn's time under Options.Counter.TxnTime; false when untimed.
func (l *Ledger) txnTime(txn crdt.TxnID) (time.Time, bool) {
	if tt := l.opts.Counter.TxnTime; tt != nil {
		return tt(txn)
	}
	return time.Time{}, false
}

// read fetches every sibling and returns their join with this ledger's
// state (retry.Cycle.Read): cyc.Local itself, merged in place, unless a
// write is pending or cyc.Local is ahead, which it reads apart. The caller
// merges the result with cyc.Local (retry.Cycle.Merged) before changing it.
func (l *Ledger) read(ctx context.Context) (fetched *tpncounter.Counter, token store.Token, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	l.renewStale()
	sibs, token, err := l.store.Fetch(ctx, l.key)
	if err != nil {
		if retry.Classify(err) == retry.Refused {
			l.stats.fail('r') // a refused read is a refused attempt (observe.Event)
		}
		return nil, nil, fmt.Errorf("ledger %q: fetch: %w", l.key, err)
	}
	l.stats.siblings = max(l.stats.siblings, len(sibs))
	l.stats.bytes = 0 // the state read; a write's Put sets what it wrote
	for _, s := range sibs {
		l.stats.bytes += len(s)
	}
	pending := l.cyc.Pending
	fetched, held, err := l.cyc.Read(sibs)
	if err != nil {
		return nil, nil, err // no read (renewStale), as a failed fetch
	}
	l.own.read = l.now()
	retired := !held && !pending && fetched != l.cyc.Local && retiredIn(fetched, l.writer)
	if retired {
		if retired, err = l.retiredWithout(ctx, fetched); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case held:
		l.owe(fetched) // the write in doubt is in the store after all
		if l.cyc.Sent != nil {
			l.stored = max(l.stored, l.cyc.Sent.Version(l.writer))
		}
	case retired:
		// This ledger's entry, ahead of the store (a refusal, a give-up),
		// was retired: its newer entry would bring back what that let go.
		// The retirement left out every copy it has taken out too.
		l.cyc.Local, l.cyc.Ahead, l.takenOut = fetched, false, nil
		l.incarnate() // SPEC.md 6.9
	case pending:
		if len(l.unacked) > 0 {
			if err := l.retractLate(ctx, fetched); err != nil {
				return nil, nil, err
			}
		}
	case l.resume != 0:
		if l.cyc.Local.Version(l.writer) != l.resume {
			// The read does not show the incarnation's last write (a stale
			// read): continuing it could fork its entry. Take a new one.
			l.incarnate()
		}
		l.resume = 0
	}
	if err := l.retake(fetched); err != nil {
		return nil, nil, err
	}
	if err := l.resettle(ctx, fetched); err != nil {
		return nil, nil, err
	}
	if fetched == l.cyc.Local && !l.cyc.Pending && !l.cyc.Ahead && l.takenOut == nil {
		l.stored = fetched.Version(l.writer)
	}
	return fetched, token, nil
}

// retiredWithout reports whether the retirement of this ledger's entry in
// fetched left out every copy this ledger took out and has not written
// (takenOut): the pass that retired it left out each copy it judged late
// (SPEC.md 6.9), which the records live at its retirement time judge
// again. One whose records died before that (RetryWindow) was counted by
// the retirement: then this ledger's newer entry, which takes it out, must
// win over the retired one. A failed read of a record is an error.
func (l *Ledger) retiredWithout(ctx context.Context, fetched *tpncounter.Counter) (bool, error) {
	if len(l.takenOut) == 0 {
		return true, nil
	}
	var at time.Time
	for _, h := range []*tpncounter.GCounter{fetched.Positive(), fetched.Negative()} {
		if e, ok := h.Entry(l.writer); ok && (at.IsZero() || e.RetiredAt.Before(at)) {
			if e.RetiredAt.IsZero() {
				return false, nil
			}
			at = e.RetiredAt
		}
	}
	for _, t := range l.takenOut {
		if t.Writer != l.writer {
			return false, nil
		}
		x, err := l.lookup(ctx, t.Txn, at)
		if err != nil {
			return false, err
		}
		if v, _ := judgeCopies(fetched, x, t, l.writer); v != counted {
			return false, nil
		}
	}
	return true, nil
}

// retiredIn reports whether c holds w's entries, all retired.
func retiredIn(c *tpncounter.Counter, w crdt.ActorID) bool {
	_, live := maps.Collect(c.LiveActors())[w] // read apart: rare
	return !live && c.Version(w) > 0
}

// ledgerOps are the ledger's operations on its state for retry.Cycle.
type ledgerOps struct{ l *Ledger }

func (o ledgerOps) New() (*tpncounter.Counter, error) { return tpncounter.New(o.l.copts) }

func (o ledgerOps) Absorb(dst *tpncounter.Counter, sibs [][]byte) (bool, error) {
	for i, b := range sibs {
		if err := dst.MergeBinary(b); err != nil {
			if n, ok := LayoutMarker(b); ok {
				// SPEC.md 6.12: corrupt to a plain ledger; named, so that
				// nobody drops it as a damaged sibling.
				return false, fmt.Errorf("%w: ledger %q: sibling %d of %d is the layout marker of a Sharded account of %d sub-keys: open it with NewSharded",
					crdt.ErrCorruptEncoding, o.l.key, i+1, len(sibs), n)
			}
			return false, fmt.Errorf("ledger %q: sibling %d of %d: %w", o.l.key, i+1, len(sibs), err)
		}
	}
	return false, nil
}

func (ledgerOps) Holds(fetched, local *tpncounter.Counter) bool { return local.Leq(fetched) }

func (o ledgerOps) Join(dst, src *tpncounter.Counter) error {
	if err := dst.Merge(src); err != nil {
		return fmt.Errorf("ledger %q: merging this actor's last write: %w", o.l.key, err)
	}
	return nil
}

// retractLate takes out of this ledger's pending write each transaction it
// applied, never saw land and the store does not hold, that a record live
// when applied says another writer counted (a retry there): a take-out
// written whatever the store shows (SPEC.md 6.11 step 4). A copy in doubt
// for RetireAfter/2 is judged so even when the store holds the
// transaction, unless it would be the owner there: sent again, it could
// meet the retry's copy while another ledger's pass retires that copy's
// writer, idle by then, from a read without it, counting the transaction
// twice. One that would be the owner stays: the retry's writer may be
// giving its own copy up to it.
func (l *Ledger) retractLate(ctx context.Context, fetched *tpncounter.Counter) error {
	now := l.now()
	for _, x := range slices.Sorted(maps.Keys(l.unacked)) { // in order: SPEC.md 6.11 step 4
		long := l.opts.RetireAfter > 0 && now.Sub(l.unacked[x]) >= l.opts.RetireAfter/2 && !brokenLongDoubt
		if fetched.Status(x) != tpncounter.Unknown && (!long || l.wouldOwn(fetched, x)) {
			continue
		}
		elsewhere, err := l.takenElsewhere(ctx, fetched, x, l.unacked[x])
		if err != nil {
			return err // the take-outs before it stay
		}
		if !elsewhere {
			continue
		}
		if err := l.takeOut(l.writer, l.cyc.Sent.Version(l.writer), false, x); err != nil { // the pending write's version
			return err
		}
		delete(l.unacked, x)
	}
	return nil
}

// wouldOwn reports whether this ledger's copy of x, in its pending write,
// would be the owner beside the copies fetched holds (its own earlier
// landed copies included).
func (l *Ledger) wouldOwn(fetched *tpncounter.Counter, x crdt.TxnID) bool {
	if brokenLongDoubtOwn {
		return false
	}
	both := fetched.Clone()
	if err := both.Merge(l.cyc.Local); err != nil {
		return false // judged by its records, as before
	}
	o, ok := both.Owner(x)
	return ok && o.Actor == l.writer
}

// write encodes merged and puts it with token (see put).
func (l *Ledger) write(ctx context.Context, merged *tpncounter.Counter, token store.Token, attempt int, applied []crdt.TxnID) (done bool, err error) {
	b, err := merged.MarshalBinary()
	if err != nil {
		l.unapply(merged, applied)
		return true, err
	}
	return l.put(ctx, merged, b, token, attempt, applied)
}

// put puts b, the encoding of merged, with token; applied lists the
// transactions this write carries for callers not yet told they landed. It
// reports done=false when the caller should run another attempt.
func (l *Ledger) put(ctx context.Context, merged *tpncounter.Counter, b []byte, token store.Token, attempt int, applied []crdt.TxnID) (done bool, err error) {
	err = l.store.Put(ctx, l.key, l.writer, b, token)
	l.stats.bytes = len(b)
	switch {
	case err == nil:
		l.cyc.Landed(merged, b)
		l.takenOut, l.stored = nil, merged.Version(l.writer)
		l.owe(merged)
		return true, nil
	case retry.Classify(err) == retry.Invalid:
		// Refused for what it is (too large, a bad key or token): it did
		// not land, and another attempt would fare no better.
		l.unapply(merged, applied)
		return true, fmt.Errorf("ledger %q: put: %w", l.key, err)
	case retry.Classify(err) == retry.Refused || brokenCancelRefused && errors.Is(err, context.Canceled):
		l.stats.fail('r')
		if brokenKeepRefused && len(applied) > 1 {
			applied = applied[:1] // broken: the others stay in the state
		}
		// Known not to have landed: forget it.
		l.unapply(merged, applied)
	default:
		// Ambiguous, or an error the store did not classify
		// (store.Siblings): kept pending (retry.Cycle).
		err = retry.AmbiguousErr(err)
		l.stats.fail('a')
		l.cyc.Ambiguous(merged)
		l.takenOut = nil // pending now
		for _, x := range applied {
			setIn(&l.unacked, x, l.now())
		}
	}
	if err := retry.Again(ctx, fmt.Sprintf("ledger %q: put", l.key), err, attempt, l.opts.RetryCount, l.opts.Backoff.Initial, l.opts.Backoff.Max); err != nil {
		return true, err
	}
	return false, nil
}

// owe adds to l.unindexed a record for each transaction of a write whose
// callers were not told it landed (l.unacked), now that st, holding it, has
// landed: a retry may come after later writes fold it out (SPEC.md 6.11
// step 3). flush writes them before the next cycle.
func (l *Ledger) owe(st *tpncounter.Counter) {
	if len(l.unacked) == 0 {
		return
	}
	now := l.now()
	maps.DeleteFunc(l.doubted, func(x crdt.TxnID, _ bool) bool { return !l.unsettled(x) })
	for x := range l.unacked {
		o, ok := st.Owner(x)
		if !ok {
			continue
		}
		if o.Actor == l.writer {
			setIn(&l.doubted, x, true)
		}
		setIn(&l.unindexed, x, Record{Txn: x, Amount: o.Amount, Writer: o.Actor, At: now, Version: max(st.Version(o.Actor), 1)})
		delete(l.giving, x)
		if o.Actor != l.writer && holdsAmount(st, l.writer, x, o.Amount) {
			// This writer's copy meets the owner's: watched, since the
			// owner may forget x without having seen it (SPEC.md 6.11
			// step 3).
			setIn(&l.met, x, metCopy{rec: Record{Txn: x, Amount: o.Amount, At: now}, holder: o.Actor})
		}
	}
	l.unacked = nil
}

// unapply takes txns back out of merged, a write known not to have landed,
// if it is cyc.Local (retry.Cycle.Undo), each retraction a newer version of
// the ledger's entry (at tpncounter.MaxSeq: start again from the store).
// Its entry is then ahead of the store if the write changed it (a Compact
// too; not others' entries, a pass's retirements: SPEC.md 6.9).
func (l *Ledger) unapply(merged *tpncounter.Counter, txns []crdt.TxnID) {
	l.cyc.Undo(merged, func(c *tpncounter.Counter) (bool, error) {
		for _, x := range txns {
			if _, err := c.Retract(l.writer, x); err != nil {
				return true, err
			}
		}
		return len(txns) > 0 || c.Version(l.writer) != l.stored, nil
	})
}

// Value returns the ledger's value: the merged siblings plus this ledger's
// own writes (read-your-writes even from a stale replica). It writes nothing.
// Writers that could not see each other may credit (or debit) past int64:
// Value then fails with crdt.ErrOverflow until a debit (or a credit) brings
// it back (SPEC.md 6.6).
func (l *Ledger) Value(ctx context.Context) (int64, error) {
	ctx, op := observe.Start(ctx, l.opts.Observer, "ledger", "read")
	defer op.End(panickedRead)
	v, e, err := l.exactValue(ctx, op.Observed(), true)
	op.End(e)
	if err != nil {
		return 0, err
	}
	return v.Int64(), nil
}

// exactValue is Value's read, exact past int64 (a Sharded sums these)
// unless fit (crdt.ErrOverflow), and its event when observed.
func (l *Ledger) exactValue(ctx context.Context, observed, fit bool) (*big.Int, observe.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	merged, err := l.readView(ctx, observed)
	var v *big.Int
	if err == nil {
		if v = merged.BigValue(); fit && !v.IsInt64() {
			v, err = nil, fmt.Errorf("%w: ledger %q: the value %s does not fit in int64", crdt.ErrOverflow, l.key, v)
		}
	}
	return v, l.readEvent(observed, err), err
}

// readView is read then merged, with l.mu held; observed, it starts the
// Observer's counts afresh (readEvent reports them).
func (l *Ledger) readView(ctx context.Context, observed bool) (*tpncounter.Counter, error) {
	if observed {
		l.stats = opStats{}
	}
	fetched, _, err := l.read(ctx)
	if err != nil {
		return nil, err
	}
	return l.cyc.Merged(fetched)
}

// readEvent is the event of a read (readView) that ended with err, when
// observed; l.mu is held.
func (l *Ledger) readEvent(observed bool, err error) observe.Event {
	if !observed {
		return observe.Event{}
	}
	return l.event("read", observe.OutcomeOf(err), 1, err)
}

// HasTransaction reports whether txn is held in some actor's history,
// reading like Value; one folded into a total is not (see Find, Status).
func (l *Ledger) HasTransaction(ctx context.Context, txn crdt.TxnID) (bool, error) {
	ctx, op := observe.Start(ctx, l.opts.Observer, "ledger", "read")
	if err := txn.Validate(); err != nil {
		op.End(refusal(err))
		return false, err
	}
	defer op.End(panickedRead)
	has, e, err := l.has(ctx, txn, op.Observed())
	op.End(e)
	return has, err
}

// has is HasTransaction's read, and its event when observed.
func (l *Ledger) has(ctx context.Context, txn crdt.TxnID, observed bool) (bool, observe.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	merged, err := l.readView(ctx, observed)
	return err == nil && merged.HasTransaction(txn), l.readEvent(observed, err), err
}

// Find reads and merges every sibling, lets this actor compact its own entry
// (dropping duplicates others own, folding beyond the history length) and
// writes the result back, collapsing the siblings it read; it returns a copy
// of the written counter. Ambiguous writes are retried as in Update.
func (l *Ledger) Find(ctx context.Context) (*tpncounter.Counter, error) {
	ctx, op := observe.Start(ctx, l.opts.Observer, "ledger", "find")
	defer op.End(panickedWrite)
	c, e, err := l.findEvent(ctx, op.Observed())
	op.End(e)
	return c, err
}

// findEvent is Find's work, with l.mu taken, and its event when observed.
func (l *Ledger) findEvent(ctx context.Context, observed bool) (*tpncounter.Counter, observe.Event, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	defer l.noteDoubt()
	if !observed {
		c, _, err := l.find(ctx)
		return c, observe.Event{}, err
	}
	l.stats = opStats{}
	c, attempts, err := l.find(ctx)
	return c, l.event("find", observe.OutcomeOf(err), attempts, err), err
}

// find is Find with l.mu held; it also returns the attempts made.
func (l *Ledger) find(ctx context.Context) (*tpncounter.Counter, int, error) {
	if err := l.flush(ctx); err != nil {
		return nil, 1, err
	}
	return l.rewrite(ctx, 1)
}

// rewrite reads, lets this actor compact its own entry and writes the
// result back, from attempt first; it returns a copy of what it wrote.
func (l *Ledger) rewrite(ctx context.Context, first int) (*tpncounter.Counter, int, error) {
	for attempt := first; ; attempt++ {
		fetched, token, err := l.read(ctx)
		if err != nil {
			return nil, attempt, err
		}
		merged, err := l.cyc.Merged(fetched)
		if err == nil {
			err = l.cede(ctx, merged)
		}
		if err != nil {
			return nil, attempt, err
		}
		if _, err := merged.Compact(l.writer); err != nil {
			return nil, attempt, err
		}
		l.retireIdle(ctx, merged, false)
		done, err := l.write(ctx, merged, token, attempt, nil)
		if done {
			if err != nil {
				return nil, attempt, err
			}
			return merged.Clone(), attempt, nil
		}
	}
}

// event is the Observer's event of an operation, with the state l last read
// or wrote.
func (l *Ledger) event(op, outcome string, attempts int, err error) observe.Event {
	e := observe.Event{Component: "ledger", Op: op, Outcome: outcome, Err: err,
		Attempts:  attempts,
		Ambiguous: l.stats.ambiguous, Refused: l.stats.refused, Siblings: l.stats.siblings, Bytes: l.stats.bytes,
		Retired: l.stats.retired, Folded: l.stats.folded}
	if c := l.cyc.Local; c != nil {
		st := c.Stats()
		e.Actors, e.Conflicts = st.Actors, st.Conflicts
	}
	return e
}

// outcomeName maps a transaction's outcome to an observe outcome.
func outcomeName(o tpncounter.Outcome) string {
	switch o {
	case tpncounter.Applied:
		return observe.Applied
	case tpncounter.Duplicate:
		return observe.Duplicate
	case tpncounter.DuplicateFolded:
		return observe.DuplicateFolded
	case tpncounter.Superseded:
		return observe.Superseded
	}
	return observe.OK
}
