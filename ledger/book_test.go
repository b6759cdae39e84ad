package ledger

// The Book tests run one Book, many keys and a small MaxOpen (so ledgers
// are dropped and re-opened all the time) over the memory store wrapped in
// faulty.Siblings, against a model of what each delivery was told.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./ledger -run '^TestBook'
// Scale:  COUNTERKIT_CASES=10 go test ./ledger -run '^TestBookConcurrent'

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/observe"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
	"github.com/counterkit/counterkit/tpncounter"
)

// check verifies the Book's bookkeeping: every entry in exactly one state,
// the counts agree, pending entries still pending, and idle droppable
// ledgers only while no more than max are open.
func (b *Book) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	idle := 0
	for el := b.idle.Front(); el != nil; el = el.Next() {
		e := el.Value.(*bookEntry)
		if e.idle != el || e.refs != 0 || e.pending || b.entries[e.key] != e {
			return fmt.Errorf("idle list holds %q with %d refs, pending %v, in map %v", e.key, e.refs, e.pending, b.entries[e.key] == e)
		}
		idle++
	}
	inUse, pending := 0, 0
	for key, e := range b.entries {
		switch {
		case e.refs > 0:
			inUse++
			if e.pending || e.idle != nil {
				return fmt.Errorf("%q in use and pending %v, idle %v", key, e.pending, e.idle != nil)
			}
		case e.pending:
			pending++
			if !b.keep(e.l) {
				return fmt.Errorf("%q kept as pending, but its ledger is not", key)
			}
		case e.idle == nil:
			return fmt.Errorf("%q idle, not pending, not in the idle list", key)
		}
	}
	if inUse != b.inUse || pending != b.pending || len(b.entries) != inUse+pending+idle {
		return fmt.Errorf("%d open: %d in use (counted %d), %d pending (counted %d), %d idle", len(b.entries), inUse, b.inUse, pending, b.pending, idle)
	}
	if len(b.entries) > b.max && idle > 0 {
		return fmt.Errorf("%d open over MaxOpen %d with %d idle droppable ledgers", len(b.entries), b.max, idle)
	}
	return nil
}

// overlap is a store that reports two calls on one key at once: the Book
// serialises each key, so none of its store calls on a key overlap.
type overlap struct {
	store.Siblings
	mu    sync.Mutex
	busy  map[string]bool
	hits  atomic.Int64
	pause func() // runs inside every call; nil yields the processor
}

func newOverlap(s store.Siblings) *overlap { return &overlap{Siblings: s, busy: map[string]bool{}} }

func (o *overlap) enter(key string) func() {
	if IsRecordKey(key) {
		return func() {} // two calls of one transaction may read its record at once
	}
	o.mu.Lock()
	if o.busy[key] {
		o.hits.Add(1)
	}
	o.busy[key] = true
	o.mu.Unlock()
	if o.pause != nil {
		o.pause()
	} else {
		runtime.Gosched() // widen the window for another call on key
	}
	return func() {
		o.mu.Lock()
		delete(o.busy, key)
		o.mu.Unlock()
	}
}

func (o *overlap) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	defer o.enter(key)()
	return o.Siblings.Fetch(ctx, key)
}

func (o *overlap) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	defer o.enter(key)()
	return o.Siblings.Put(ctx, key, actor, value, token)
}

// joinedAt is the join of key's live siblings in inner.
func joinedAt(inner store.Siblings, key string, opts tpncounter.Options) (*tpncounter.Counter, error) {
	sibs, _, err := inner.Fetch(context.Background(), key)
	if err != nil {
		return nil, err
	}
	j, _ := tpncounter.New(opts)
	for _, v := range sibs {
		c, _ := tpncounter.New(opts)
		if err := c.UnmarshalBinary(v); err != nil {
			return nil, err
		}
		if err := j.Merge(c); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// bookSim configures one concurrent run.
type bookSim struct {
	keys, workers, maxOpen, txns int
	// dropPending makes the Book drop idle ledgers with a pending write
	// (broken).
	dropPending bool
	// rows runs the Book on a RowStore (one row per actor, as on
	// Cassandra); untimedRows on one whose late Puts take their write
	// time as they land (a broken double).
	rows, untimedRows bool
}

// bookRun is what one run saw.
type bookRun struct {
	acked, abandonedAmbiguous, abandonedRefused, doubled, overlaps int
	stats                                                          BookStats
	faults                                                         map[faulty.Fault]int
}

// runBookSim runs cfg.txns credits, spread over cfg.keys keys, through one
// Book from cfg.workers goroutines over a faulty store with stale reads;
// a third are delivered to two workers at once. A worker retries a failed
// credit, or gives it up (half the time after an error), as a client that
// times out would. Then, with faults off, held writes delivered and
// LandPending run, each key must hold, exactly once, every credit that
// was acknowledged and every one given up after crdt.ErrAmbiguousWrite
// (the key's ledger kept it pending and landed it), and its value must be
// the sum of the distinct credits it holds. The Book's bookkeeping is
// checked after every operation, and no two store calls on a key overlap.
func runBookSim(seed int64, cfg bookSim) (bookRun, error) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	counter := tpncounter.Options{HistoryLength: tpncounter.MaxHistoryLength}
	var inner store.Siblings = memory.NewSiblings()
	if cfg.rows || cfg.untimedRows {
		inner = &RowStore{Untimed: cfg.untimedRows}
	}
	fs := faulty.NewSiblings(inner, faulty.Options{RecordWrites: true,
		Policy: FreshRecords(faulty.Seeded(seed, faulty.Rates{Refuse: 0.05, LoseAck: 0.08, Lose: 0.15, Hold: 0.02, Stale: 0.1, MaxStaleness: 2}))})
	ov := newOverlap(fs)
	var st store.Siblings = ov
	if cfg.rows || cfg.untimedRows {
		st = StampPuts(ov)
	}
	b, err := NewBook(st, BookOptions{MaxOpen: cfg.maxOpen,
		Options: Options{Actor: "svc", RetryCount: 1, Backoff: Backoff{Initial: -1}, Counter: counter}})
	if err != nil {
		return bookRun{}, err
	}
	if cfg.dropPending {
		b.keep = func(*Ledger) bool { return false }
	}

	type delivery struct {
		key    string
		txn    crdt.TxnID
		amount int64
	}
	var run bookRun
	amounts := map[crdt.TxnID]int64{}
	keyOf := map[crdt.TxnID]string{}
	work := make([][]delivery, cfg.workers)
	for i := 0; i < cfg.txns; i++ {
		d := delivery{key: fmt.Sprintf("acct/%d", rng.Intn(cfg.keys)), txn: crdt.TxnID(fmt.Sprintf("t%d", i)), amount: int64(1 + rng.Intn(100))}
		amounts[d.txn], keyOf[d.txn] = d.amount, d.key
		w := rng.Intn(cfg.workers)
		work[w] = append(work[w], d)
		if rng.Intn(3) == 0 {
			run.doubled++
			v := (w + 1 + rng.Intn(cfg.workers-1)) % cfg.workers
			work[v] = append(work[v], d)
		}
	}

	// The model: what the deliveries were told, per transaction.
	var mu sync.Mutex
	acked := map[crdt.TxnID]bool{}
	ambiguous := map[crdt.TxnID]bool{} // given up after ErrAmbiguousWrite: must land
	refused := map[crdt.TxnID]bool{}   // given up after ErrUnavailable: may land
	errs := make([]error, cfg.workers)
	var wg sync.WaitGroup
	for w := range work {
		wg.Add(1)
		giveUp := rand.New(rand.NewSource(rng.Int63()))
		go func() {
			defer wg.Done()
			for _, d := range work[w] {
				for attempt := 0; ; attempt++ {
					res, err := b.Credit(ctx, d.key, d.txn, d.amount)
					if cerr := b.check(); cerr != nil {
						errs[w] = cerr
						return
					}
					if err == nil {
						if !res.Landed || res.Writer == "" {
							errs[w] = fmt.Errorf("%s on %s: answered %+v", d.txn, d.key, res)
							return
						}
						mu.Lock()
						acked[d.txn] = true
						mu.Unlock()
						break
					}
					amb, una := errors.Is(err, crdt.ErrAmbiguousWrite), errors.Is(err, crdt.ErrUnavailable)
					if !amb && !una || attempt > 50 {
						errs[w] = fmt.Errorf("%s on %s: %w", d.txn, d.key, err)
						return
					}
					if giveUp.Intn(2) == 0 {
						mu.Lock()
						if amb {
							ambiguous[d.txn] = true
						} else {
							refused[d.txn] = true
						}
						mu.Unlock()
						break
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return run, err
	}

	fs.SetPolicy(nil)
	if err := fs.DeliverAll(); err != nil {
		return run, err
	}
	if err := b.LandPending(ctx); err != nil {
		return run, err
	}
	if err := b.check(); err != nil {
		return run, err
	}
	run.stats = b.Stats()
	if run.stats.Pending != 0 || run.stats.InUse != 0 || run.stats.Open > cfg.maxOpen {
		return run, fmt.Errorf("after LandPending: %+v, MaxOpen %d", run.stats, cfg.maxOpen)
	}
	run.acked, run.abandonedAmbiguous, run.abandonedRefused = len(acked), len(ambiguous), len(refused)
	run.overlaps, run.faults = int(ov.hits.Load()), fs.Counts()
	if run.overlaps > 0 {
		return run, fmt.Errorf("%d store calls overlapped another on the same key", run.overlaps)
	}

	for k := 0; k < cfg.keys; k++ {
		key := fmt.Sprintf("acct/%d", k)
		c, err := joinedAt(inner, key, counter)
		if err != nil {
			return run, fmt.Errorf("%s: %w", key, err)
		}
		var want int64
		for txn, amount := range amounts {
			if keyOf[txn] != key {
				continue
			}
			held := c.Status(txn) != tpncounter.Unknown
			switch {
			case acked[txn] && !held:
				return run, fmt.Errorf("%s: acknowledged %s is not stored", key, txn)
			case ambiguous[txn] && !held:
				return run, fmt.Errorf("%s: %s, given up after an ambiguous write, never landed (its pending ledger was dropped?)", key, txn)
			case held && !acked[txn] && !ambiguous[txn] && !refused[txn]:
				return run, fmt.Errorf("%s: %s is stored but was never answered", key, txn)
			}
			if held {
				want += amount
			}
		}
		if got := c.Value(); got != want {
			return run, fmt.Errorf("%s holds %d, want %d: a transaction counted twice or lost", key, got, want)
		}
		if got, err := b.Value(ctx, key); err != nil || got != want {
			return run, fmt.Errorf("%s: Book.Value %d (%v), want %d", key, got, err, want)
		}
	}
	return run, b.check()
}

// TestBookConcurrent: 6 workers, 48 keys, MaxOpen 6, 800 credits, lost acks, lost,
// held and refused writes, stale reads; see runBookSim.
func TestBookConcurrent(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s (the goroutines' interleaving is not replayed)", seed, proptest.Replay(t, seed))
	run, err := runBookSim(seed, bookSim{keys: 48, workers: 6, maxOpen: 6, txns: proptest.Scale(800)})
	require.NoError(t, err)
	t.Logf("%d acknowledged, %d given up after an ambiguous write (landed by their pending ledger), %d given up after a refusal; %d delivered twice; ledgers opened %d, dropped %d; faults %v",
		run.acked, run.abandonedAmbiguous, run.abandonedRefused, run.doubled, run.stats.Opened, run.stats.Evicted, run.faults)
	require.Positive(t, run.abandonedAmbiguous)
	require.Positive(t, run.stats.Evicted)
}

// TestBookConcurrentRowsPerActor: the same on a store with one row per
// actor (RowStore, as on Cassandra), where the Book's writes to a key,
// its transaction records included, replace its own earlier row. On a
// double whose held writes take their write time as they land, a late
// write replaces a newer one, and the simulation catches that.
func TestBookConcurrentRowsPerActor(t *testing.T) {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s (the goroutines' interleaving is not replayed)", seed, proptest.Replay(t, seed))
	run, err := runBookSim(seed, bookSim{keys: 48, workers: 6, maxOpen: 6, txns: proptest.Scale(800), rows: true})
	require.NoError(t, err)
	t.Logf("%d acknowledged, %d given up after an ambiguous write, %d after a refusal; %d delivered twice; faults %v",
		run.acked, run.abandonedAmbiguous, run.abandonedRefused, run.doubled, run.faults)
	require.Positive(t, run.faults[faulty.Hold])

	rng := rand.New(rand.NewSource(seed))
	n := proptest.Scale(20)
	for i := 0; i < n; i++ {
		if _, err := runBookSim(rng.Int63(), bookSim{keys: 48, workers: 6, maxOpen: 6, txns: 400, untimedRows: true}); err != nil {
			t.Logf("late writes landing with their landing time caught after %d runs: %v", i+1, err)
			return
		}
	}
	t.Fatalf("seed %d: %d runs never caught late writes replacing newer rows", seed, n)
}

// TestBookCatchesDroppedPending: a Book that drops idle ledgers holding a
// pending write loses the writes given up after ErrAmbiguousWrite, which
// the key's next write should have landed; runBookSim catches it.
func TestBookCatchesDroppedPending(t *testing.T) {
	seed := proptest.Seed()
	rng := rand.New(rand.NewSource(seed))
	n := proptest.Scale(5)
	for i := 0; i < n; i++ {
		_, err := runBookSim(rng.Int63(), bookSim{keys: 48, workers: 6, maxOpen: 6, txns: 400, dropPending: true})
		if err != nil {
			t.Logf("caught after %d runs: %v", i+1, err)
			require.ErrorContains(t, err, "never landed")
			return
		}
	}
	t.Fatalf("seed %d: %d runs never caught a Book dropping pending ledgers", seed, n)
}

// TestBookKeepsPending: with MaxOpen 1, a key whose write was ambiguous
// stays open while another key is used (the other is dropped when idle),
// and LandPending lands the write; the broken Book drops the pending one
// and the write is lost.
func TestBookKeepsPending(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("dropPending=%v", broken), func(t *testing.T) {
			ctx := context.Background()
			inner := memory.NewSiblings()
			fs := faulty.NewSiblings(inner, faulty.Options{})
			b, err := NewBook(fs, BookOptions{MaxOpen: 1, Options: Options{Actor: "svc", RetryCount: 1, Backoff: Backoff{Initial: -1}}})
			require.NoError(t, err)
			if broken {
				b.keep = func(*Ledger) bool { return false }
			}
			fs.SetPolicy(counterCalls(faulty.Script(faulty.Pass, faulty.Lose, faulty.Pass, faulty.Lose))) // fetch, put, fetch, put
			_, err = b.Credit(ctx, "a", "x", 5)
			require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
			_, err = b.Credit(ctx, "b", "y", 7)
			require.NoError(t, err)
			st := b.Stats()
			require.NoError(t, b.check())
			if broken {
				require.Equal(t, BookStats{Open: 1, Opened: 2, Evicted: 1}, st, "a dropped when b opened")
			} else {
				require.Equal(t, BookStats{Open: 1, Pending: 1, Opened: 2, Evicted: 1}, st, "a kept, b dropped once idle")
			}
			require.NoError(t, b.LandPending(ctx))
			c, err := joinedAt(inner, "a", tpncounter.Options{})
			require.NoError(t, err)
			if broken {
				require.Zero(t, c.Value(), "the dropped ledger's write is lost")
				return
			}
			require.Equal(t, int64(5), c.Value(), "LandPending landed a's write")
			require.Equal(t, BookStats{Open: 1, Opened: 2, Evicted: 1}, b.Stats(), "a landed and is idle")
		})
	}
}

// TestBookReopenNeedsNewWriter: a key dropped and opened again whose first
// read is stale gets a new incarnation, so the stale read cannot fork an
// entry. A Book that gave the re-opened key its previous writer id without
// checking the read continues the entry from the stale read, writes a
// second version under a sequence number the entry already used, and loses
// an acknowledged credit.
func TestBookReopenNeedsNewWriter(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reuseWriter=%v", reuse), func(t *testing.T) {
			ctx := context.Background()
			inner := memory.NewSiblings()
			var stale atomic.Bool
			fs := faulty.NewSiblings(inner, faulty.Options{RecordWrites: true, Policy: func(c faulty.Call) faulty.Fault {
				if c.Method == faulty.MethodFetch && c.Key == "k" && stale.CompareAndSwap(true, false) {
					return faulty.StaleBy(1)
				}
				return faulty.Pass
			}})
			b, err := NewBook(fs, BookOptions{MaxOpen: 1, Options: Options{Actor: "svc"}})
			require.NoError(t, err)
			writers := map[string]crdt.ActorID{}
			if reuse {
				b.open = func(key string) (*Ledger, error) {
					l, err := New(b.store, key, b.opts)
					if w, ok := writers[key]; ok && err == nil {
						l.setWriter(w, ownEntry{})
					}
					return l, err
				}
			}
			for _, x := range []crdt.TxnID{"x1", "x2"} {
				res, err := b.Credit(ctx, "k", x, 10)
				require.NoError(t, err)
				writers["k"] = res.Writer
			}
			_, err = b.Credit(ctx, "other", "o", 1) // drops k
			require.NoError(t, err)
			stale.Store(true) // k's next fetch misses x2
			if reuse {
				b.dropped = nil // broken: no version to check the read against
			}
			res, err := b.Credit(ctx, "k", "x3", 10)
			require.NoError(t, err)
			require.Equal(t, reuse, res.Writer == writers["k"])
			c, err := joinedAt(inner, "k", tpncounter.Options{})
			require.NoError(t, err)
			if reuse {
				require.Less(t, c.Value(), int64(30), "the forked entry lost an acknowledged credit")
				return
			}
			require.Equal(t, int64(30), c.Value())
			require.Equal(t, uint64(3), b.Stats().Opened)
		})
	}
}

// TestBookReopenContinuesIncarnation: a key dropped and opened again,
// over and over, keeps one incarnation when its reads are fresh, so the
// account's state holds one entry however often the Book drops it (a new
// incarnation per opening would add one each time).
//
// With MaxOpen 1 and more keys in turn than the Book keeps, each key is
// dropped before its next use: every key but the open one must be
// remembered (a reviewer's churn of three keys, at one remembered key,
// filled an account's 4,096 actors in an hour). Past what it remembers,
// a key forgotten takes a new incarnation.
func TestBookReopenContinuesIncarnation(t *testing.T) {
	ctx := context.Background()
	b0, err := NewBook(memory.NewSiblings(), BookOptions{MaxOpen: 1, Options: Options{Actor: "svc"}})
	require.NoError(t, err)
	const most = 1 + 1024 // one open, the rest remembered (Book: at least 1,024)
	for _, keys := range []int{2, 3, most, b0.remembered() + 2} {
		inner := memory.NewSiblings()
		b, err := NewBook(inner, BookOptions{MaxOpen: 1, Options: Options{Actor: "svc"}})
		require.NoError(t, err)
		rounds := max(3, 400/keys)
		for i := range rounds {
			for k := range keys {
				_, err := b.Credit(ctx, fmt.Sprint("k", k), crdt.TxnID(fmt.Sprint("t", i)), 1)
				require.NoError(t, err)
			}
		}
		require.Equal(t, uint64(rounds*keys), b.Stats().Opened, "%d keys: every use opens a dropped key", keys)
		renewed := 0 // keys written by more than one incarnation
		for k := range keys {
			c, err := joinedAt(inner, fmt.Sprint("k", k), tpncounter.Options{})
			require.NoError(t, err)
			require.Equal(t, int64(rounds), c.Value())
			if c.Stats().Actors > 1 {
				renewed++
			}
		}
		if keys <= most {
			require.Zero(t, renewed, "%d keys: one incarnation wrote each", keys)
		} else {
			require.NotZero(t, renewed, "%d keys: a key forgotten takes a new incarnation", keys)
		}
	}
}

// TestBookReopenAfterGraceTakesNewIncarnation: a key dropped and opened
// again continues its incarnation only while that incarnation could not
// have been retired and folded: past RetireAfter + RetiredGrace/2 since
// its entry last changed, its first write is a new incarnation's.
func TestBookReopenAfterGraceTakesNewIncarnation(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	b, err := NewBook(memory.NewSiblings(), BookOptions{MaxOpen: 1, Options: Options{Actor: "svc", Clock: func() time.Time { return now }}})
	require.NoError(t, err)
	credit := func(key, txn string) crdt.ActorID {
		t.Helper()
		res, err := b.Credit(ctx, key, crdt.TxnID(txn), 1)
		require.NoError(t, err)
		return res.Writer
	}
	first := credit("k", "k1")
	credit("other", "o1") // drops k
	now = now.Add(DefaultRetireAfter)
	require.Equal(t, first, credit("k", "k2"), "within the limit: the incarnation continues")
	credit("other", "o2")
	now = now.Add(DefaultRetireAfter + DefaultRetiredGrace/2 + time.Minute)
	require.NotEqual(t, first, credit("k", "k3"), "past RetireAfter + RetiredGrace/2: a new incarnation")
}

// TestBookSerialisesKeys: many goroutines on a few keys, MaxOpen 1, so
// ledgers are dropped and re-opened between operations: no two store calls
// on one key overlap, and every credit counts. The detector itself catches
// two Ledgers on one key.
func TestBookSerialisesKeys(t *testing.T) {
	ctx := context.Background()
	const goroutines, keys, each = 8, 3, 25
	inner := memory.NewSiblings()
	ov := newOverlap(inner)
	b, err := NewBook(ov, BookOptions{MaxOpen: 1, Options: Options{Actor: "svc"}})
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make([]error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				key := fmt.Sprintf("k%d", (g+i)%keys)
				if _, err := b.Credit(ctx, key, crdt.TxnID(fmt.Sprintf("g%d-%d", g, i)), 1); err != nil {
					errs[g] = err
					return
				}
				if _, err := b.Value(ctx, key); err != nil {
					errs[g] = err
					return
				}
				if err := b.check(); err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Zero(t, ov.hits.Load(), "store calls overlapped on one key")
	var sum int64
	for k := 0; k < keys; k++ {
		v, err := b.Value(ctx, fmt.Sprintf("k%d", k))
		require.NoError(t, err)
		sum += v
	}
	require.Equal(t, int64(goroutines*each), sum)
	st := b.Stats()
	t.Logf("%d operations on %d keys: ledgers opened %d, dropped %d", 2*goroutines*each, keys, st.Opened, st.Evicted)
	require.Positive(t, st.Evicted)

	t.Run("detector", func(t *testing.T) {
		// Two Ledgers on one key, each reading once; the first two calls
		// wait for each other inside the store.
		ov := newOverlap(memory.NewSiblings())
		var calls atomic.Int64
		var both sync.WaitGroup
		both.Add(2)
		ov.pause = func() {
			if calls.Add(1) <= 2 {
				both.Done()
				both.Wait()
			}
		}
		var wg sync.WaitGroup
		for g := 0; g < 2; g++ {
			l, err := New(ov, "k", Options{Actor: "svc"})
			require.NoError(t, err)
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = l.Value(ctx)
			}()
		}
		wg.Wait()
		require.Equal(t, int64(1), ov.hits.Load(), "two Ledgers reading one key at once")
	})
}

// TestBookAPI: validation before any ledger opens, options passed through
// (the Observer sees every operation), results and the counters.
func TestBookAPI(t *testing.T) {
	ctx := context.Background()
	_, err := NewBook(memory.NewSiblings(), BookOptions{MaxOpen: -1, Options: Options{Actor: "a"}})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = NewBook(nil, BookOptions{Options: Options{Actor: "a"}})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = NewBook(memory.NewSiblings(), BookOptions{})
	require.ErrorIs(t, err, crdt.ErrInvalidActor)
	_, err = NewBook(memory.NewSiblings(), BookOptions{Options: Options{Actor: "a", RetryCount: -1}})
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)

	var events atomic.Int64
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		if e.Component == "ledger" {
			events.Add(1)
		}
	})
	b, err := NewBook(memory.NewSiblings(), BookOptions{Options: Options{Actor: "svc", Observer: obs}})
	require.NoError(t, err)
	require.Equal(t, DefaultMaxOpen, b.MaxOpen())
	require.Equal(t, crdt.ActorID("svc"), b.Actor())

	_, err = b.Credit(ctx, "", "t", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	_, err = b.Credit(ctx, "k", "", 1)
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	_, err = b.Credit(ctx, "k", "t", 0)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = b.Debit(ctx, "k", "t", -1)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = b.Update(ctx, "k", "t", 0)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = b.HasTransaction(ctx, "k", "")
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	_, err = b.Value(ctx, "bad\x00key")
	require.ErrorIs(t, err, crdt.ErrInvalidKey)
	require.Equal(t, BookStats{}, b.Stats(), "no ledger opened for invalid input")
	require.EqualValues(t, 7, events.Load(), "each refused call is reported, as invalid")
	events.Store(0)

	res, err := b.Credit(ctx, "k", "t1", 10)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, res.Outcome)
	require.Equal(t, res.Writer, res.Owner.Actor, "this write's copy counts")
	require.Regexp(t, `^svc~[a-z2-7]{8}$`, string(res.Writer))
	res2, err := b.Debit(ctx, "k", "t2", 3)
	require.NoError(t, err)
	require.Equal(t, res.Writer, res2.Writer, "one Ledger per open key")
	require.Equal(t, int64(7), res2.Value)
	dup, err := b.Credit(ctx, "k", "t1", 10)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, dup.Outcome)
	has, err := b.HasTransaction(ctx, "k", "t2")
	require.NoError(t, err)
	require.True(t, has)
	c, err := b.Find(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, int64(7), c.Value())
	v, err := b.Value(ctx, "other")
	require.NoError(t, err)
	require.Zero(t, v)
	require.Equal(t, int64(6), events.Load(), "one event per operation, from the key's ledger")
	require.Equal(t, BookStats{Open: 2, Opened: 2}, b.Stats())
	require.NoError(t, b.LandPending(ctx))
	require.NoError(t, b.check())
}

// TestBookLandPendingContext: a done context stops LandPending with the
// context's error and leaves the ledgers pending and consistent.
func TestBookLandPendingContext(t *testing.T) {
	ctx := context.Background()
	fs := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{})
	b, err := NewBook(fs, BookOptions{MaxOpen: 1, Options: Options{Actor: "svc", RetryCount: 1, Backoff: Backoff{Initial: -1}}})
	require.NoError(t, err)
	fs.SetPolicy(counterCalls(faulty.Script(faulty.Pass, faulty.Lose, faulty.Pass, faulty.Lose, faulty.Pass, faulty.Lose, faulty.Pass, faulty.Lose)))
	for _, key := range []string{"a", "b"} {
		_, err := b.Credit(ctx, key, "x", 1)
		require.ErrorIs(t, err, crdt.ErrAmbiguousWrite)
	}
	require.Equal(t, BookStats{Open: 2, Pending: 2, Opened: 2}, b.Stats())
	done, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, b.LandPending(done), context.Canceled)
	require.NoError(t, b.check())
	require.Equal(t, 2, b.Stats().Pending)
	require.NoError(t, b.LandPending(ctx))
	require.Equal(t, BookStats{Open: 1, Opened: 2, Evicted: 1}, b.Stats())
}

// lruScenario runs Value on a, b, a, c, a, b through a Book of MaxOpen 2,
// calling after each time, and checks the Book drops the least recently
// used idle ledger: c drops b (a was used since), a is still open, b opens
// again.
func lruScenario(after func(*Book)) error {
	ctx := context.Background()
	b, err := NewBook(memory.NewSiblings(), BookOptions{MaxOpen: 2, Options: Options{Actor: "svc"}})
	if err != nil {
		return err
	}
	for i, step := range []struct {
		key             string
		opened, evicted uint64
	}{{"a", 1, 0}, {"b", 2, 0}, {"a", 2, 0}, {"c", 3, 1}, {"a", 3, 1}, {"b", 4, 2}} {
		if _, err := b.Value(ctx, step.key); err != nil {
			return err
		}
		after(b)
		if err := b.check(); err != nil {
			return fmt.Errorf("step %d (%s): %w", i, step.key, err)
		}
		st := b.Stats()
		if st.Opened != step.opened || st.Evicted != step.evicted || st.Open != 2 && i > 0 {
			return fmt.Errorf("step %d (%s): %+v, want %d opened, %d evicted, 2 open", i, step.key, st, step.opened, step.evicted)
		}
	}
	return nil
}

// TestBookDropsLeastRecentlyUsed: the Book drops the least recently used
// idle ledger; a Book whose idle list puts the last released ledger first
// (so it drops the most recently used) is caught.
func TestBookDropsLeastRecentlyUsed(t *testing.T) {
	require.NoError(t, lruScenario(func(*Book) {}))
	err := lruScenario(func(b *Book) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if back := b.idle.Back(); back != nil {
			b.idle.MoveToFront(back)
		}
	})
	require.ErrorContains(t, err, "want 3 opened")
}

// TestBookCheckCatchesBrokenBookkeeping: check, which the Book tests run
// after every operation, finds each kind of inconsistent bookkeeping.
func TestBookCheckCatchesBrokenBookkeeping(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		breakIt func(b *Book)
		want    string
	}{
		"idle entry not in the list": {func(b *Book) {
			b.idle.Remove(b.idle.Front()).(*bookEntry).idle = nil
		}, "not in the idle list"},
		"idle entry's element removed": {func(b *Book) {
			b.idle.Remove(b.idle.Front())
		}, "2 open: 0 in use (counted 0), 0 pending (counted 0), 1 idle"},
		"listed entry in use": {func(b *Book) {
			b.idle.Front().Value.(*bookEntry).refs = 1
			b.inUse++
		}, "idle list holds"},
		"listed entry's element lost": {func(b *Book) {
			b.idle.Front().Value.(*bookEntry).idle = nil
		}, "idle list holds"},
		"pending miscounted": {func(b *Book) {
			b.pending++
		}, "pending (counted 1)"},
		"in-use entry still listed": {func(b *Book) {
			e := b.idle.Front().Value.(*bookEntry)
			e.refs = 1
			b.inUse++
			b.idle.Remove(e.idle)
			b.idle.PushBack(e) // a second element; e.idle is the removed one
		}, "idle list holds"},
		"over MaxOpen with an idle ledger": {func(b *Book) {
			e := &bookEntry{key: "extra", l: b.idle.Front().Value.(*bookEntry).l}
			b.entries[e.key] = e
			e.idle = b.idle.PushBack(e)
		}, "over MaxOpen"},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := NewBook(memory.NewSiblings(), BookOptions{MaxOpen: 2, Options: Options{Actor: "svc"}})
			require.NoError(t, err)
			for _, key := range []string{"a", "b"} {
				_, err := b.Value(ctx, key)
				require.NoError(t, err)
			}
			require.NoError(t, b.check())
			b.mu.Lock()
			tc.breakIt(b)
			b.mu.Unlock()
			require.ErrorContains(t, b.check(), tc.want)
		})
	}
}

// TestKeptSightingsAreTheOldest: of 40 sightings, in any map order, a
// resume keeps the 16 first seen idle (ties by actor id), each with its
// version and since and nothing to be established again.
func TestKeptSightingsAreTheOldest(t *testing.T) {
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	all := map[crdt.ActorID]sighting{}
	for i := range 40 {
		a := crdt.ActorID(fmt.Sprintf("w%02d", i))
		// since: w37..w39 first, then in threes: the 16th place goes to
		// w22 of w22..w24, tied, by its id
		all[a] = sighting{version: uint64(i + 1), since: t0.Add(time.Duration((39-i)/3) * time.Minute), dated: i%2 == 0, checked: true, recorded: true, late: []crdt.TxnID{"x"}}
	}
	for range 20 {
		kept := keptSightings(all)
		if len(kept) != maxKeptSightings {
			t.Fatalf("kept %d, want %d", len(kept), maxKeptSightings)
		}
		for _, i := range append([]int{22}, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39) {
			a := crdt.ActorID(fmt.Sprintf("w%02d", i))
			s, ok := kept[a]
			if !ok {
				t.Fatalf("%s (idle since %v) not kept; kept %v", a, all[a].since, kept)
			}
			want := sighting{version: all[a].version, since: all[a].since, dated: all[a].dated}
			if !reflect.DeepEqual(s, want) {
				t.Fatalf("%s kept as %+v, want %+v", a, s, want)
			}
		}
	}
	if kept := keptSightings(map[crdt.ActorID]sighting{"a": {version: 1, since: t0}}); len(kept) != 1 {
		t.Fatalf("one sighting: kept %v", kept)
	}
}
