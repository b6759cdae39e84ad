package balance_test

// TestTransactionsEveryInterleaving checks balance.Transactions with its
// defaults (16 row partitions, 16 record shards, a 24 h RetryWindow) at
// the grain of store calls. Each operation (an Apply or a Merge, each on a
// Transactions of its own with its own clock offset within FutureSkew and
// its own write stamps) runs in a goroutine that parks before every store
// call on a partition some operation may write (reads of partitions no one
// writes commute with everything). The controller runs every schedule
// with at most P preemptions and at most one crash (an operation killed
// before one of its store calls), the clock moving one tick a step, and
// prunes schedules outside SPEC.md 9.3's timing assumption (a write held
// longer than SafetyMargin − 2·FutureSkew between its send and its
// landing). After every step the balance must be the sum of the distinct
// transactions whose row ever landed. Then merges settle and remove the
// rows, and each writer retries every transaction at points up to
// RetryWindow after the first acknowledgement of its records, across the
// window's boundaries: a retry inside the window must be a duplicate, and
// the balance stay exact.
//
//	go test ./balance -run '^TestTransactionsEveryInterleaving$' -v
//	COUNTERKIT_CASES=2 go test ./balance -run '^TestTransactionsEveryInterleaving$' -timeout 2h -v

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

type schedKilled struct{}

type schedTid struct{}

type schedEvent struct {
	tid  int
	done bool
}

// schedWorld is one run.
type schedWorld struct {
	sc      *schedScenario
	c       *testClock
	mem     *memory.Partitions
	events  chan schedEvent
	resume  []chan bool
	running atomic.Int32    // operations whose goroutine has not ended
	watch   map[string]bool // partitions some op may write: park before calls on them
	mu      sync.Mutex
	landed  map[balance.ID]int64
	illegal string
	ackAt   map[int]time.Time // op -> time of its last record write of a txn (world clock)
	summed  map[int]bool      // op wrote tombstones
	trace   []string
	txOf    []*balance.Transactions
	checker *balance.Transactions
	opErr   []error
	opOut   []string
	killed  []bool
	done    []bool
	bound   time.Duration
	initAck time.Time // the initial merge's records (zero: none)
}

type schedOp struct {
	kind   byte // 'A' apply, 'M' merge
	off    time.Duration
	txn    crdt.TxnID
	amount int64
}

type schedScenario struct {
	name        string
	start       time.Time
	tick        time.Duration
	ops         []schedOp
	preempt     int
	crashes     int
	initialTxns []crdt.TxnID  // applied and merged before the scenario (not recorded otherwise)
	gap         time.Duration // clock step after the initial merge
}

// schedStore is the shared store: parks before watched calls, notes landings.
type schedStore struct {
	w *schedWorld
}

func (s *schedStore) park(ctx context.Context, what string, part string) {
	tid, ok := ctx.Value(schedTid{}).(int)
	if !ok || !s.w.watch[part] && !strings.Contains(part, "#txn.") {
		return
	}
	s.w.events <- schedEvent{tid: tid}
	if !<-s.w.resume[tid] {
		panic(schedKilled{})
	}
	s.w.mu.Lock()
	s.w.trace = append(s.w.trace, fmt.Sprintf("%d:%s %s", tid, what, part))
	s.w.mu.Unlock()
}

func (s *schedStore) Scan(ctx context.Context, p string, from []byte, level store.Read, fn func(store.Row) bool) error {
	s.park(ctx, "scan", p)
	return s.w.mem.Scan(ctx, p, from, level, fn)
}

func (s *schedStore) Snapshot(ctx context.Context, p string, limit int, level store.Read) ([]store.Row, error) {
	s.park(ctx, "snap", p)
	return s.w.mem.Snapshot(ctx, p, limit, level)
}

func (s *schedStore) Apply(ctx context.Context, muts []store.Mutation) error {
	sent := s.w.c.Now()
	p := ""
	if len(muts) > 0 {
		p = muts[0].Partition
	}
	s.park(ctx, "apply", p)
	if d := s.w.c.Now().Sub(sent); d > s.w.bound {
		s.w.mu.Lock()
		if s.w.illegal == "" {
			s.w.illegal = fmt.Sprintf("write to %s in flight %v", p, d)
		}
		s.w.mu.Unlock()
	}
	if err := s.w.mem.Apply(ctx, muts); err != nil {
		return err
	}
	tid, ok := ctx.Value(schedTid{}).(int)
	if !ok {
		tid = -1
	}
	s.w.mu.Lock()
	defer s.w.mu.Unlock()
	for _, m := range muts {
		if m.Op != store.OpPut {
			continue
		}
		if strings.Contains(m.Partition, "#txn.") && !strings.HasSuffix(m.Partition, "expired") && !strings.HasSuffix(m.Partition, "layout") {
			s.w.ackAt[tid] = s.w.c.Now()
			continue
		}
		if _, k, err := balance.DecodeTxnRowKey(m.Key); err == nil {
			var r balance.Row
			if r.UnmarshalBinary(m.Value) == nil {
				switch {
				case k.Kind == balance.KindNormal:
					if _, ok := s.w.landed[k.UpdateID]; !ok {
						s.w.landed[k.UpdateID] = r.Amount
					}
				case k.Kind == balance.KindTombstone:
					s.w.summed[tid] = true
				}
			}
		}
	}
	return nil
}

var schedBase = time.Date(2150, 1, 1, 0, 0, 0, 0, time.UTC)

func newSchedWorld(sc *schedScenario) *schedWorld {
	w := &schedWorld{sc: sc, mem: memory.NewPartitions(), landed: map[balance.ID]int64{}, ackAt: map[int]time.Time{}, summed: map[int]bool{}}
	w.c = &testClock{t: sc.start}
	st := &schedStore{w: w}
	mk := func(off time.Duration) *balance.Transactions {
		clk := func() time.Time { return w.c.Now().Add(off) }
		tx, err := balance.NewTransactions(&stampStore{Partitions: st, clock: clk, last: new(int64)}, balance.TxnOptions{Options: balance.Options{Clock: clk}})
		if err != nil {
			panic(err)
		}
		return tx
	}
	w.checker = mk(0)
	o := w.checker.Options()
	w.bound = o.SafetyMargin - 2*o.FutureSkew
	w.watch = map[string]bool{}
	for _, op := range sc.ops {
		if op.kind == 'A' {
			w.watch[rowPartOf(w.checker, op.txn)] = true
		}
	}
	for _, x := range sc.initialTxns {
		w.watch[rowPartOf(w.checker, x)] = true
	}
	for _, op := range sc.ops {
		w.txOf = append(w.txOf, mk(op.off))
	}
	n := len(sc.ops)
	w.events = make(chan schedEvent)
	w.resume = make([]chan bool, n)
	for i := range w.resume {
		w.resume[i] = make(chan bool)
	}
	w.opErr, w.opOut, w.killed, w.done = make([]error, n), make([]string, n), make([]bool, n), make([]bool, n)
	return w
}

func rowPartOf(tx *balance.Transactions, txn crdt.TxnID) string {
	id := balance.TxnRowID(txn)
	return tx.RowPartitions(acct)[int(id[14])%tx.Options().Partitions]
}

func (w *schedWorld) want() int64 {
	var s int64
	for _, a := range w.landed {
		s += a
	}
	return s
}

func (w *schedWorld) check(when string) error {
	got, err := w.checker.Balance(context.Background(), acct)
	if err != nil {
		return fmt.Errorf("%s: balance: %v", when, err)
	}
	if want := w.want(); got != want {
		return fmt.Errorf("%s: balance %d, want %d (landed %v)", when, got, want, w.landed)
	}
	return nil
}

// run executes one schedule; choose picks among n options.
func (w *schedWorld) run(choose func(n int) int) error {
	ctx := context.Background()
	// setup: initial txns, applied and merged by the checker outside the scenario
	for _, x := range w.sc.initialTxns {
		if _, err := w.checker.Apply(ctx, acct, x, 1); err != nil {
			return err
		}
	}
	if len(w.sc.initialTxns) > 0 {
		w.c.Add(time.Second)
		w.initAck = w.c.Now()
		if _, err := w.checker.Merge(ctx, acct); err != nil {
			return err
		}
		w.c.Add(time.Second + w.sc.gap)
	}
	n := len(w.sc.ops)
	for i := range n {
		w.running.Add(1)
		go func(i int) {
			defer func() {
				if r := recover(); r != nil {
					if _, ok := r.(schedKilled); !ok {
						panic(r)
					}
				}
				w.running.Add(-1)
				w.events <- schedEvent{tid: i, done: true}
			}()
			// begin: park
			w.events <- schedEvent{tid: i}
			if !<-w.resume[i] {
				panic(schedKilled{})
			}
			cx := context.WithValue(ctx, schedTid{}, i)
			op := w.sc.ops[i]
			tx := w.txOf[i]
			switch op.kind {
			case 'A':
				out, err := tx.Apply(cx, acct, op.txn, op.amount)
				w.opErr[i], w.opOut[i] = err, out.String()
			case 'M':
				_, err := tx.Merge(cx, acct)
				w.opErr[i] = err
			}
		}(i)
		<-w.events // parked at begin
	}
	parked := make([]bool, n)
	for i := range parked {
		parked[i] = true
	}
	// A schedule that ends early (pruned, or failed) kills the operations
	// still parked, so that their goroutines end with it: left parked,
	// each pruned schedule's would hold its world until the process
	// ends (a run of every schedule then grew past 24 GB).
	defer func() {
		for i := range parked {
			for parked[i] {
				w.resume[i] <- false
				parked[i] = !(<-w.events).done
			}
		}
	}()
	cur, preempts, crashes := -1, 0, 0
	for {
		var enabled []int
		for i := range n {
			if parked[i] {
				enabled = append(enabled, i)
			}
		}
		if len(enabled) == 0 {
			break
		}
		// options: resume e (preemption if cur parked and e != cur), or kill e
		type opt struct {
			i    int
			kill bool
		}
		var opts []opt
		if cur >= 0 && parked[cur] {
			opts = append(opts, opt{i: cur})
		}
		for _, e := range enabled {
			if e == cur {
				continue
			}
			if cur >= 0 && parked[cur] && preempts >= w.sc.preempt {
				continue
			}
			// symmetry: do not start an op before an identical earlier one that has not started
			opts = append(opts, opt{i: e})
		}
		if crashes < w.sc.crashes {
			for _, e := range enabled {
				opts = append(opts, opt{i: e, kill: true})
			}
		}
		k := 0
		if len(opts) > 1 {
			k = choose(len(opts))
		}
		o := opts[k]
		if o.kill {
			crashes++
			w.killed[o.i] = true
			w.trace = append(w.trace, fmt.Sprintf("kill %d", o.i))
		} else if cur >= 0 && parked[cur] && o.i != cur {
			preempts++
		}
		cur = o.i
		w.c.Add(w.sc.tick)
		w.resume[o.i] <- !o.kill
		ev := <-w.events
		if ev.tid != o.i {
			clear(parked) // the operations are out of step: leave them
			return fmt.Errorf("scheduler: event from %d, resumed %d", ev.tid, o.i)
		}
		parked[o.i] = !ev.done
		if ev.done {
			w.done[o.i] = true
		}
		if w.illegal != "" {
			return nil
		}
		if err := w.check("step " + strconv.Itoa(len(w.trace))); err != nil {
			return err
		}
	}
	return w.quiesce()
}

// quiesce settles the account, then retries every transaction of the
// scenario from every op's Transactions (their clock offsets) at points up
// to RetryWindow after the earliest acknowledgement of a merge's records
// that went on to sum it.
func (w *schedWorld) quiesce() error {
	ctx := context.Background()
	o := w.checker.Options()
	// earliest ack of a merge that summed (wrote tombstones), in world time
	var ack time.Time
	for tid, at := range w.ackAt {
		if tid >= 0 && w.summed[tid] && (ack.IsZero() || at.Before(ack)) {
			ack = at
		}
	}
	merge := func(label string) error {
		if _, err := w.checker.Merge(ctx, acct); err != nil {
			return fmt.Errorf("%s: merge: %v", label, err)
		}
		return w.check(label)
	}
	if !w.initAck.IsZero() {
		ack = w.initAck // the earliest records: the window runs from them
	}
	recorded := map[balance.ID]bool{} // landed before the quiescing merges: they record it
	for id := range w.landed {
		recorded[id] = true
	}
	for k := range 3 {
		w.c.Add(o.SettleGrace + o.MaxMerge + o.FutureSkew + time.Second)
		if k == 0 && ack.IsZero() {
			ack = w.c.Now()
		}
		if err := merge(fmt.Sprintf("quiesce merge %d", k)); err != nil {
			return err
		}
	}
	w.c.Add(o.GCGrace)
	if err := merge("quiesce merge gc"); err != nil {
		return err
	}
	// retry points relative to ack (world clock): inside the window
	points := []time.Duration{o.RetryWindow / 2, o.RetryWindow - o.FutureSkew - time.Second, o.RetryWindow - time.Millisecond}
	seen := map[crdt.TxnID]bool{}
	for _, p := range points {
		at := ack.Add(p)
		if at.Before(w.c.Now()) {
			continue
		}
		w.c.Set(at)
		for i, op := range w.sc.ops {
			if op.kind != 'A' {
				continue
			}
			seen[op.txn] = true
			out, err := w.txOf[i].Apply(ctx, acct, op.txn, op.amount)
			if err != nil {
				return fmt.Errorf("retry %s by op %d at ack+%v: %v", op.txn, i, p, err)
			}
			if recorded[balance.TxnRowID(op.txn)] && out != balance.Duplicate {
				return fmt.Errorf("retry %s by op %d (offset %v) at ack+%v (clock %v): %v, want duplicate", op.txn, i, op.off, p, at.Add(op.off), out)
			}
			if err := w.check(fmt.Sprintf("after retry at ack+%v", p)); err != nil {
				return err
			}
		}
		// merges across the retries
		w.c.Add(o.SettleGrace + o.MaxMerge + o.FutureSkew + time.Second)
		if err := merge("merge after retries"); err != nil {
			return err
		}
		w.c.Add(o.SettleGrace + o.MaxMerge + o.FutureSkew + time.Second)
		if err := merge("merge after retries 2"); err != nil {
			return err
		}
	}
	return nil
}

// enumerateSched runs every schedule of sc and returns the number of runs and
// of pruned runs.
func enumerateSched(sc *schedScenario, limit int) (runs, pruned int, err error) {
	var path []int // choices
	var sizes []int
	for {
		depth := 0
		choose := func(n int) int {
			if depth < len(path) {
				if sizes[depth] != n {
					panic(fmt.Sprintf("nondeterminism at depth %d: %d vs %d options", depth, sizes[depth], n))
				}
				c := path[depth]
				depth++
				return c
			}
			path = append(path, 0)
			sizes = append(sizes, n)
			depth++
			return 0
		}
		w := newSchedWorld(sc)
		runs++
		if e := w.run(choose); e != nil {
			return runs, pruned, fmt.Errorf("%s run %d: %v\nschedule %v\ntrace: %s", sc.name, runs, e, path[:depth], strings.Join(w.trace, "; "))
		}
		if w.illegal != "" {
			pruned++
		}
		if k := w.running.Load(); k != 0 {
			return runs, pruned, fmt.Errorf("%s run %d: %d operations still parked after the schedule ended", sc.name, runs, k)
		}
		path, sizes = path[:depth], sizes[:depth]
		for len(path) > 0 && path[len(path)-1] == sizes[len(sizes)-1]-1 {
			path, sizes = path[:len(path)-1], sizes[:len(sizes)-1]
		}
		if len(path) == 0 {
			return runs, pruned, nil
		}
		path[len(path)-1]++
		if limit > 0 && runs >= limit {
			return runs, pruned, fmt.Errorf("limit %d reached", limit)
		}
	}
}

func schedMidnight(days int) time.Time { return schedBase.AddDate(0, 0, days) }

func schedScenarios() []*schedScenario {
	fs := 5 * time.Second
	var out []*schedScenario
	day := 0
	for _, startOff := range []time.Duration{-3 * time.Second, 0, 30 * time.Second} {
		for _, tick := range []time.Duration{time.Second, 3 * time.Second} {
			day += 3
			start := schedMidnight(day).Add(startOff)
			out = append(out,
				&schedScenario{name: fmt.Sprintf("twins+2merges start%v tick%v", startOff, tick), start: start, tick: tick, preempt: 2, crashes: 1,
					ops: []schedOp{{kind: 'A', off: 0, txn: "x", amount: 7}, {kind: 'A', off: fs, txn: "x", amount: 7}, {kind: 'M', off: fs}, {kind: 'M', off: 0}}},
			)
		}
	}
	return out
}

// schedScenarios2: two transactions in different row partitions with two
// merges (one may crash before any call, another resumes), and a retry of a
// transaction recorded before, racing the merges that settle and remove it,
// across a window boundary.
func schedScenarios2() []*schedScenario {
	fs := 5 * time.Second
	var out []*schedScenario
	day := 100
	tx := newSchedWorld(&schedScenario{}).checker
	var y crdt.TxnID
	for k := 0; ; k++ {
		y = crdt.TxnID(fmt.Sprintf("y%d", k))
		if rowPartOf(tx, y) != rowPartOf(tx, "x") {
			break
		}
	}
	for _, startOff := range []time.Duration{-3 * time.Second, 0} {
		for _, tick := range []time.Duration{time.Second, 3 * time.Second} {
			day += 3
			out = append(out, &schedScenario{name: fmt.Sprintf("x+y+2merges start%v tick%v", startOff, tick), start: schedMidnight(day).Add(startOff), tick: tick, preempt: 2, crashes: 1,
				ops: []schedOp{{kind: 'A', off: 0, txn: "x", amount: 7}, {kind: 'A', off: fs, txn: y, amount: 5}, {kind: 'M', off: fs}, {kind: 'M', off: 0}}})
		}
	}
	for _, gap := range []time.Duration{50 * time.Second, 57 * time.Second, 62 * time.Second} {
		for _, tick := range []time.Duration{time.Second, 3 * time.Second} {
			day += 3
			out = append(out, &schedScenario{name: fmt.Sprintf("recorded-retry gap%v tick%v", gap, tick), start: schedMidnight(day).Add(-gap - 2*time.Second), tick: tick, preempt: 2, crashes: 1,
				initialTxns: []crdt.TxnID{"x"}, gap: gap,
				ops: []schedOp{{kind: 'A', off: fs, txn: "x", amount: 1}, {kind: 'A', off: 0, txn: y, amount: 5}, {kind: 'M', off: fs}, {kind: 'M', off: 0}}})
		}
	}
	return out
}

// TestTransactionsEveryInterleaving runs, in CI, the first scenario of
// each kind (twins, x+y, a recorded retry) with no preemption (every order
// of the operations, each run whole or killed before one of its store
// calls: 3,248 schedules); with COUNTERKIT_CASES above 1, every scenario
// with at most two (2,324,562 schedules for the first eleven, in 25
// minutes on 2 shared cores). One operation runs at a time, so the race
// pass (-short) skips it.
func TestTransactionsEveryInterleaving(t *testing.T) {
	if testing.Short() {
		t.Skip("one operation runs at a time: the first pass runs it")
	}
	t.Parallel()
	all := proptest.Scale(1) > 1
	for k, sc := range append(schedScenarios(), schedScenarios2()...) {
		switch {
		case all:
		case k == 0 || k == 6 || k == 10:
			sc.preempt = 0
		default:
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			runs, pruned, err := enumerateSched(sc, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, %d preemptions: %d schedules (%d pruned as outside the timing assumption), 0 failures", sc.name, sc.preempt, runs, pruned)
		})
	}
}
