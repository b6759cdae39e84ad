package ledger_test

// Tests, from a review, of the outbox the package documentation gives for
// running a side effect once ("Side effects", ExampleResult_outbox):
// entries keyed by transaction id, upserted by every delivery answered
// without an error and not Superseded, the done flag left alone by
// upserts, one consumer sending each entry not done, done entries kept for
// as long as a retry can arrive.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/ledger"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
)

// docOutbox is the documented outbox, with the amount each receipt
// names, what was sent, and (for the retention tests) when each entry was
// made, so that entries can be expired with the records.
type docOutbox struct {
	mu      sync.Mutex
	receipt map[crdt.TxnID]int64
	made    map[crdt.TxnID]time.Time
	done    map[crdt.TxnID]bool
	sent    map[crdt.TxnID][]int64
}

func newDocOutbox() *docOutbox {
	return &docOutbox{receipt: map[crdt.TxnID]int64{}, made: map[crdt.TxnID]time.Time{}, done: map[crdt.TxnID]bool{}, sent: map[crdt.TxnID][]int64{}}
}

// deliver is what ExampleResult_outbox does with a delivery's answer: an
// answer without error that is not Superseded upserts the receipt with the
// amount of the copy that counts as the delivery saw it (Result.Owner).
func (o *docOutbox) deliver(now time.Time, txn crdt.TxnID, r ledger.Result, err error) {
	if err != nil || r.Outcome == tpncounter.Superseded {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.receipt[txn]; !ok {
		o.made[txn] = now
	}
	o.receipt[txn] = r.Owner.Amount // leaves done alone
}

func (o *docOutbox) consume() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for txn, amt := range o.receipt {
		if !o.done[txn] {
			o.sent[txn] = append(o.sent[txn], amt)
			o.done[txn] = true
		}
	}
}

// expire drops the entries made more than ttl before now: "keeping entries
// as long as records", whose store expires them with a TTL.
func (o *docOutbox) expire(now time.Time, ttl time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for txn, at := range o.made {
		if now.Sub(at) > ttl {
			delete(o.receipt, txn)
			delete(o.done, txn)
			delete(o.made, txn)
		}
	}
}

// ttlStore is a records store (Options.Records) with a TTL, as package
// ledger advises ("Caveats", Options.Records): a key not written for ttl
// reads empty. It says its TTL (store.Expiring) unless silent.
type ttlStore struct {
	*memory.Siblings
	now    func() time.Time
	ttl    time.Duration
	silent bool

	mu      sync.Mutex
	written map[string]time.Time
}

func (s *ttlStore) Put(ctx context.Context, key string, actor crdt.ActorID, v []byte, token store.Token) error {
	err := s.Siblings.Put(ctx, key, actor, v, token)
	if err == nil {
		s.mu.Lock()
		s.written[key] = s.now()
		s.mu.Unlock()
	}
	return err
}

func (s *ttlStore) TTL() time.Duration { return cond(s.silent, 0, s.ttl) }

func (s *ttlStore) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	s.mu.Lock()
	at, ok := s.written[key]
	s.mu.Unlock()
	if ok && s.now().Sub(at) > s.ttl {
		return nil, nil, nil // expired
	}
	return s.Siblings.Fetch(ctx, key)
}

// TestOutboxDoneEntriesOutliveRecords: the package doc ("Side effects")
// keeps an outbox's done entries for as long as a retry can arrive, not
// only as long as the transaction's records. A late retry is a Duplicate
// whenever the counter still holds the transaction (SPEC.md 6.11: "Beyond
// W, a call the counter still recognises (6.8) is answered as above"),
// after its records expired, and the outbox upserts on Duplicate.
// Schedule: a credits order-1 at t0 (Applied; receipt sent); its records
// expire at t0+TTL (a records store with the TTL the package advises); a
// late retry at t0+TTL+1h, on a or on a new ledger b, is answered
// Duplicate (counted once, value 100). With the done entry kept: one
// receipt. With it expired at the records' TTL (what the package doc
// advised before a review found this): the retry's upsert brings it back
// and the receipt is sent twice.
func TestOutboxDoneEntriesOutliveRecords(t *testing.T) {
	for _, keep := range []bool{true, false} {
		for _, timed := range []bool{false, true} {
			for _, other := range []bool{false, true} {
				t.Run(fmt.Sprintf("keepDone=%v/timed=%v/otherLedger=%v", keep, timed, other), func(t *testing.T) {
					ctx := context.Background()
					t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
					clock := newFakeClock(t0)
					ttl := ledger.DefaultRetryWindow + ledger.DefaultFutureSkew + time.Minute
					recs := &ttlStore{Siblings: memory.NewSiblings(), now: clock.Now, ttl: ttl, written: map[string]time.Time{}}
					accounts := memory.NewSiblings()
					open := func(actor crdt.ActorID) *ledger.Ledger {
						o := ledger.Options{Actor: actor, Records: recs, Clock: clock.Now}
						if timed {
							o.Counter.TxnTime = tpncounter.TimeUUID
						}
						l, err := ledger.New(accounts, "wallet", o)
						require.NoError(t, err)
						return l
					}
					x := crdt.TxnID("order-1")
					if timed {
						x = crdt.TxnID(timeid.New(t0).String())
					}
					ob := newDocOutbox()
					a := open("a")
					r, err := a.Credit(ctx, x, 100)
					ob.deliver(clock.Now(), x, r, err)
					ob.consume()
					require.Equal(t, []int64{100}, ob.sent[x])

					clock.Add(ttl + time.Hour)
					if !keep {
						ob.expire(clock.Now(), ttl) // only as long as records
					}
					l := a
					if other {
						l = open("b")
					}
					r, err = l.Credit(ctx, x, 100)
					t.Logf("late retry: %v %v, value %d", r.Outcome, err, r.Value)
					ob.deliver(clock.Now(), x, r, err)
					ob.consume()
					v, verr := open("reader").Value(ctx)
					require.NoError(t, verr)
					require.Equal(t, int64(100), v, "order-1 counts once")
					require.Equal(t, tpncounter.Duplicate, r.Outcome)
					if keep {
						require.Len(t, ob.sent[x], 1, "one receipt")
					} else {
						require.Len(t, ob.sent[x], 2, "an entry expired with the records comes back")
					}
				})
			}
		}
	}
}

// obSched runs goroutines one store call at a time: each lane's calls
// park in its faulty wrapper's Hook until the scheduler grants them, so
// an interleaving of the lanes' store calls is chosen exactly, with no
// timing involved. A ledger makes its store calls one at a time here (one
// transaction per call, no retirement pass), so a granted lane either
// parks again or finishes.
type obSched struct {
	on     bool
	events chan obEvent
	grants []chan struct{}
}

type obEvent struct {
	lane int
	done bool
}

func newObSched(lanes int) *obSched {
	s := &obSched{events: make(chan obEvent)}
	for range lanes {
		s.grants = append(s.grants, make(chan struct{}))
	}
	return s
}

// hook is lane's faulty Hook.
func (s *obSched) hook(lane int) func(context.Context, faulty.Call, bool) error {
	return func(_ context.Context, _ faulty.Call, after bool) error {
		if after || !s.on {
			return nil
		}
		s.events <- obEvent{lane: lane}
		<-s.grants[lane]
		return nil
	}
}

// run runs fs[i] on lane i at once; choose picks the lane that goes on
// from those parked (sorted) given the lane that went on last.
func (s *obSched) run(fs []func(), choose func(parked []int, last int) int) {
	s.on = true
	defer func() { s.on = false }()
	running := len(fs)
	for i, f := range fs {
		go func() {
			f()
			s.events <- obEvent{lane: i, done: true}
		}()
	}
	parked := map[int]bool{}
	last := -1
	for {
		for running > 0 {
			e := <-s.events
			running--
			if !e.done {
				parked[e.lane] = true
			}
		}
		if len(parked) == 0 {
			return
		}
		var ls []int
		for l := range parked {
			ls = append(ls, l)
		}
		slices.Sort(ls)
		last = choose(ls, last)
		delete(parked, last)
		running++
		s.grants[last] <- struct{}{}
	}
}

// obDFS enumerates choice sequences depth first: each run replays a
// prefix and takes the first option after it; next moves to the following
// sequence. Interleavings are bounded by preemptions: switching away from
// a lane that could go on.
type obDFS struct {
	prefix, taken, width []int
	bound, used          int
}

func (d *obDFS) pick(n int) int {
	i := len(d.taken)
	v := 0
	if i < len(d.prefix) {
		v = d.prefix[i]
	}
	d.taken, d.width = append(d.taken, v), append(d.width, n)
	return v
}

// choose is a obSched chooser under the preemption bound.
func (d *obDFS) choose(parked []int, last int) int {
	if slices.Contains(parked, last) {
		if d.used >= d.bound {
			return last
		}
		// options: last first, then the others (each a preemption)
		opts := append([]int{last}, slices.DeleteFunc(slices.Clone(parked), func(l int) bool { return l == last })...)
		v := opts[d.pick(len(opts))]
		if v != last {
			d.used++
		}
		return v
	}
	return parked[d.pick(len(parked))]
}

// next sets up the following run; false when every sequence was run.
func (d *obDFS) next() bool {
	for i := len(d.taken) - 1; i >= 0; i-- {
		if d.taken[i]+1 < d.width[i] {
			d.prefix = append(slices.Clone(d.taken[:i]), d.taken[i]+1)
			d.taken, d.width, d.used = nil, nil, 0
			return true
		}
	}
	return false
}

// obMode is a lane's faults while the deliveries run at once.
type obMode string

const (
	rmPass      obMode = "pass"
	rmAckAll    obMode = "lose-ack"  // every account Put lands, its ack lost
	rmLoseAll   obMode = "lose"      // every account Put lost (ambiguous)
	rmRefuseAll obMode = "refuse"    // every account Put refused
	rmHoldAll   obMode = "hold"      // every account Put held in flight
	rmHold1     obMode = "hold1"     // the first account Put held, the retry attempt passes
	rmStale1    obMode = "stale1"    // the first account Fetch stale
	rmRecRefuse obMode = "recRefuse" // every record Put refused
	rmRecFetch  obMode = "recFetch"  // every record Fetch refused
)

func obPolicy(mode *obMode) faulty.Policy {
	var putUsed, fetchUsed bool
	return func(c faulty.Call) faulty.Fault {
		rec := ledger.IsRecordKey(c.Key)
		put := c.Method == faulty.MethodPut
		fetch := c.Method == faulty.MethodFetch
		switch *mode {
		case rmAckAll:
			if put && !rec {
				return faulty.LoseAck
			}
		case rmLoseAll:
			if put && !rec {
				return faulty.Lose
			}
		case rmRefuseAll:
			if put && !rec {
				return faulty.Refuse
			}
		case rmHoldAll:
			if put && !rec {
				return faulty.Hold
			}
		case rmHold1:
			if put && !rec && !putUsed {
				putUsed = true
				return faulty.Hold
			}
		case rmStale1:
			if fetch && !rec && !fetchUsed {
				fetchUsed = true
				return faulty.Stale
			}
		case rmRecRefuse:
			if put && rec {
				return faulty.Refuse
			}
		case rmRecFetch:
			if fetch && rec {
				return faulty.Refuse
			}
		}
		return faulty.Pass
	}
}

// obSeen counts what the runs of TestOutboxConcurrentDeliveriesEnumerated
// met, to show that the faults reached the callers.
var obSeen struct{ appliedTwice, retried, landedLate atomic.Int64 }

// obCase is one schedule of TestOutboxConcurrentDeliveriesEnumerated.
type obCase struct {
	modes   []obMode // per delivering lane
	retryOn []int    // per delivering lane: where its caller retries after an error
	deliver int      // held writes: 0 before the retries, 1 after them, 2 only at quiescence
}

func (c obCase) String() string {
	return fmt.Sprintf("modes %v, retries on %v, held delivered %s", c.modes, c.retryOn, []string{"before retries", "after retries", "at quiescence"}[c.deliver])
}

// runObCase runs c under every interleaving the DFS allows and returns
// the number of runs and the first failure.
func runObCase(c obCase, bound int) (int, error) {
	d := &obDFS{bound: bound}
	n := 0
	for {
		n++
		if err := runObOnce(c, d); err != nil {
			return n, fmt.Errorf("%v, interleaving %v: %w", c, d.taken, err)
		}
		if !d.next() {
			return n, nil
		}
	}
}

func runObOnce(c obCase, d *obDFS) error {
	ctx := context.Background()
	nLanes := len(c.modes) + 1 // one more ledger, which only takes retries
	mem := memory.NewSiblings()
	sch := newObSched(nLanes)
	modes := make([]obMode, nLanes)
	fss := make([]*faulty.Siblings, nLanes)
	ls := make([]*ledger.Ledger, nLanes)
	for i := range nLanes {
		modes[i] = rmPass
		fss[i] = faulty.NewSiblings(mem, faulty.Options{Policy: obPolicy(&modes[i]), Hook: sch.hook(i), RecordWrites: true})
		l, err := ledger.New(fss[i], "wallet", ledger.Options{Actor: crdt.ActorID(string(rune('a' + i))), RetryCount: 1, Backoff: ledger.Backoff{Initial: -1}})
		if err != nil {
			return err
		}
		if _, err := l.Value(ctx); err != nil { // a first read: what a stale read shows
			return err
		}
		ls[i] = l
	}
	const x, amount = crdt.TxnID("order-1"), int64(100)
	ob := newDocOutbox()
	var log []string
	var logMu sync.Mutex
	call := func(i int) error {
		r, err := ls[i].Credit(ctx, x, amount)
		logMu.Lock()
		log = append(log, fmt.Sprintf("%c: %v owner=%s/%d err=%v", 'a'+i, r.Outcome, r.Owner.Actor, r.Owner.Amount, err))
		logMu.Unlock()
		ob.deliver(time.Time{}, x, r, err)
		ob.consume()
		return err
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s; answers %v; sent %v", fmt.Sprintf(format, args...), log, ob.sent[x])
	}
	// The deliveries at once, each lane under its mode.
	copy(modes, c.modes)
	errs := make([]error, len(c.modes))
	var fs []func()
	for i := range c.modes {
		fs = append(fs, func() { errs[i] = call(i) })
	}
	sch.run(fs, d.choose)
	for i := range modes {
		modes[i] = rmPass
	}
	deliver := func() error {
		for _, f := range fss {
			if err := f.DeliverAll(); err != nil {
				return err
			}
		}
		return nil
	}
	if c.deliver == 0 {
		if err := deliver(); err != nil {
			return err
		}
	}
	applied := 0
	for _, e := range log {
		if strings.Contains(e, " applied ") {
			applied++
		}
	}
	if applied > 1 {
		obSeen.appliedTwice.Add(1)
	}
	for _, f := range fss {
		if f.Held() > 0 && c.deliver > 0 {
			obSeen.landedLate.Add(1)
			break
		}
	}
	// Each caller whose delivery failed retries elsewhere until answered.
	for i, err := range errs {
		if err != nil {
			obSeen.retried.Add(1)
		}
		for try := 0; err != nil; try++ {
			if !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
				return fail("delivery %d: %v", i, err)
			}
			if try == 5 {
				return fail("delivery %d still fails after 5 retries: %v", i, err)
			}
			err = call(c.retryOn[i])
		}
	}
	if c.deliver == 1 {
		if err := deliver(); err != nil {
			return err
		}
	}
	// Quiescence: held writes land, every ledger reads and writes.
	if err := deliver(); err != nil {
		return err
	}
	for range 3 {
		for _, l := range ls {
			if _, err := l.Find(ctx); err != nil {
				return fail("find: %v", err)
			}
		}
	}
	r, err := ledger.New(mem, "wallet", ledger.Options{Actor: "reader"})
	if err != nil {
		return err
	}
	v, err := r.Value(ctx)
	if err != nil {
		return err
	}
	ob.consume()
	if v != amount {
		return fail("value %d, want %d (counted once)", v, amount)
	}
	if !slices.Equal(ob.sent[x], []int64{amount}) {
		return fail("receipts sent %v, want one of %d", ob.sent[x], amount)
	}
	return nil
}

// TestOutboxConcurrentDeliveriesEnumerated: order-1 (100) delivered to two
// ledgers (a, b) at once, or three (a, b, c), over one memory account,
// each lane under a fault mode (lost acks, lost, refused and held puts, a
// stale read, refused record puts and fetches), every interleaving of
// their store calls with at most one preemption with two ledgers, none
// with three (two and one with COUNTERKIT_CASES above 1); each caller whose call
// failed retries on every possible ledger until answered (with three, by
// default, all on the next delivering ledger or all on the spare one;
// every mix with COUNTERKIT_CASES above 1); held writes land
// before the retries, after them, or at quiescence. After quiescence the
// value must be 100 and the documented outbox must have sent one receipt
// of 100 (package doc, "Side effects"). An outbox whose upsert clears the
// done flag (as one deleting sent entries would) fails it at once.
func TestOutboxConcurrentDeliveriesEnumerated(t *testing.T) {
	two := []obMode{rmPass, rmAckAll, rmLoseAll, rmRefuseAll, rmHoldAll, rmHold1, rmStale1, rmRecRefuse, rmRecFetch}
	three := []obMode{rmPass, rmAckAll, rmHoldAll, rmStale1, rmRecRefuse}
	var cases []obCase
	type setup struct {
		lanes int
		modes []obMode
		bound int
	}
	total, fails := 0, 0
	setups := []setup{{2, two, 1}, {3, three, 0}} // 4 s of CPU; every mix of retries with three: 7.4 s
	mixes := proptest.Scale(1) > 1
	switch {
	case proptest.Scale(1) > 1:
		setups = []setup{{2, two, 2}, {3, three, 1}} // about 50 s
	case testing.Short():
		setups = []setup{{2, two, 0}} // the race pass: a sample
	}
	for _, s := range setups {
		var walk func(modes []obMode, retry []int)
		walk = func(modes []obMode, retry []int) {
			if len(modes) < s.lanes {
				for _, m := range s.modes {
					walk(append(slices.Clip(modes), m), retry)
				}
				return
			}
			if i := len(retry); i < s.lanes {
				// a retry reaches the next delivering ledger or the spare
				// one (index lanes), which took no delivery
				for _, r := range []int{(i + 1) % s.lanes, s.lanes} {
					if i > 0 && s.lanes > 2 && !mixes && (r == s.lanes) != (retry[0] == s.lanes) {
						continue // with three lanes, all to the next or all to the spare
					}
					walk(modes, append(slices.Clip(retry), r))
				}
				return
			}
			timings := 1 // when held writes land matters only if some are held
			if slices.Contains(modes, rmHoldAll) || slices.Contains(modes, rmHold1) {
				timings = 3
			}
			for dl := range timings {
				cases = append(cases, obCase{modes: modes, retryOn: retry, deliver: dl})
			}
		}
		walk(nil, nil)
		for _, c := range cases {
			n, err := runObCase(c, s.bound)
			total += n
			if err != nil {
				fails++
				if fails <= 5 {
					t.Error(err)
				}
			}
		}
		t.Logf("%d lanes: %d cases, %d runs so far", s.lanes, len(cases), total)
		cases = nil
	}
	t.Logf("%d runs, %d failing cases; runs with two applied answers %d, with a caller retrying %d, with writes landing late %d",
		total, fails, obSeen.appliedTwice.Load(), obSeen.retried.Load(), obSeen.landedLate.Load())
	require.Positive(t, obSeen.appliedTwice.Load())
	require.Positive(t, obSeen.retried.Load())
	require.Positive(t, obSeen.landedLate.Load())
}

// TestLimitOutboxReceiptOfTwoAmounts: the limit ExampleResult_outbox
// states. Schedule: order-2 reaches app-b as 60 and app-a as 50 at once
// (a caller's reuse of an id; each one's reads miss the other's write, as
// b's do in ExampleResult_outbox); b answers first, Applied with Owner 60,
// and the consumer sends "60"; a answers Applied with Owner 50, whose
// upsert finds the entry done. The value counts a's 50 (SPEC.md 6.6: the
// smallest actor id's copy), b's retry is Superseded, and the one receipt
// sent names 60.
func TestLimitOutboxReceiptOfTwoAmounts(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	a, err := ledger.New(blindStore{st}, "wallet-7", ledger.Options{Actor: "app-a"})
	require.NoError(t, err)
	b, err := ledger.New(blindStore{st}, "wallet-7", ledger.Options{Actor: "app-b"})
	require.NoError(t, err)
	const x = crdt.TxnID("order-2")
	ob := newDocOutbox()
	rb, err := b.Credit(ctx, x, 60)
	ob.deliver(time.Time{}, x, rb, err)
	ob.consume()
	ra, err := a.Credit(ctx, x, 50)
	ob.deliver(time.Time{}, x, ra, err)
	ob.consume()
	t.Logf("b: %v owner %d; a: %v owner %d", rb.Outcome, rb.Owner.Amount, ra.Outcome, ra.Owner.Amount)
	b2, err := ledger.New(st, "wallet-7", ledger.Options{Actor: "app-b"})
	require.NoError(t, err)
	r, err := b2.Credit(ctx, x, 60) // the losing delivery, retried
	ob.deliver(time.Time{}, x, r, err)
	ob.consume()
	require.NoError(t, err)
	require.Equal(t, tpncounter.Superseded, r.Outcome)
	v, err := b2.Value(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(50), v, "a's 50 counts")
	require.Equal(t, []int64{60}, ob.sent[x], "the stated limit: the one receipt sent names b's 60")
}
