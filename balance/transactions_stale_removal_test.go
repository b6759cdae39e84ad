package balance_test

// TestTransactionsStaleRemovalEverySchedule checks the hole a review
// suspected in Transactions.Merge: it reads every row partition first, and
// nothing bounds how old a partition's snapshot is when that partition's
// removal batch (its delete-range) lands, so a late delete-range starting
// at a redundant copy might shadow a racing merge's tombstone.
//
// A slow merge M1 (clock +FutureSkew) reads the account after a prefix of
// credits, retries, merges, clock steps and the start of a racing merge
// M2 (clock 0: its reads and records, with a retry of x that read no
// record landing between them, so that M2 places its tombstone of x at
// x's older place, one M1 then reads as a redundant copy). Then, at each
// of M1's row-partition writes, before it is sent (a process pause:
// SPEC.md 9.3 bounds only a merge's step 4 to its sum row, by MaxMerge,
// not its read to its removal) and while it is in flight (sent and
// stamped, landing at most SafetyMargin − 2·FutureSkew later), the
// schedule may step M2 one batch (its tombstones, its sum row, its
// removal; it pauses before each), run whole merges, credit and retry,
// and step the clock by 19 s or SettleGrace. Every schedule of the scope
// is run (a depth-first walk of the choices). After every step the
// balance must be the sum of the credits whose row landed, each once;
// after M1 and M2 finish, idle merges must leave one settled sum row a
// partition, every read must succeed, and a retry of every credit from
// either clock must answer Duplicate and count nothing. The test also
// counts the schedules in which M1's delete-range, starting at a
// redundant copy, shadows a tombstone it did not read, and fails if the
// scope no longer reaches one.
//
// The timing assumptions relied on (SPEC.md 9.3): clocks agree within
// FutureSkew (writers at 0 and +FutureSkew); every write lands within
// SafetyMargin − 2·FutureSkew of being sent (a step that would keep a
// write in flight longer is not offered) and is acknowledged when it
// lands; a merge's pauses between store calls are otherwise unbounded
// (MaxMerge is the code's own check). Nothing is held past SafetyMargin.
//
//	go test ./balance -run '^TestTransactionsStaleRemovalEverySchedule$' -v
//	COUNTERKIT_CASES=1 go test ./balance -run '^TestTransactionsStaleRemovalEverySchedule$' -timeout 1h -v
//
// A failure prints its schedule's choices; COUNTERKIT_SCHEDULE='[0 2 1
// ...]' (with COUNTERKIT_CASES as it was) replays it, logging the rows
// after every step.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
)

// srScope is the size of the enumeration.
type srScope struct {
	prefix    int    // steps before M1 reads
	prefixOps []srOp // chosen from
	ops       int    // steps other than M2's, during M1
	during    []srOp // chosen from (t19s only where no write stays in flight past the bound, tSettle where none is in flight)
}

// srStats counts what the schedules reached.
type srStats struct {
	runs          int
	ranges        int // M1's delete-range landed
	unreadTombs   int // ... with a tombstone M1 had not read in its range
	shadowed      int // ... and shadowed it (stamped no later than the range)
	fromRedundant int // ... the range starting at a redundant copy
	ofValid       int // ... a tombstone of a valid sum row
	ofSettled     int // ... of a settled one
}

// srTxns are the transactions: x, y whose row key sorts before x's, and z
// whose row key sorts after it, all in row partition 1 of 2.
type srTxns struct{ x, y, z crdt.TxnID }

var srIDs = func() srTxns {
	key := func(id crdt.TxnID) []byte {
		return balance.EncodeKey(balance.Key{UpdateID: balance.TxnRowID(id), Kind: balance.KindNormal})
	}
	x := txnIn("x", 1)
	var y, z crdt.TxnID
	for i := 0; y == "" || z == ""; i++ {
		id := txnIn(fmt.Sprintf("o%d", i), 1)
		switch c := bytes.Compare(key(id), key(x)); {
		case c < 0 && y == "":
			y = id
		case c > 0 && z == "":
			z = id
		}
	}
	return srTxns{x, y, z}
}()

var srAmount = map[string]int64{"x": 1, "y": 10, "z": 100}

// srProc is the racing merge M2, run one batch at a time in a goroutine.
type srProc struct {
	started, done bool
	inside        string // a retry landing between M2's read and its records
	resume        chan struct{}
	parked        chan struct{}
	err           error
}

type srWorld struct {
	ctx      context.Context
	c        *testClock
	mem      *memory.Partitions
	a, b     *balance.Transactions // fresh writers at clock 0 and +FutureSkew
	m1, m2   *balance.Transactions // the slow merge (+FutureSkew) and the racing one (0)
	check    *balance.Transactions
	o        balance.TxnOptions
	bound    time.Duration
	landed   map[string]bool
	choose   func(n int) int
	ops      int // steps left
	during   []srOp
	m1Read   map[string]bool // the row keys M1 read
	stats    srStats
	p2       *srProc
	inflight time.Time // send of M1's write in flight (zero: none)
	trace    []string
	fail     error
	dump     func(string)
}

// srBase is every run's start: each writer stamps its writes from its own
// clock (stampStore), so runs need not be spaced apart.
var srBase = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)

// srTick is the clock's step before each choice and each step, so that
// no two merges take versions at one time (whose order would then be
// random).
const srTick = time.Millisecond

// srM1Store parks M1 before each row-partition write is sent and while it
// is in flight (stamped, not landed).
type srM1Store struct {
	store.Partitions
	w      *srWorld
	flight bool
}

func (s *srM1Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if len(muts) > 0 && !strings.Contains(muts[0].Partition, "#txn.") {
		if s.flight {
			sent := s.w.c.Now()
			s.w.inflight = sent
			s.w.slot("in flight " + srBatch(muts))
			s.w.inflight = time.Time{}
			if d := s.w.c.Now().Sub(sent); d > s.w.bound && s.w.fail == nil {
				s.w.fail = fmt.Errorf("M1's write in flight %v, past the bound %v: the scope breaks its own assumption", d, s.w.bound)
			}
			err := s.w.landM1(ctx, s.Partitions, muts)
			if s.w.dump != nil {
				s.w.dump("M1's " + srBatch(muts) + " lands")
			}
			return err
		}
		s.w.slot("send " + srBatch(muts))
	}
	return s.Partitions.Apply(ctx, muts)
}

func (s *srM1Store) Snapshot(ctx context.Context, p string, limit int, level store.Read) ([]store.Row, error) {
	rows, err := s.Partitions.Snapshot(ctx, p, limit, level)
	if !s.flight && !strings.Contains(p, "#txn.") {
		for _, r := range rows {
			s.w.m1Read[string(r.Key)] = true
		}
	}
	return rows, err
}

// landM1 lands M1's batch muts; for a delete-range, it counts the rows in
// the range that M1 did not read, and the tombstones among them the range
// shadows (those gone once it landed).
func (w *srWorld) landM1(ctx context.Context, st store.Partitions, muts []store.Mutation) error {
	var from []byte
	for _, m := range muts {
		if m.Op == store.OpDeleteRange {
			from = m.Key
		}
	}
	if from == nil {
		return st.Apply(ctx, muts)
	}
	w.stats.ranges++
	p := muts[0].Partition
	unread := map[string]balance.ID{} // key -> the version of its sum row
	rows, err := w.mem.Snapshot(ctx, p, balance.MaxRows, store.ReadComplete)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if _, k, err := balance.DecodeTxnRowKey(r.Key); err == nil && k.Kind == balance.KindTombstone && bytes.Compare(r.Key, from) >= 0 && !w.m1Read[string(r.Key)] {
			unread[string(r.Key)] = k.Version
		}
	}
	v, err := balance.EvaluateTxnRows(p, rows)
	if err != nil {
		return err
	}
	if err := st.Apply(ctx, muts); err != nil {
		return err
	}
	if len(unread) == 0 {
		return nil
	}
	w.stats.unreadTombs++
	rows, err = w.mem.Snapshot(ctx, p, balance.MaxRows, store.ReadComplete)
	if err != nil {
		return err
	}
	for _, r := range rows {
		delete(unread, string(r.Key))
	}
	if len(unread) == 0 {
		return nil
	}
	w.stats.shadowed++
	if w.redundant(from) {
		w.stats.fromRedundant++
	}
	valid, settled := false, false
	for _, version := range unread {
		for _, s := range v.Valid {
			if s.Version == version {
				valid, settled = true, settled || s.Settled
			}
		}
	}
	if valid {
		w.stats.ofValid++
	}
	if settled {
		w.stats.ofSettled++
	}
	return nil
}

// redundant reports whether the row M1 read at key is also stored at a
// newer place.
func (w *srWorld) redundant(key []byte) bool {
	at, k, err := balance.DecodeTxnRowKey(key)
	if err != nil {
		return false
	}
	for r := range w.m1Read {
		if at2, k2, err := balance.DecodeTxnRowKey([]byte(r)); err == nil && k2 == k && at2 > at {
			return true
		}
	}
	return false
}

// srM2Store parks M2 before each row-partition write.
type srM2Store struct {
	store.Partitions
	w *srWorld
}

func (s *srM2Store) Apply(ctx context.Context, muts []store.Mutation) error {
	if s.w.p2.inside != "" && len(muts) > 0 && strings.Contains(muts[0].Partition, "#txn.") {
		// A retry that read no record lands between M2's read and its
		// records (its row is newer than any M2 read).
		txn := s.w.p2.inside
		s.w.p2.inside = ""
		s.w.trace = append(s.w.trace, "B"+txn+" lands")
		if err := s.w.apply(s.w.b, txn); err != nil && s.w.fail == nil {
			s.w.fail = err
		}
	}
	if len(muts) > 0 && !strings.Contains(muts[0].Partition, "#txn.") {
		s.w.p2.parked <- struct{}{}
		<-s.w.p2.resume
	}
	return s.Partitions.Apply(ctx, muts)
}

// srBatch names a batch by its mutations' ops and row kinds.
func srBatch(muts []store.Mutation) string {
	var b strings.Builder
	for _, m := range muts {
		switch m.Op {
		case store.OpPut:
			if _, k, err := balance.DecodeTxnRowKey(m.Key); err == nil {
				b.WriteByte(byte(k.Kind))
			}
		case store.OpDelete:
			b.WriteByte('d')
		case store.OpDeleteRange:
			b.WriteString("[")
		}
	}
	return b.String()
}

func newSrWorld(choose func(int) int, sc srScope) *srWorld {
	w := &srWorld{ctx: context.Background(), c: &testClock{t: srBase}, mem: memory.NewPartitions(), landed: map[string]bool{},
		choose: choose, ops: sc.ops, during: sc.during, m1Read: map[string]bool{}}
	mk := func(st store.Partitions, off time.Duration) *balance.Transactions {
		clk := func() time.Time { return w.c.Now().Add(off) }
		tx, err := balance.NewTransactions(&stampStore{Partitions: st, clock: clk, last: new(int64)},
			balance.TxnOptions{Partitions: 2, Options: balance.Options{Clock: clk}})
		if err != nil {
			panic(err)
		}
		return tx
	}
	w.check = mk(w.mem, 0)
	w.o = w.check.Options()
	fs := w.o.FutureSkew
	w.bound = w.o.SafetyMargin - 2*fs
	w.a, w.b = mk(w.mem, 0), mk(w.mem, fs)
	// M1: parked before sending (above its stamps) and in flight (below).
	clk := func() time.Time { return w.c.Now().Add(fs) }
	m1, err := balance.NewTransactions(&srM1Store{w: w, Partitions: &stampStore{Partitions: &srM1Store{w: w, flight: true, Partitions: w.mem}, clock: clk, last: new(int64)}},
		balance.TxnOptions{Partitions: 2, Options: balance.Options{Clock: clk}})
	if err != nil {
		panic(err)
	}
	w.m1 = m1
	// M2: parked before sending (above its stamps); its writes land at once.
	m2, err := balance.NewTransactions(&srM2Store{w: w, Partitions: &stampStore{Partitions: w.mem, clock: w.c.Now, last: new(int64)}},
		balance.TxnOptions{Partitions: 2, Options: balance.Options{Clock: w.c.Now}})
	if err != nil {
		panic(err)
	}
	w.m2 = m2
	w.p2 = &srProc{resume: make(chan struct{}), parked: make(chan struct{})}
	return w
}

// srOp is one step of a schedule.
type srOp struct {
	name string
	run  func(w *srWorld) error
}

func (w *srWorld) apply(tx *balance.Transactions, txn string) error {
	id := map[string]crdt.TxnID{"x": srIDs.x, "y": srIDs.y, "z": srIDs.z}[txn]
	out, err := tx.Apply(w.ctx, acct, id, srAmount[txn])
	if err != nil {
		return fmt.Errorf("apply %s: %w", txn, err)
	}
	if out == balance.Applied {
		w.landed[txn] = true
	}
	return nil
}

func (w *srWorld) merge(tx *balance.Transactions) error {
	if _, err := tx.Merge(w.ctx, acct); err != nil && !errors.Is(err, crdt.ErrUnavailable) {
		return fmt.Errorf("merge: %w", err)
	}
	return nil
}

var (
	srAx = srOp{"Ax", func(w *srWorld) error { return w.apply(w.a, "x") }}
	srBx = srOp{"Bx", func(w *srWorld) error { return w.apply(w.b, "x") }}
	srAy = srOp{"Ay", func(w *srWorld) error { return w.apply(w.a, "y") }}
	srAz = srOp{"Az", func(w *srWorld) error { return w.apply(w.a, "z") }}
	srM  = srOp{"M", func(w *srWorld) error { return w.merge(w.a) }}
	srBM = srOp{"BM", func(w *srWorld) error { return w.merge(w.b) }}
	// srT steps 19 s, so that with the ticks a write in flight still lands
	// within the 20 s bound.
	srT  = srOp{"t19s", func(w *srWorld) error { w.c.Add(19 * time.Second); return nil }}
	srTS = srOp{"tSettle", func(w *srWorld) error { w.c.Add(w.o.SettleGrace + time.Second); return nil }}
	srM2 = srOp{"m2", func(w *srWorld) error { w.stepM2(); return nil }}
	// srM2x starts M2 with a retry of x landing between its read and its
	// records (as one that read no record and was written within
	// Deadline): M2 places its tombstone of x at x's older place.
	srM2x = srOp{"m2+Bx", func(w *srWorld) error {
		if !w.p2.started {
			w.p2.inside = "x"
		}
		w.stepM2()
		return w.fail
	}}
)

// stepM2 starts M2 (its reads and records, up to its first row-partition
// write) or lets its parked write land and runs it to the next one.
func (w *srWorld) stepM2() {
	p := w.p2
	if p.done {
		return
	}
	if !p.started {
		p.started = true
		go func() {
			_, err := w.m2.Merge(w.ctx, acct)
			p.err = err
			p.done = true
			p.parked <- struct{}{}
		}()
	} else {
		p.resume <- struct{}{}
	}
	<-p.parked
}

// slot is a point of M1's: the schedule chooses steps until "go on".
func (w *srWorld) slot(where string) {
	if w.fail != nil {
		return
	}
	w.trace = append(w.trace, "M1 "+where)
	for {
		w.c.Add(srTick)
		opts := []srOp{{name: "go on"}}
		if !w.p2.done {
			opts = append(opts, srM2)
		}
		if w.ops > 0 {
			for _, op := range w.during {
				switch {
				case op.name == srT.name && !w.inflight.IsZero() && w.c.Now().Add(19*time.Second+10*srTick).Sub(w.inflight) > w.bound:
				case op.name == srTS.name && !w.inflight.IsZero():
				default:
					opts = append(opts, op)
				}
			}
		}
		op := opts[w.choose(len(opts))]
		if op.run == nil {
			return
		}
		if op.name != "m2" {
			w.ops--
		}
		if w.step(op) != nil {
			return
		}
	}
}

// step runs op and checks the balance.
func (w *srWorld) step(op srOp) error {
	w.trace = append(w.trace, op.name)
	w.c.Add(srTick)
	err := op.run(w)
	if w.dump != nil {
		w.dump(op.name)
	}
	if err != nil {
		w.fail = err
		return err
	}
	w.fail = w.checkBalance()
	return w.fail
}

func (w *srWorld) want() int64 {
	var s int64
	for t := range w.landed {
		s += srAmount[t]
	}
	return s
}

func (w *srWorld) checkBalance() error {
	got, err := w.check.Balance(w.ctx, acct)
	if err != nil {
		return fmt.Errorf("balance: %w", err)
	}
	if want := w.want(); got != want {
		return fmt.Errorf("balance %d, want %d (landed %v)", got, want, w.landed)
	}
	return nil
}

// run runs one schedule: the prefix, M1 with its slots, M2 to its end,
// then the quiescent checks.
func (w *srWorld) run(sc srScope) error {
	for range sc.prefix {
		if err := w.step(sc.prefixOps[w.choose(len(sc.prefixOps))]); err != nil {
			return err
		}
	}
	w.trace = append(w.trace, "M1 reads")
	_, err := w.m1.Merge(w.ctx, acct)
	if w.fail != nil {
		return w.fail
	}
	if err != nil && !errors.Is(err, crdt.ErrUnavailable) {
		return fmt.Errorf("M1: %w", err)
	}
	w.trace = append(w.trace, "M1 done")
	for w.p2.started && !w.p2.done {
		if err := w.step(srM2); err != nil {
			return err
		}
	}
	if err := w.p2.err; err != nil && !errors.Is(err, crdt.ErrUnavailable) {
		return fmt.Errorf("M2: %w", err)
	}
	if err := w.checkBalance(); err != nil {
		return err
	}
	return w.quiesce()
}

// quiesce merges the idle account until each row partition holds one
// settled sum row at most, then retries every credit from both clocks.
func (w *srWorld) quiesce() error {
	for k := range 4 {
		w.c.Add(w.o.GCGrace + time.Minute)
		if err := w.merge(w.a); err != nil {
			return fmt.Errorf("idle merge %d: %w", k, err)
		}
		if err := w.checkBalance(); err != nil {
			return fmt.Errorf("idle merge %d: %w", k, err)
		}
	}
	for _, p := range w.check.RowPartitions(acct) {
		rows, err := w.mem.Snapshot(w.ctx, p, balance.MaxRows, store.ReadComplete)
		if err != nil {
			return err
		}
		if len(rows) > 1 {
			return fmt.Errorf("%d rows left in %s after four idle merges", len(rows), p)
		}
	}
	if _, err := w.check.Conflicts(w.ctx, acct); err != nil {
		return fmt.Errorf("conflicts: %w", err)
	}
	for t := range w.landed {
		for _, tx := range []*balance.Transactions{w.a, w.b} {
			id := map[string]crdt.TxnID{"x": srIDs.x, "y": srIDs.y, "z": srIDs.z}[t]
			out, err := tx.Apply(w.ctx, acct, id, srAmount[t])
			if err != nil || out != balance.Duplicate {
				return fmt.Errorf("retry of %s: %v (%v), want duplicate", t, out, err)
			}
		}
	}
	return w.checkBalance()
}

// enumerateStale runs every schedule of sc (up to limit, 0: all) and
// returns what they reached.
func enumerateStale(sc srScope, limit int) (srStats, error) {
	st, _, err := findStale(sc, limit, nil)
	return st, err
}

// findStale is enumerateStale that stops after the first schedule found
// reports true for, and returns its choices.
func findStale(sc srScope, limit int, found func(srStats) bool) (srStats, []int, error) {
	var path, sizes []int
	var st srStats
	for {
		depth := 0
		choose := func(n int) int {
			if depth < len(path) {
				if sizes[depth] != n {
					panic(fmt.Sprintf("nondeterminism at depth %d: %d vs %d choices", depth, sizes[depth], n))
				}
				depth++
				return path[depth-1]
			}
			path, sizes = append(path, 0), append(sizes, n)
			depth++
			return 0
		}
		w := newSrWorld(choose, sc)
		st.runs++
		err := w.run(sc)
		st.ranges += w.stats.ranges
		st.unreadTombs += w.stats.unreadTombs
		st.shadowed += w.stats.shadowed
		st.fromRedundant += w.stats.fromRedundant
		st.ofValid += w.stats.ofValid
		st.ofSettled += w.stats.ofSettled
		for w.p2.started && !w.p2.done { // a failed run leaves M2 parked
			w.stepM2()
		}
		if found != nil && err == nil && found(w.stats) {
			return st, path[:depth], nil
		}
		if err != nil {
			cases := ""
			if os.Getenv("COUNTERKIT_CASES") != "" {
				cases = "COUNTERKIT_CASES=1 "
			}
			return st, nil, fmt.Errorf("schedule %d %v: %v\nsteps: %s\nreplay: %sCOUNTERKIT_SCHEDULE='%v' go test ./balance -run '^TestTransactionsStaleRemovalEverySchedule$' -v",
				st.runs, path[:depth], err, strings.Join(w.trace, "; "), cases, path[:depth])
		}
		path, sizes = path[:depth], sizes[:depth]
		for len(path) > 0 && path[len(path)-1] == sizes[len(sizes)-1]-1 {
			path, sizes = path[:len(path)-1], sizes[:len(sizes)-1]
		}
		if len(path) == 0 || limit > 0 && st.runs >= limit {
			return st, nil, nil
		}
		path[len(path)-1]++
	}
}

// srCIScope: three steps before M1 reads (a credit x, M2 started with a
// retry of x landing between its read and its records, SettleGrace), then
// M2's batches and up to two steps (a whole merge, SettleGrace) anywhere
// among M1's sends and landings (39,198 schedules; the mutant check and
// TestTransactionsLateRangeShadowsRacingTombstone use it). srShortScope,
// TestTransactionsStaleRemovalEverySchedule's default, is srCIScope with
// up to one such step (6,694 schedules, 356 of them with M1's late
// delete-range shadowing a racing tombstone). srFullScope, with
// COUNTERKIT_CASES, adds to srCIScope retries, a credit z, whole merges
// before M1 and from the clock ahead, 19 s steps (also while M1's write is
// in flight) and a credit y during M1.
var (
	srCIScope    = srScope{prefix: 3, prefixOps: []srOp{srAx, srM2x, srTS}, ops: 2, during: []srOp{srM, srTS}}
	srShortScope = srScope{prefix: 3, prefixOps: []srOp{srAx, srM2x, srTS}, ops: 1, during: []srOp{srM, srTS}}
	srFullScope  = srScope{prefix: 3, prefixOps: []srOp{srAx, srBx, srAz, srM2x, srM, srTS}, ops: 2, during: []srOp{srM, srBM, srBx, srAy, srT, srTS}}
)

func srScopeOf() srScope {
	if os.Getenv("COUNTERKIT_CASES") != "" {
		return srFullScope
	}
	return srShortScope
}

func TestTransactionsStaleRemovalEverySchedule(t *testing.T) {
	if testing.Short() {
		t.Skip("one operation runs at a time: the first pass runs it")
	}
	sc := srScopeOf()
	if s := os.Getenv("COUNTERKIT_SCHEDULE"); s != "" {
		srReplay(t, sc, s)
		return
	}
	st, err := enumerateStale(sc, 0)
	if err != nil {
		t.Fatalf("after %d schedules: %v", st.runs, err)
	}
	t.Logf("%d schedules: %d with M1's delete-range landing, %d of them over a racing tombstone M1 had not read, %d shadowing it "+
		"(%d starting at a redundant copy; %d a tombstone of a valid sum row, %d of a settled one); every balance exact",
		st.runs, st.ranges, st.unreadTombs, st.shadowed, st.fromRedundant, st.ofValid, st.ofSettled)
	if st.fromRedundant == 0 {
		t.Error("no schedule has a late delete-range, starting at a redundant copy, shadow a racing tombstone: the scope misses the case")
	}
}

// srReplay runs the one schedule of choices (as a failure prints them,
// "[0 2 1 ...]") and logs the rows after every step.
func srReplay(t *testing.T, sc srScope, choices string) {
	var path []int
	for _, f := range strings.Fields(strings.Trim(choices, "[]")) {
		var k int
		if _, err := fmt.Sscan(f, &k); err != nil {
			t.Fatalf("COUNTERKIT_SCHEDULE: %v", err)
		}
		path = append(path, k)
	}
	w, err := srRun(t, sc, path)
	t.Logf("steps: %s", strings.Join(w.trace, "; "))
	if err != nil {
		t.Fatal(err)
	}
}

// srRun runs the schedule of choices path, logging the rows after every
// step.
func srRun(t *testing.T, sc srScope, path []int) (*srWorld, error) {
	d := 0
	w := newSrWorld(func(n int) int {
		k := 0
		if d < len(path) {
			k = path[d]
		}
		d++
		if k >= n {
			t.Fatalf("schedule: choice %d is %d of %d", d, k, n)
		}
		return k
	}, sc)
	w.dump = func(what string) {
		t.Logf("after %s:", what)
		for _, p := range w.check.RowPartitions(acct) {
			rows, err := w.mem.Snapshot(context.Background(), p, balance.MaxRows, store.ReadComplete)
			if err != nil {
				t.Fatal(err)
			}
			rsDump(t, rows)
		}
	}
	err := w.run(sc)
	for w.p2.started && !w.p2.done {
		w.stepM2()
	}
	return w, err
}

// The case the enumeration was built for, in one schedule of its CI
// scope: x is credited at 0 (place P0); after SettleGrace, M2 (clock 0)
// reads x at P0 alone and pauses; a retry of x that read no record lands
// at P1 = 66 s (clock +FutureSkew); M2 records x. M1 (clock
// +FutureSkew) reads x at P0 and P1: the copy at P0 is redundant and
// older than SettleGrace, so M1 writes its tombstone of x at P1, its sum
// row S1, and sends its removal, a delete-range from x at P0. While that
// is in flight M2 writes its tombstone of x at P0 (the newest place it
// read) and its sum row S2, whose version is older than S1's: S2 is valid
// and counts x, S1 is not. M1's delete-range then lands, stamped by its
// clock, FutureSkew ahead, after M2's tombstone, and shadows it: S2 is no
// longer valid, S1 is, and x still counts once. (SPEC.md 9.4's "Why
// removing is safe" says a T row a racing merge writes in the range names
// a row that was gone; this one names a live row, and its valid sum row
// loses it while unsettled.)
func TestTransactionsLateRangeShadowsRacingTombstone(t *testing.T) {
	w, err := srRun(t, srCIScope, []int{0, 2, 1, 0, 0, 0, 0, 0, 1, 1, 0})
	t.Logf("steps: %s", strings.Join(w.trace, "; "))
	if err != nil {
		t.Fatal(err)
	}
	if w.stats.fromRedundant != 1 || w.stats.ofValid != 1 {
		t.Fatalf("the schedule no longer has M1's delete-range, from a redundant copy, shadow a valid sum row's tombstone: %+v", w.stats)
	}
}
