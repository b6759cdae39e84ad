package balance_test

// TestTransactionsEveryFaultSequence enumerates every sequence of a few
// actions from a menu: writers' applies that pass, are lost, land with an
// ambiguous error, or are held and land late within SafetyMargin −
// 2·FutureSkew; another amount; merges that pass, fail after their
// records, crash before any of their writes, or race a whole merge
// nested before any of their writes; clock steps; delivery of held
// writes. Two writers and a merger have clocks 0, +FutureSkew and
// +FutureSkew/2 apart, over two row partitions. After every step the
// balance counts each transaction whose row landed once, with one amount
// that landed; an Apply after a merge's records of that (transaction,
// amount) were acknowledged answers Duplicate, or conflicting for another
// amount; a refused Apply writes nothing. Then merges quiesce the account,
// and retries of every landed transaction from both writers, an hour and
// RetryWindow less a second after the first record, answer Duplicate and
// leave the balance unchanged (SPEC.md 9.4).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
	"github.com/counterkit/counterkit/store"
)

type feMode int

const (
	fePass feMode = iota
	feLose
	feAmbig
	feHold
)

type feHeld struct {
	muts []store.Mutation
	sent time.Time
}

// feFault is the shared store: the next row-partition write of an Apply
// gets mode; failRows refuses every row-partition write (a merge that
// fails after its records); it notes rows and records that landed.
type feFault struct {
	mem      *memory.Partitions
	c        *testClock
	mu       sync.Mutex
	mode     feMode
	failRows bool
	held     []feHeld
	wrote    int
	landed   map[balance.ID]map[int64]bool
	recorded map[balance.ID]map[int64]bool
	firstAck time.Time // world clock of the first record acknowledged
	hookAt   int       // run hook before the hookAt-th write (1-based) of any partition
	writes   int
	hook     func()
	crashAt  int // refuse every write from the crashAt-th (1-based) of the op on; 0: none
	// records landed by the current op, committed to recorded when every
	// record write of the op was acknowledged (a merge whose records were
	// not all acknowledged promises nothing, SPEC.md 9.4)
	pending    map[balance.ID]map[int64]bool
	recRefused bool
}

// commit moves the records of the op to recorded, unless one of its
// record writes was refused.
func (f *feFault) commit() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.recRefused {
		for id, amts := range f.pending {
			if f.recorded[id] == nil {
				f.recorded[id] = map[int64]bool{}
			}
			for a := range amts {
				f.recorded[id][a] = true
			}
			if f.firstAck.IsZero() {
				f.firstAck = f.c.Now()
			}
		}
	}
	f.pending, f.recRefused = map[balance.ID]map[int64]bool{}, false
}

func isRowPart(p string) bool { return !strings.Contains(p, "#txn.") }

func (f *feFault) Scan(ctx context.Context, p string, from []byte, l store.Read, fn func(store.Row) bool) error {
	return f.mem.Scan(ctx, p, from, l, fn)
}
func (f *feFault) Snapshot(ctx context.Context, p string, limit int, l store.Read) ([]store.Row, error) {
	return f.mem.Snapshot(ctx, p, limit, l)
}

func (f *feFault) land(muts []store.Mutation) error {
	if err := f.mem.Apply(context.Background(), muts); err != nil {
		return err
	}
	f.wrote++
	for _, m := range muts {
		if m.Op != store.OpPut {
			continue
		}
		var r balance.Row
		if r.UnmarshalBinary(m.Value) != nil || r.Kind != balance.KindNormal || !balance.IsTxnRowID(r.UpdateID) {
			continue
		}
		dst := f.landed
		if !isRowPart(m.Partition) {
			if strings.HasSuffix(m.Partition, "layout") || strings.HasSuffix(m.Partition, "expired") {
				continue
			}
			dst = f.pending
		}
		if dst[r.UpdateID] == nil {
			dst[r.UpdateID] = map[int64]bool{}
		}
		dst[r.UpdateID][r.Amount] = true
	}
	return nil
}

func (f *feFault) Apply(ctx context.Context, muts []store.Mutation) error {
	f.mu.Lock()
	f.writes++
	if f.hook != nil && f.writes == f.hookAt {
		h := f.hook
		f.hook = nil
		f.mu.Unlock()
		h()
		f.mu.Lock()
	}
	defer f.mu.Unlock()
	row := false
	for _, m := range muts {
		row = row || isRowPart(m.Partition)
	}
	if f.crashAt > 0 && f.writes >= f.crashAt {
		if !row {
			f.recRefused = true
		}
		return errors.New("fe: crashed")
	}
	if row && f.failRows {
		return errors.New("fe: refused")
	}
	if row && f.mode != fePass {
		mode := f.mode
		f.mode = fePass
		switch mode {
		case feLose:
			return errors.New("fe: lost")
		case feAmbig:
			if err := f.land(muts); err != nil {
				return err
			}
			return fmt.Errorf("%w: fe: timeout", crdt.ErrAmbiguousWrite)
		case feHold:
			f.held = append(f.held, feHeld{muts: muts, sent: f.c.Now()})
			return fmt.Errorf("%w: fe: timeout", crdt.ErrAmbiguousWrite)
		}
	}
	return f.land(muts)
}

func (f *feFault) deliver() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, h := range f.held {
		if err := f.land(h.muts); err != nil {
			return err
		}
	}
	f.held = nil
	return nil
}

// feWorld is the account of one enumerated sequence: its store, clock,
// two writers, a merger, a reader at true time, and the trace.
type feWorld struct {
	c       *testClock
	f       *feFault
	w1, w2  *balance.Transactions
	m       *balance.Transactions
	checker *balance.Transactions
	o       balance.TxnOptions
	x, y    crdt.TxnID
	trace   []string
}

// feEnumBase is a RetryWindow boundary: windows of 24 h count from 1970.
var feEnumBase = time.Date(2170, 1, 1, 0, 0, 0, 0, time.UTC)

// newFEWorld starts a sequence 7 s before a RetryWindow boundary, so that
// its records span two windows. Every write goes through a stampStore of
// the sequence's own store, so the stamps of a fixed start never go back.
func newFEWorld() *feWorld {
	c := &testClock{t: feEnumBase.Add(-7 * time.Second)}
	f := &feFault{mem: memory.NewPartitions(), c: c, landed: map[balance.ID]map[int64]bool{}, recorded: map[balance.ID]map[int64]bool{}, pending: map[balance.ID]map[int64]bool{}}
	w := &feWorld{c: c, f: f}
	mk := func(off time.Duration) *balance.Transactions {
		clk := func() time.Time { return c.Now().Add(off) }
		tx, err := balance.NewTransactions(&stampStore{Partitions: f, clock: clk, last: new(int64)},
			balance.TxnOptions{Options: balance.Options{Clock: clk}, Partitions: 2, RecordShards: 2})
		if err != nil {
			panic(err)
		}
		return tx
	}
	w.checker = mk(0)
	w.o = w.checker.Options()
	fs := w.o.FutureSkew
	w.w1, w.w2, w.m = mk(0), mk(fs), mk(fs/2)
	w.x, w.y = feTxnInPart("x", 0), feTxnInPart("y", 1)
	return w
}

// feTxnInPart returns a transaction id whose row is in row partition part
// of two.
func feTxnInPart(prefix string, part int) crdt.TxnID {
	for k := 0; ; k++ {
		if id := crdt.TxnID(fmt.Sprint(prefix, k)); int(balance.TxnRowID(id)[14])%2 == part {
			return id
		}
	}
}

// feAction is one action of a menu.
type feAction struct {
	name string
	do   func(w *feWorld) error
}

// advance steps the clock, landing first every held write the step would
// keep in flight past SafetyMargin − 2·FutureSkew.
func (w *feWorld) advance(d time.Duration) error {
	bound := w.o.SafetyMargin - 2*w.o.FutureSkew
	w.f.mu.Lock()
	late := false
	for _, h := range w.f.held {
		late = late || w.c.Now().Add(d).Sub(h.sent) > bound
	}
	w.f.mu.Unlock()
	if late {
		if err := w.f.deliver(); err != nil {
			return err
		}
	}
	w.c.Add(d)
	return nil
}

func (w *feWorld) apply(tx *balance.Transactions, txn crdt.TxnID, amount int64, mode feMode) error {
	id := balance.TxnRowID(txn)
	w.f.mu.Lock()
	w.f.mode = mode
	expectDup := w.f.recorded[id][amount]
	recordedOther := len(w.f.recorded[id]) > 0 && !expectDup
	wroteBefore := w.f.wrote
	w.f.mu.Unlock()
	out, err := tx.Apply(context.Background(), acct, txn, amount)
	w.f.mu.Lock()
	w.f.mode = fePass
	wrote := w.f.wrote != wroteBefore
	w.f.mu.Unlock()
	w.trace = append(w.trace, fmt.Sprintf("  -> %v %v", out, err))
	if expectDup && (err != nil || out != balance.Duplicate) {
		return fmt.Errorf("apply %s %d after its records were acknowledged: %v %v, want duplicate", txn, amount, out, err)
	}
	if recordedOther && !errors.Is(err, crdt.ErrConflictingTransaction) {
		return fmt.Errorf("apply %s %d, recorded with another amount: %v %v, want conflicting", txn, amount, out, err)
	}
	if err != nil && mode == fePass {
		if wrote {
			return fmt.Errorf("apply %s refused (%v) but wrote", txn, err)
		}
		if !errors.Is(err, crdt.ErrConflictingTransaction) {
			return fmt.Errorf("apply %s %d: %v", txn, amount, err)
		}
	}
	return nil
}

// feActions is the faults menu: x (5) and y (3) applied by two writers,
// passing, lost, ambiguous or held, x with another amount, and every
// kind of merge.
func feActions() []feAction {
	return append([]feAction{
		{"W1 x=5", func(w *feWorld) error { return w.apply(w.w1, w.x, 5, fePass) }},
		{"W2 x=5 held", func(w *feWorld) error { return w.apply(w.w2, w.x, 5, feHold) }},
		{"W2 x=5 ambiguous", func(w *feWorld) error { return w.apply(w.w2, w.x, 5, feAmbig) }},
		{"W1 y=3 lost", func(w *feWorld) error { return w.apply(w.w1, w.y, 3, feLose) }},
		{"W2 y=3 held", func(w *feWorld) error { return w.apply(w.w2, w.y, 3, feHold) }},
		{"W1 y=3", func(w *feWorld) error { return w.apply(w.w1, w.y, 3, fePass) }},
		{"W1 x=7 (another amount)", func(w *feWorld) error { return w.apply(w.w1, w.x, 7, fePass) }},
		{"M merge fails after records", func(w *feWorld) error {
			w.f.mu.Lock()
			w.f.failRows = true
			w.f.mu.Unlock()
			_, err := w.m.Merge(context.Background(), acct)
			w.f.mu.Lock()
			w.f.failRows = false
			w.f.mu.Unlock()
			w.trace = append(w.trace, fmt.Sprintf("  -> %v", err))
			return nil
		}},
	}, feMergesAndTime(1, 2, 3, 4)...)
}

// feConflictActions is the conflicting-amounts menu: x applied with two
// amounts (3 and 5) by two writers, copies held and landing late, y, and
// merges that pass, race or crash.
func feConflictActions() []feAction {
	return append([]feAction{
		{"W1 x=5", func(w *feWorld) error { return w.apply(w.w1, w.x, 5, fePass) }},
		{"W2 x=3 held", func(w *feWorld) error { return w.apply(w.w2, w.x, 3, feHold) }},
		{"W2 x=5 held", func(w *feWorld) error { return w.apply(w.w2, w.x, 5, feHold) }},
		{"W1 x=3", func(w *feWorld) error { return w.apply(w.w1, w.x, 3, fePass) }},
		{"W2 x=3 ambiguous", func(w *feWorld) error { return w.apply(w.w2, w.x, 3, feAmbig) }},
		{"W1 y=3", func(w *feWorld) error { return w.apply(w.w1, w.y, 3, fePass) }},
	}, feMergesAndTime(2, 3)...)
}

// feMergesAndTime are the actions both menus share: a merge by M; M's
// merge with a whole merge by W1 nested before its k-th write, and M's
// merge crashing before it, for each k of writes; delivering held writes;
// two clock steps.
func feMergesAndTime(writes ...int) []feAction {
	acts := []feAction{{"M merge", func(w *feWorld) error {
		_, err := w.m.Merge(context.Background(), acct)
		w.trace = append(w.trace, fmt.Sprintf("  -> %v", err))
		if err != nil && !errors.Is(err, crdt.ErrUnavailable) {
			return fmt.Errorf("merge: %v", err)
		}
		return nil
	}}}
	for _, k := range writes {
		acts = append(acts, feAction{fmt.Sprintf("M merge, W1 merge nested before its write %d", k), func(w *feWorld) error { return w.nested(k) }})
	}
	for _, k := range writes {
		acts = append(acts, feAction{fmt.Sprintf("M merge crashes before its write %d", k), func(w *feWorld) error { return w.crash(k) }})
	}
	return append(acts,
		feAction{"deliver held", func(w *feWorld) error { return w.f.deliver() }},
		feAction{"clock +8s", func(w *feWorld) error { return w.advance(8 * time.Second) }},
		feAction{"clock +SettleGrace+MaxMerge+FutureSkew+1s", func(w *feWorld) error {
			return w.advance(w.o.SettleGrace + w.o.MaxMerge + w.o.FutureSkew + time.Second)
		}})
}

// nested runs a merge by M during which, before its k-th store write,
// a whole merge by W1 runs (racing merges).
func (w *feWorld) nested(k int) error {
	w.f.mu.Lock()
	w.f.writes, w.f.hookAt = 0, k
	w.f.hook = func() {
		w.f.mu.Lock()
		w.f.writes -= 1000 // the nested merge's writes do not count
		w.f.mu.Unlock()
		_, err := w.w1.Merge(context.Background(), acct)
		w.trace = append(w.trace, fmt.Sprintf("  nested W1 merge at write %d -> %v", k, err))
		w.f.mu.Lock()
		w.f.writes += 1000
		w.f.mu.Unlock()
	}
	w.f.mu.Unlock()
	_, err := w.m.Merge(context.Background(), acct)
	w.f.mu.Lock()
	w.f.hook = nil
	w.f.mu.Unlock()
	w.trace = append(w.trace, fmt.Sprintf("  -> %v", err))
	if err != nil && !errors.Is(err, crdt.ErrUnavailable) {
		return fmt.Errorf("merge: %v", err)
	}
	return nil
}

// crash runs a merge by M that stops (all later writes refused) before
// its k-th store write.
func (w *feWorld) crash(k int) error {
	w.f.mu.Lock()
	w.f.writes, w.f.crashAt = 0, k
	w.f.mu.Unlock()
	_, err := w.m.Merge(context.Background(), acct)
	w.f.mu.Lock()
	w.f.crashAt = 0
	w.f.mu.Unlock()
	w.trace = append(w.trace, fmt.Sprintf("  -> %v", err))
	return nil
}

// checkBalance: each transaction with a landed row counts once, with one
// of its landed amounts.
func (w *feWorld) checkBalance(when string) error {
	got, err := w.checker.Balance(context.Background(), acct)
	if err != nil {
		return fmt.Errorf("%s: balance: %v", when, err)
	}
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	sums := map[int64]bool{0: true}
	for _, amts := range w.f.landed {
		next := map[int64]bool{}
		for s := range sums {
			for a := range amts {
				next[s+a] = true
			}
		}
		sums = next
	}
	if !sums[got] {
		return fmt.Errorf("%s: balance %d, want one of %v (landed %v)", when, got, sums, w.f.landed)
	}
	return nil
}

func (w *feWorld) quiesce() error {
	ctx := context.Background()
	if err := w.f.deliver(); err != nil {
		return err
	}
	for k := range 4 {
		w.c.Add(w.o.SettleGrace + w.o.MaxMerge + w.o.FutureSkew + time.Second)
		if _, err := w.m.Merge(ctx, acct); err != nil {
			return fmt.Errorf("quiesce merge %d: %v", k, err)
		}
		w.f.commit()
		if err := w.checkBalance(fmt.Sprint("quiesce ", k)); err != nil {
			return err
		}
	}
	w.c.Add(w.o.GCGrace)
	if _, err := w.m.Merge(ctx, acct); err != nil {
		return err
	}
	before, err := w.checker.Balance(ctx, acct)
	if err != nil {
		return err
	}
	// counted amounts: y is 3 when landed; x is the rest
	var xAmt int64 = before
	if len(w.f.landed[balance.TxnRowID(w.y)]) > 0 {
		xAmt -= 3
	}
	w.f.commit()
	ack := w.f.firstAck
	if ack.IsZero() && len(w.f.landed) > 0 {
		return fmt.Errorf("quiesce: rows landed but no records were acknowledged")
	}
	for _, p := range []time.Duration{time.Hour, w.o.RetryWindow - time.Second} {
		if at := ack.Add(p); at.After(w.c.Now()) {
			w.c.Set(at)
		}
		for _, tx := range []*balance.Transactions{w.w1, w.w2} {
			for txn, amt := range map[crdt.TxnID]int64{w.x: xAmt, w.y: 3} {
				if len(w.f.landed[balance.TxnRowID(txn)]) == 0 {
					continue
				}
				out, err := tx.Apply(ctx, acct, txn, amt)
				if err != nil || out != balance.Duplicate {
					return fmt.Errorf("quiesced retry of %s %d at +%v: %v %v, want duplicate", txn, amt, p, out, err)
				}
			}
		}
		if v, err := w.checker.Balance(ctx, acct); err != nil || v != before {
			return fmt.Errorf("after retries: %d %v, want %d", v, err, before)
		}
	}
	return nil
}

// feDepth is the length of the enumerated sequences: 3 (8,000 and 2,744
// sequences), one more for each factor of ten in COUNTERKIT_CASES.
func feDepth() int {
	depth := 3
	for s := proptest.Scale(1); s >= 10; s /= 10 {
		depth++
	}
	return depth
}

func TestTransactionsEveryFaultSequence(t *testing.T) {
	testsize.SkipSequential(t)
	for _, menu := range []struct {
		name    string
		actions []feAction
	}{{"faults", feActions()}, {"conflicting amounts", feConflictActions()}} {
		t.Run(menu.name, func(t *testing.T) {
			runs, err := enumerateFaults(menu.actions, feDepth())
			t.Logf("%d sequences of depth %d over %d actions", runs, feDepth(), len(menu.actions))
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// enumerateFaults runs every sequence of depth actions, returning how many
// ran and the first failure, with its trace.
func enumerateFaults(actions []feAction, depth int) (int, error) {
	n, total := len(actions), 1
	for range depth {
		total *= n
	}
	for run := range total {
		seq := make([]int, depth)
		for i, r := 0, run; i < depth; i++ {
			seq[i], r = r%n, r/n
		}
		w := newFEWorld()
		err := func() error {
			for i, a := range seq {
				w.trace = append(w.trace, actions[a].name)
				if err := actions[a].do(w); err != nil {
					return fmt.Errorf("step %d (%s): %w", i, actions[a].name, err)
				}
				w.f.commit()
				if err := w.checkBalance(fmt.Sprint("after step ", i)); err != nil {
					return err
				}
			}
			return w.quiesce()
		}()
		if err != nil {
			return run + 1, fmt.Errorf("sequence %v: %v\ntrace:\n%s", seq, err, strings.Join(w.trace, "\n"))
		}
	}
	return total, nil
}
