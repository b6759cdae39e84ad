package ledger

// The sharded-ledger simulation runs real Sharded values (five actors on one
// account of four sub-keys) over the memory store wrapped in faulty.Siblings:
// refused writes, writes that land but lose their acknowledgement, writes
// lost with an ambiguous error, writes held in flight and landing steps
// later, stale fetches that create siblings, and processes that restart (a
// Sharded is replaced by a new one with the same actor and none of its
// memory while its held writes are still to land). Clients deliver some new
// transactions to two actors at once, resend unanswered ones and duplicate
// answered ones on random actors, inside the window. After every step:
// every landed transaction lives in exactly one sub-key, the sub-keys'
// joined values sum to the landed transactions counted once each, and every
// acknowledged transaction has landed; after quiescing, the account's Value
// is the sum of the distinct transactions submitted. And the promise
// itself: every resend of an acknowledged transaction answers Duplicate or
// DuplicateFolded, Landed (with stale reads, a resend that read a replica
// without it may write it again, answering Applied; it still counts once).
//
// A routing that is not a function of the transaction id alone (by actor,
// or by a hash with a per-process random seed) is caught.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./ledger -run '^TestSharded'
// Scale:  COUNTERKIT_CASES=10 go test ./ledger -run '^TestShardedSimulation'

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand"
	"runtime"
	"slices"
	"sync"
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

const shAccount = "hot"

// shRecorder records, after every write through it, every transaction of
// the key's live siblings in the inner store: they have landed.
type shRecorder struct {
	store.Siblings
	inner  store.Siblings
	opts   tpncounter.Options
	mu     sync.Mutex
	landed map[crdt.TxnID]int64
	where  map[crdt.TxnID]map[string]bool
	err    error
	yield  bool // after every Fetch, let other goroutines run (one core too)
}

func (r *shRecorder) Fetch(ctx context.Context, key string) ([][]byte, store.Token, error) {
	sibs, token, err := r.Siblings.Fetch(ctx, key)
	if r.yield {
		runtime.Gosched()
	}
	return sibs, token, err
}

func newRecorder(outer store.Siblings, inner store.Siblings, opts tpncounter.Options) *shRecorder {
	return &shRecorder{Siblings: outer, inner: inner, opts: opts,
		landed: map[crdt.TxnID]int64{}, where: map[crdt.TxnID]map[string]bool{}}
}

func (r *shRecorder) Put(ctx context.Context, key string, actor crdt.ActorID, value []byte, token store.Token) error {
	err := r.Siblings.Put(ctx, key, actor, value, token)
	r.note(key)
	return err
}

// note records the transactions of key's live siblings.
func (r *shRecorder) note(key string) {
	if key == shAccount || IsRecordKey(key) || IsSeenKey(key) {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	live, _, err := r.inner.Fetch(context.Background(), key)
	if err != nil {
		r.err = err
		return
	}
	for _, v := range live {
		c, _ := tpncounter.New(r.opts)
		if err := c.UnmarshalBinary(v); err != nil {
			r.err = err
			return
		}
		for _, g := range []*tpncounter.GCounter{c.Positive(), c.Negative()} {
			for _, a := range g.Actors() {
				e, _ := g.Entry(a)
				for _, list := range [][]tpncounter.Txn{e.History, e.Folded} {
					for _, tx := range list {
						amt, _ := c.Amount(tx.ID)
						r.landed[tx.ID] = amt
						if r.where[tx.ID] == nil {
							r.where[tx.ID] = map[string]bool{}
						}
						r.where[tx.ID][key] = true
					}
				}
			}
		}
	}
}

// joined is the join of key's live siblings in the inner store.
func (r *shRecorder) joined(key string) (*tpncounter.Counter, int, error) {
	live, _, err := r.inner.Fetch(context.Background(), key)
	if err != nil {
		return nil, 0, err
	}
	j, _ := tpncounter.New(r.opts)
	for _, v := range live {
		c, _ := tpncounter.New(r.opts)
		if err := c.UnmarshalBinary(v); err != nil {
			return nil, 0, err
		}
		if err := j.Merge(c); err != nil {
			return nil, 0, err
		}
	}
	return j, len(live), nil
}

// check verifies the invariants over n sub-keys: each landed transaction in
// one sub-key, the sub-keys summing to the landed transactions, every
// acknowledged one landed.
func (r *shRecorder) check(n int, acked map[crdt.TxnID]bool) (siblings int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return 0, r.err
	}
	var got int64
	for i := 0; i < n; i++ {
		j, k, err := r.joined(shardKey(shAccount, i))
		if err != nil {
			return 0, err
		}
		if k > 1 {
			siblings++
		}
		got += j.Value()
	}
	var want int64
	for _, txn := range slices.Sorted(maps.Keys(r.landed)) {
		want += r.landed[txn]
		if len(r.where[txn]) != 1 {
			return 0, fmt.Errorf("transaction %s landed in %d sub-keys %v", txn, len(r.where[txn]), slices.Sorted(maps.Keys(r.where[txn])))
		}
	}
	if got != want {
		return 0, fmt.Errorf("sub-keys sum to %d, want %d over %d landed transactions", got, want, len(r.landed))
	}
	for txn := range acked {
		if _, ok := r.landed[txn]; !ok {
			return 0, fmt.Errorf("acknowledged %s never landed", txn)
		}
	}
	return siblings, nil
}

// status is txn's status in the join of the sub-key it landed in.
func (r *shRecorder) status(txn crdt.TxnID) (tpncounter.Status, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key := range r.where[txn] {
		j, _, err := r.joined(key)
		if err != nil {
			return 0, err
		}
		if s := j.Status(txn); s != tpncounter.Unknown {
			return s, nil
		}
	}
	return tpncounter.Unknown, nil
}

type shSim struct {
	r       *rand.Rand
	fs      *faulty.Siblings
	rec     *shRecorder
	n       int
	opts    Options
	actors  []*Sharded
	amounts map[crdt.TxnID]int64
	acked   map[crdt.TxnID]bool
	resend  map[crdt.TxnID]int
	flushBy map[int]int
	recent  []crdt.TxnID
	next    int

	// stale serves stale reads; without them every resend of an
	// acknowledged transaction must answer Duplicate or DuplicateFolded.
	// restarts holds writes in flight and restarts actors.
	stale, restarts bool
	// rows runs on a RowStore (one row per actor, as on Cassandra);
	// untimedRows on one whose late Puts take their landing time (broken).
	rows, untimedRows bool

	// What the schedule exercised.
	resent, recognised, reapplied, doubled, siblings, restarted, delivered int
}

func (s *shSim) newActor(a int) (*Sharded, error) {
	opts := s.opts
	opts.Actor = crdt.ActorID(fmt.Sprintf("actor-%d", a))
	var st store.Siblings = s.rec
	if s.rows || s.untimedRows {
		st = StampPuts(st)
	}
	return NewSharded(st, shAccount, s.n, opts)
}

func runShardedSim(seed int64, steps int, s *shSim) (*shSim, error) {
	ctx := context.Background()
	s.n = 4
	counter := tpncounter.Options{HistoryLength: 2, FoldedLength: 2}
	rates := faulty.Rates{Refuse: 0.08, LoseAck: 0.12, Lose: 0.08, MaxStaleness: 2}
	if s.stale {
		rates.Stale = 0.2
	}
	if s.restarts {
		rates.Hold = 0.06
	}
	var inner store.Siblings = memory.NewSiblings()
	if s.rows || s.untimedRows {
		inner = &RowStore{Untimed: s.untimedRows}
	}
	s.fs = faulty.NewSiblings(inner, faulty.Options{Policy: FreshRecords(faulty.Seeded(seed, rates)), RecordWrites: true})
	s.rec = newRecorder(s.fs, inner, counter)
	s.r = rand.New(rand.NewSource(seed))
	s.amounts, s.acked, s.resend, s.flushBy = map[crdt.TxnID]int64{}, map[crdt.TxnID]bool{}, map[crdt.TxnID]int{}, map[int]int{}
	s.opts = Options{RetryCount: 2, Backoff: Backoff{Initial: -1}, Counter: counter}
	for a := 0; a < 5; a++ {
		sh, err := s.newActor(a)
		if err != nil {
			return s, err
		}
		s.actors = append(s.actors, sh)
	}
	for step := 0; step < steps; step++ {
		if err := s.step(ctx, step); err != nil {
			return s, fmt.Errorf("step %d: %w", step, err)
		}
		sibs, err := s.rec.check(s.n, s.acked)
		if err != nil {
			return s, fmt.Errorf("after step %d: %w", step, err)
		}
		s.siblings += sibs
	}
	// Quiesce without faults: held writes land, every actor lands its
	// pending writes, unanswered transactions are resent.
	s.fs.SetPolicy(nil)
	for s.fs.Held() > 0 {
		if err := s.deliver(0); err != nil {
			return s, err
		}
	}
	for round := 0; round < 2; round++ {
		for _, sh := range s.actors {
			if _, err := sh.FindAll(ctx); err != nil {
				return s, err
			}
		}
		for _, txn := range slices.Sorted(maps.Keys(s.resend)) {
			if err := s.submit(ctx, txn, -1); err != nil {
				return s, err
			}
		}
	}
	if len(s.resend) > 0 {
		return s, fmt.Errorf("after quiescing, still unanswered: %v", slices.Sorted(maps.Keys(s.resend)))
	}
	if _, err := s.rec.check(s.n, s.acked); err != nil {
		return s, fmt.Errorf("after quiescing: %w", err)
	}
	// The model: every distinct transaction submitted, once.
	var want int64
	for txn, amt := range s.amounts {
		if _, ok := s.rec.landed[txn]; !ok {
			return s, fmt.Errorf("after quiescing: %s never landed", txn)
		}
		want += amt
	}
	fresh, err := NewSharded(s.rec, shAccount, s.n, Options{Actor: "reader"})
	if err != nil {
		return s, err
	}
	got, err := fresh.Value(ctx)
	if err != nil {
		return s, err
	}
	if got != want {
		return s, fmt.Errorf("after quiescing: Value %d, want %d over %d distinct transactions", got, want, len(s.amounts))
	}
	return s, nil
}

// deliver lands the i-th held write.
func (s *shSim) deliver(i int) error {
	key := s.fs.HeldCalls()[i].Key
	if err := s.fs.Deliver(i); err != nil {
		return err
	}
	s.rec.note(key)
	return nil
}

// submit sends txn to a random actor other than skip, inside the window
// only, and checks the answer to a resend of an acknowledged transaction.
func (s *shSim) submit(ctx context.Context, txn crdt.TxnID, skip int) error {
	delete(s.resend, txn)
	if _, landed := s.rec.landed[txn]; landed {
		// Inside the window means before any ledger has forgotten txn,
		// and a pending write's state is private: while any write is
		// pending or in flight, a resend of a landed transaction waits.
		if s.fs.Held() > 0 || slices.ContainsFunc(s.actors, (*Sharded).Pending) {
			s.resend[txn] = 0
			return nil
		}
		st, err := s.rec.status(txn)
		if err != nil {
			return err
		}
		if st == tpncounter.Unknown {
			delete(s.acked, txn) // outside the window; it stays landed
			return nil
		}
	}
	a := s.r.Intn(len(s.actors))
	if a == skip {
		a = (a + 1) % len(s.actors)
	}
	res, err := s.actors[a].Update(ctx, txn, s.amounts[txn])
	switch {
	case err == nil:
		if !res.Landed {
			return fmt.Errorf("%s: no error but not landed: %+v", txn, res)
		}
		if s.acked[txn] {
			s.resent++
			switch res.Outcome {
			case tpncounter.Duplicate, tpncounter.DuplicateFolded:
				s.recognised++
			default:
				if !s.stale {
					return fmt.Errorf("resend of acknowledged %s on actor %d answered %v on %s (first landed in %v)",
						txn, a, res.Outcome, s.actors[a].Key(s.actors[a].Shard(txn)), slices.Sorted(maps.Keys(s.rec.where[txn])))
				}
				s.reapplied++
			}
		}
		s.acked[txn] = true
	case errors.Is(err, crdt.ErrAmbiguousWrite), errors.Is(err, crdt.ErrUnavailable):
		s.resend[txn] = 0
	default:
		return err
	}
	if s.actors[a].Pending() {
		s.flushBy[a] = -1
	}
	return nil
}

func (s *shSim) step(ctx context.Context, step int) error {
	if s.restarts {
		if s.r.Float64() < 0.05 {
			a := s.r.Intn(len(s.actors))
			sh, err := s.newActor(a)
			if err != nil {
				return err
			}
			s.actors[a], s.restarted = sh, s.restarted+1
			delete(s.flushBy, a)
		}
		for s.fs.Held() > 0 && s.r.Float64() < 0.3 {
			if err := s.deliver(s.r.Intn(s.fs.Held())); err != nil {
				return err
			}
			s.delivered++
		}
	}
	for _, a := range slices.Sorted(maps.Keys(s.flushBy)) {
		switch by := s.flushBy[a]; {
		case by < 0:
			s.flushBy[a] = step + 2
		case by <= step:
			delete(s.flushBy, a)
			for i := range s.actors[a].subs {
				if l := s.actors[a].subs[i].Load(); l != nil && l.Pending() {
					if _, err := l.Find(ctx); err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
						return err
					}
				}
			}
			if s.actors[a].Pending() {
				s.flushBy[a] = step + 2
			}
		}
	}
	for _, txn := range slices.Sorted(maps.Keys(s.resend)) {
		if by := s.resend[txn]; by == 0 {
			s.resend[txn] = step + 1 + s.r.Intn(8)
		} else if by <= step {
			if err := s.submit(ctx, txn, -1); err != nil {
				return err
			}
		}
	}
	switch x := s.r.Float64(); {
	case x < 0.3 && len(s.recent) > 0:
		return s.submit(ctx, s.recent[s.r.Intn(len(s.recent))], -1)
	case x < 0.9:
		s.next++
		txn := crdt.TxnID(fmt.Sprintf("t%d", s.next))
		amt := int64(1 + s.r.Intn(100))
		if s.r.Intn(3) == 0 {
			amt = -amt
		}
		s.amounts[txn] = amt
		s.recent = append(s.recent, txn)
		if len(s.recent) > 8 {
			s.recent = s.recent[1:]
		}
		if err := s.submit(ctx, txn, -1); err != nil {
			return err
		}
		if s.r.Intn(4) == 0 { // delivered to two actors
			s.doubled++
			if _, pending := s.resend[txn]; !pending {
				return s.submit(ctx, txn, -1)
			}
		}
		return nil
	default:
		sh := s.actors[s.r.Intn(len(s.actors))]
		if _, err := sh.Find(ctx, crdt.TxnID(fmt.Sprintf("t%d", 1+s.r.Intn(s.next+1)))); err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
			return err
		}
		return nil
	}
}

// shardedSchedules runs COUNTERKIT_CASES × cases schedules of mode,
// logging the seed and its replay command, and returns the totals.
func shardedSchedules(t *testing.T, cases int, mode shSim) shSim {
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	n := proptest.Scale(cases)
	var total shSim
	for i := 0; i < n; i++ {
		sched := rng.Int63()
		m := mode
		s, err := runShardedSim(sched, 60, &m)
		if err != nil {
			t.Fatalf("seed %d, schedule %d (seed %d): %v", seed, i+1, sched, err)
		}
		total.resent += s.resent
		total.recognised += s.recognised
		total.reapplied += s.reapplied
		total.doubled += s.doubled
		total.siblings += s.siblings
		total.restarted += s.restarted
		total.delivered += s.delivered
	}
	t.Logf("%d schedules of 60 steps, 5 actors on 4 sub-keys: %d resends of acknowledged transactions (%d recognised, %d written again after a stale read), %d deliveries to two actors, %d steps with siblings, %d restarts, %d writes landed late",
		n, total.resent, total.recognised, total.reapplied, total.doubled, total.siblings, total.restarted, total.delivered)
	return total
}

// TestShardedSimulation: refused, lost and unacknowledged writes, no stale
// reads: every resend of an acknowledged transaction is recognised.
func TestShardedSimulation(t *testing.T) {
	tot := shardedSchedules(t, 30, shSim{})
	require.Positive(t, tot.recognised)
	require.Zero(t, tot.reapplied)
}

// TestShardedSimulationStale adds stale reads (siblings), writes held in
// flight and restarts.
func TestShardedSimulationStale(t *testing.T) {
	tot := shardedSchedules(t, 30, shSim{stale: true, restarts: true})
	require.Positive(t, tot.recognised)
	require.Positive(t, tot.siblings)
	require.Positive(t, tot.restarted)
	require.Positive(t, tot.delivered)
}

// TestShardedSimulationRowsPerActor: the same on a store with one row per
// actor (RowStore, as on Cassandra), where an actor's Put replaces its
// earlier row: the layout marker's and transaction records' too. On a
// double whose late Puts take their landing time, a late Put replaces its
// writer's newer row, and the simulation catches that.
func TestShardedSimulationRowsPerActor(t *testing.T) {
	tot := shardedSchedules(t, 30, shSim{stale: true, restarts: true, rows: true})
	require.Positive(t, tot.recognised)
	require.Positive(t, tot.delivered)

	seed := proptest.Seed()
	rng := rand.New(rand.NewSource(seed))
	n := proptest.Scale(100)
	for i := 0; i < n; i++ {
		if _, err := runShardedSim(rng.Int63(), 60, &shSim{stale: true, restarts: true, untimedRows: true}); err != nil {
			t.Logf("late Puts landing with their landing time caught after %d schedules: %v", i+1, err)
			return
		}
	}
	t.Fatalf("seed %d: %d schedules never caught late Puts replacing newer rows", seed, n)
}

// TestShardedConcurrentActors: Sharded values on one account, used by
// concurrent goroutines, over a faulty store with stale reads; a third of
// the transactions are delivered to two goroutines at once. Every
// goroutine retries its transactions until answered; the account's value
// is the sum of the distinct transactions and each landed in exactly one
// sub-key. The two deliveries of a transaction run at each goroutine's own
// pace, far apart, so the history is long enough that nothing leaves the
// window (the simulations above test the window). Two layouts: eight
// actors with one goroutine each, and four actors each shared by four
// goroutines, as the processes of a service would share one Sharded per
// account (see Sharded); a second delivery may then reach the same Sharded
// while the first is in flight.
func TestShardedConcurrentActors(t *testing.T) {
	for _, tc := range []struct{ actors, perActor int }{{8, 1}, {4, 4}} {
		t.Run(fmt.Sprintf("actors=%d/goroutines=%d", tc.actors, tc.actors*tc.perActor), func(t *testing.T) {
			seed := proptest.Seed()
			t.Logf("seed %d; replay: %s (the goroutines' interleaving is not replayed)", seed, proptest.Replay(t, seed))
			txns, faults, err := concurrentActors(seed, tc.actors, tc.perActor)
			require.NoError(t, err)
			t.Logf("%d transactions by %d goroutines on %d actors, 4 sub-keys; faults %v", txns, tc.actors*tc.perActor, tc.actors, faults)
		})
	}
}

// concurrentActors runs TestShardedConcurrentActors' workload with actors
// Sharded values, each used by perActor goroutines. It returns the number of distinct transactions, the
// faults injected, and the first invariant broken.
func concurrentActors(seed int64, actors, perActor int) (int, map[faulty.Fault]int, error) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	counter := tpncounter.Options{HistoryLength: tpncounter.MaxHistoryLength}
	inner := memory.NewSiblings()
	fs := faulty.NewSiblings(inner, faulty.Options{RecordWrites: true,
		Policy: FreshRecords(faulty.Seeded(seed, faulty.Rates{Refuse: 0.05, LoseAck: 0.08, Lose: 0.05, Stale: 0.1, MaxStaleness: 2}))})
	rec := newRecorder(fs, inner, counter)
	rec.yield = true // deliveries overlap, even on one core
	const shards = 4
	workers := actors * perActor
	txns := proptest.Scale(240)
	work := make([][]crdt.TxnID, workers)
	amounts := map[crdt.TxnID]int64{}
	var want int64
	for i := 0; i < txns; i++ {
		txn := crdt.TxnID(fmt.Sprintf("c%d", i))
		amounts[txn] = int64(1 + rng.Intn(100))
		want += amounts[txn]
		w := rng.Intn(workers)
		work[w] = append(work[w], txn)
		if rng.Intn(3) == 0 {
			v := (w + 1 + rng.Intn(workers-1)) % workers
			work[v] = append(work[v], txn)
		}
	}
	ss := make([]*Sharded, actors)
	for a := range ss {
		var err error
		ss[a], err = NewSharded(rec, shAccount, shards, Options{Actor: crdt.ActorID(fmt.Sprintf("actor-%d", a)), RetryCount: 2, Backoff: Backoff{Initial: -1}, Counter: counter})
		if err != nil {
			return 0, nil, err
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := ss[w%actors]
			for _, txn := range work[w] {
				for attempt := 0; ; attempt++ {
					_, err := s.Credit(ctx, txn, amounts[txn])
					if err == nil {
						break
					}
					if attempt > 50 || !(errors.Is(err, crdt.ErrAmbiguousWrite) || errors.Is(err, crdt.ErrUnavailable)) {
						errs[w] = err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, nil, err
	}
	fs.SetPolicy(nil)
	for _, s := range ss {
		if _, err := s.FindAll(ctx); err != nil {
			return 0, nil, err
		}
	}
	if _, err := rec.check(shards, nil); err != nil {
		return 0, nil, err
	}
	if len(rec.landed) != txns {
		return 0, nil, fmt.Errorf("%d transactions landed, want %d", len(rec.landed), txns)
	}
	got, err := ss[0].Value(ctx)
	if err != nil {
		return 0, nil, err
	}
	if got != want {
		return 0, nil, fmt.Errorf("Value %d, want %d over %d distinct transactions", got, want, txns)
	}
	return txns, fs.Counts(), nil
}

// ShardOf is FNV-1a 64 of the id modulo n, fixed: values pinned (computed
// independently), and the standard library's FNV-1a for others.
func TestShardOf(t *testing.T) {
	for _, tc := range []struct {
		txn  crdt.TxnID
		n    int
		want int
	}{{"order-3", 8, 7}, {"a", 1 << 30, 0xaf63dc4c8601ec8c % (1 << 30)}, {"t1", 4, 2}, {"deposit-1", 16, 11}, {"merchant", 1000, 781}} {
		require.Equal(t, tc.want, ShardOf(tc.txn, tc.n), "ShardOf(%q, %d)", tc.txn, tc.n)
	}
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	rng := rand.New(rand.NewSource(seed))
	counts := make([]int, 8)
	for i := 0; i < 1000; i++ {
		txn := crdt.TxnID(fmt.Sprintf("txn-%d-%d", i, rng.Int63()))
		h := fnv.New64a()
		h.Write([]byte(txn))
		n := 1 + rng.Intn(MaxShards)
		require.Equal(t, int(h.Sum64()%uint64(n)), ShardOf(txn, n))
		counts[ShardOf(txn, 8)]++
	}
	for i, c := range counts {
		require.Greater(t, c, 60, "shard %d of 8 got %d of 1000", i, c)
	}
}

// The number of shards is fixed for an account's lifetime, and a sharded
// account and a plain ledger never share a key.
func TestShardedLayout(t *testing.T) {
	ctx := context.Background()
	st := memory.NewSiblings()
	s8, err := NewSharded(st, "acct", 8, Options{Actor: "a"})
	require.NoError(t, err)
	_, err = s8.Credit(ctx, "t1", 5)
	require.NoError(t, err)

	s16, err := NewSharded(st, "acct", 16, Options{Actor: "b"})
	require.NoError(t, err)
	_, err = s16.Credit(ctx, "t2", 5)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = s16.Value(ctx)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	_, err = s16.HasTransaction(ctx, "t1")
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	for i := 0; i < 16; i++ {
		if i != s8.Shard("t1") {
			require.Zero(t, st.Count(shardKey("acct", i)), "sub-key %d written", i)
		}
	}

	// Without the marker check (a Sharded that skips it), a retry of a
	// transaction made with 8 shards goes, with 16, to another sub-key:
	// the transaction records of the account recognise it there.
	txn := crdt.TxnID("t1")
	for i := 0; ShardOf(txn, 8) == ShardOf(txn, 16); i++ {
		txn = crdt.TxnID(fmt.Sprintf("r%d", i))
	}
	_, err = s8.Credit(ctx, txn, 5)
	require.NoError(t, err)
	unchecked, err := NewSharded(st, "acct", 16, Options{Actor: "c"})
	require.NoError(t, err)
	unchecked.layoutOK.Store(true)
	never := time.Now().AddDate(100, 0, 0)
	unchecked.recheck.Store(&never)
	r, err := unchecked.Credit(ctx, txn, 5)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome, "the retry is recognised on another sub-key")

	plain, err := New(st, "acct", Options{Actor: "p"})
	require.NoError(t, err)
	_, err = plain.Credit(ctx, "t3", 5)
	require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "a plain ledger on a sharded account's key")

	_, err = plain.Credit(ctx, "t3", 5)
	require.Error(t, err)
	other, _ := New(st, "plain", Options{Actor: "p"})
	_, err = other.Credit(ctx, "t4", 5)
	require.NoError(t, err)
	sp, err := NewSharded(st, "plain", 4, Options{Actor: "a"})
	require.NoError(t, err)
	_, err = sp.Credit(ctx, "t5", 5)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig, "sharding a plain ledger's key")

	for _, n := range []int{0, -1, MaxShards + 1} {
		_, err := NewSharded(st, "x", n, Options{Actor: "a"})
		require.ErrorIs(t, err, crdt.ErrInvalidConfig, "n=%d", n)
	}
	_, err = NewSharded(st, fmt.Sprintf("%0*d", crdt.MaxKeyLen-1, 0), 10, Options{Actor: "a"})
	require.ErrorIs(t, err, crdt.ErrInvalidKey, "sub-key account/9 too long")
	_, err = NewSharded(st, "x", 2, Options{})
	require.ErrorIs(t, err, crdt.ErrInvalidActor)

	// A Value on a new account writes nothing, not even the marker.
	fresh, _ := NewSharded(st, "new", 4, Options{Actor: "a"})
	v, err := fresh.Value(ctx)
	require.NoError(t, err)
	require.Zero(t, v)
	require.Zero(t, st.Count("new"))
}

// The marker's write is retried like a ledger's, and no transaction is
// written before it is known to be stored.
func TestShardedLayoutWriteRetried(t *testing.T) {
	ctx := context.Background()
	inner := memory.NewSiblings()
	fs := faulty.NewSiblings(inner, faulty.Options{})
	s, err := NewSharded(fs, "acct", 4, Options{Actor: "a", Backoff: Backoff{Initial: -1}, RetryCount: 1})
	require.NoError(t, err)
	fs.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.Lose, faulty.Refuse), faulty.MethodPut)))
	_, err = s.Credit(ctx, "t1", 5)
	require.ErrorIs(t, err, crdt.ErrUnavailable)
	for i := 0; i < 4; i++ {
		require.Zero(t, inner.Count(s.Key(i)))
	}
	fs.SetPolicy(counterCalls(faulty.Only(faulty.Script(faulty.LoseAck), faulty.MethodPut)))
	r, err := s.Credit(ctx, "t1", 5)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Applied, r.Outcome)
	require.Equal(t, 1, inner.Count("acct"))
}

// Observer events of the sub-ledgers pass through.
func TestShardedObserver(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	ops := map[string]int{}
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		mu.Lock()
		defer mu.Unlock()
		ops[e.Op+"/"+e.Outcome]++
	})
	s, err := NewSharded(memory.NewSiblings(), "acct", 4, Options{Actor: "a", Observer: obs})
	require.NoError(t, err)
	_, _ = s.Credit(ctx, "t1", 5)
	_, _ = s.Credit(ctx, "t1", 5)
	_, _ = s.Value(ctx)
	require.Equal(t, map[string]int{"update/" + observe.Applied: 1, "update/" + observe.Duplicate: 1, "read/" + observe.OK: 4}, ops)
}

// A Sharded reports to its Observer the updates it answers or refuses
// itself: invalid input, a layout it may not write, and a retry answered
// from the sub-key of the other n of a layout race; the sub-keys' ledgers
// report the rest.
func TestShardedObserverSeesWhatItAnswers(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var events []observe.Event
	obs := observe.Func(func(_ context.Context, e observe.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Component == "ledger" {
			events = append(events, e)
		}
	})
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, e := range events {
			out = append(out, e.Op+"/"+e.Outcome)
		}
		events = nil
		return out
	}
	st := memory.NewSiblings()
	s4, err := NewSharded(st, "acct", 4, Options{Actor: "a", Observer: obs})
	require.NoError(t, err)
	_, err = s4.Credit(ctx, "t", 5)
	require.NoError(t, err)
	_, err = s4.Credit(ctx, "u", -5)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = s4.Debit(ctx, "u", 0)
	require.ErrorIs(t, err, crdt.ErrInvalidAmount)
	_, err = s4.Update(ctx, "", 5)
	require.ErrorIs(t, err, crdt.ErrInvalidTxnID)
	require.Equal(t, []string{"update/applied", "update/invalid", "update/invalid", "update/invalid"}, taken())

	// Another n is refused.
	s2, err := NewSharded(st, "acct", 2, Options{Actor: "b", Observer: obs})
	require.NoError(t, err)
	_, err = s2.Credit(ctx, "t", 5)
	require.ErrorIs(t, err, crdt.ErrInvalidConfig)
	got := taken()
	require.Len(t, got, 1)
	require.NotEqual(t, "update/ok", got[0])

	// A layout race: a marker naming 8 beside 4's. A retry of t through 8
	// is answered from t's sub-key under 4.
	require.NoError(t, st.Put(ctx, "acct", "c~n8", []byte(shardedMarkerPrefix+"8"), nil))
	s8, err := NewSharded(st, "acct", 8, Options{Actor: "c", Observer: obs})
	require.NoError(t, err)
	r, err := s8.Credit(ctx, "t", 5)
	require.NoError(t, err)
	require.Equal(t, tpncounter.Duplicate, r.Outcome)
	require.Equal(t, []string{"update/duplicate"}, taken())
}
