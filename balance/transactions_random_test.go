package balance_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/balance"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

type rsHeld struct {
	sent time.Time
	txn  string // "" for a merge batch
}

type rsWorld struct {
	t        *testing.T
	rng      *rand.Rand
	c        *testClock
	mem      *memory.Partitions
	st       *rsStore
	w        [2]*balance.Transactions
	o        balance.TxnOptions
	landed   map[string]bool
	held     []rsHeld
	next     faulty.Fault // fault of the next row write
	mfail    int          // merge: fault the mfail-th write (0 none)
	mfault   faulty.Fault
	mwrites  int
	inMerge  int
	nested   func() // run once inside the outer merge at its nestAt-th call
	nestAt   int
	calls    int
	trace    []string
	amountOf func(string) int64
}

func newRsWorld(t *testing.T, seed int64, parts int) *rsWorld {
	w := &rsWorld{t: t, rng: rand.New(rand.NewSource(seed)), c: rsClock(), landed: map[string]bool{}}
	w.mem = memory.NewPartitions()
	w.st = &rsStore{Partitions: w.mem}
	w.amountOf = func(s string) int64 { n, _ := strconv.Atoi(strings.TrimPrefix(s, "t")); return int64(n + 1) }
	for i := range w.w {
		off := time.Duration(0)
		if i == 1 {
			off = 5 * time.Second
		}
		tx, err := balance.NewTransactions(w.st, balance.TxnOptions{Partitions: parts,
			Options: balance.Options{Clock: func() time.Time { return w.c.Now().Add(off) }}})
		if err != nil {
			t.Fatal(err)
		}
		w.w[i] = tx
	}
	w.o = w.w[0].Options()
	w.st.policy = func(call faulty.Call) faulty.Fault {
		if w.inMerge > 0 {
			if w.inMerge == 1 {
				w.mwrites++
				if w.mwrites == w.mfail {
					return w.mfault
				}
			}
			return faulty.Pass
		}
		if strings.Contains(call.Key, "#txn.") {
			return faulty.Pass
		}
		f := w.next
		w.next = faulty.Pass
		return f
	}
	w.st.hook = func() {
		if w.inMerge == 1 && w.nested != nil {
			w.calls++
			if w.calls == w.nestAt {
				f := w.nested
				w.nested = nil
				f()
			}
		}
	}
	return w
}

func (w *rsWorld) balanceErr() error {
	want := int64(0)
	for txn, ok := range w.landed {
		if ok {
			want += w.amountOf(txn)
		}
	}
	got, err := w.w[0].Balance(context.Background(), acct)
	if err != nil {
		return fmt.Errorf("balance: %v", err)
	}
	if got != want {
		return fmt.Errorf("balance %d, want %d", got, want)
	}
	return nil
}

func (w *rsWorld) apply(i int, txn string, f faulty.Fault) {
	w.next = f
	before := w.st.Held()
	out, err := w.w[i].Apply(context.Background(), acct, crdt.TxnID(txn), w.amountOf(txn))
	w.next = faulty.Pass
	if w.st.Held() > before {
		w.held = append(w.held, rsHeld{sent: w.c.Now(), txn: txn})
	}
	if (err == nil && out == balance.Applied) || f == faulty.LoseAck && err != nil && errors.Is(err, crdt.ErrAmbiguousWrite) {
		w.landed[txn] = true
	}
}

func (w *rsWorld) merge(i int, failAt int, fault faulty.Fault) {
	w.inMerge++
	if w.inMerge == 1 {
		w.mwrites, w.mfail, w.mfault, w.calls = 0, failAt, fault, 0
	}
	before := w.st.Held()
	_, _ = w.w[i].Merge(context.Background(), acct)
	if w.inMerge == 1 && w.st.Held() > before {
		for range w.st.Held() - before {
			w.held = append(w.held, rsHeld{sent: w.c.Now()})
		}
	}
	w.inMerge--
}

// deliverOrDrop lands held writes still inside the latency bound (chosen
// randomly) and drops those past it.
func (w *rsWorld) deliver(all bool) {
	bound := w.o.SafetyMargin - 2*w.o.FutureSkew
	for i := 0; i < len(w.held); {
		h := w.held[i]
		late := w.c.Now().Sub(h.sent) > bound
		if late {
			// never lands: drop it
			w.held = append(w.held[:i], w.held[i+1:]...)
			w.st.held = append(w.st.held[:i], w.st.held[i+1:]...)
			continue
		}
		if all || w.rng.Intn(2) == 0 {
			w.held = append(w.held[:i], w.held[i+1:]...)
			b := w.st.held[i]
			w.st.held = append(w.st.held[:i], w.st.held[i+1:]...)
			if err := w.mem.Apply(context.Background(), b); err != nil {
				w.t.Fatal(err)
			}
			if h.txn != "" {
				w.landed[h.txn] = true
			}
			continue
		}
		i++
	}
}

// rsStore is a memory store whose Apply calls get a fault (Pass, Refuse,
// Hold, LoseAck) from policy, and hook runs before every call.
type rsStore struct {
	*memory.Partitions
	policy func(faulty.Call) faulty.Fault
	hook   func()
	held   [][]store.Mutation
	log    func(string)
}

func (s *rsStore) Held() int { return len(s.held) }

func (s *rsStore) Snapshot(ctx context.Context, p string, limit int, level store.Read) ([]store.Row, error) {
	s.hook()
	return s.Partitions.Snapshot(ctx, p, limit, level)
}

func (s *rsStore) Scan(ctx context.Context, p string, from []byte, level store.Read, fn func(store.Row) bool) error {
	s.hook()
	return s.Partitions.Scan(ctx, p, from, level, fn)
}

func (s *rsStore) Apply(ctx context.Context, muts []store.Mutation) error {
	s.hook()
	key := ""
	if len(muts) > 0 {
		key = muts[0].Partition
	}
	f := s.policy(faulty.Call{Method: faulty.MethodApply, Key: key})
	if s.log != nil {
		s.log(fmt.Sprintf("apply %s (%d muts) fault %v", key, len(muts), f))
	}
	switch f {
	case faulty.Refuse:
		return crdt.ErrUnavailable
	case faulty.Hold:
		cp := make([]store.Mutation, len(muts))
		for i, m := range muts {
			m.Key = append([]byte(nil), m.Key...)
			m.Value = append([]byte(nil), m.Value...)
			cp[i] = m
		}
		s.held = append(s.held, cp)
		return crdt.ErrAmbiguousWrite
	case faulty.LoseAck:
		if err := s.Partitions.Apply(ctx, muts); err != nil {
			return err
		}
		return crdt.ErrAmbiguousWrite
	}
	return s.Partitions.Apply(ctx, muts)
}

func (w *rsWorld) step() {
	n := 6
	r := w.rng.Intn(100)
	txn := fmt.Sprintf("t%d", w.rng.Intn(n))
	switch {
	case r < 30:
		f := faulty.Pass
		switch w.rng.Intn(6) {
		case 0:
			f = faulty.Hold
		case 1:
			f = faulty.LoseAck
		}
		i := w.rng.Intn(2)
		w.trace = append(w.trace, fmt.Sprintf("A%d(%s,%v)", i, txn, f))
		w.apply(i, txn, f)
	case r < 55:
		i := w.rng.Intn(2)
		failAt, fault := 0, faulty.Pass
		if w.rng.Intn(4) == 0 {
			failAt = 1 + w.rng.Intn(4)
			fault = []faulty.Fault{faulty.Refuse, faulty.Hold, faulty.LoseAck}[w.rng.Intn(3)]
		}
		if w.rng.Intn(3) == 0 {
			j := w.rng.Intn(2)
			w.nestAt = 1 + w.rng.Intn(8)
			w.nested = func() { w.merge(j, 0, faulty.Pass) }
			w.trace = append(w.trace, fmt.Sprintf("M%d(fail %d %v, nested M%d at call %d)", i, failAt, fault, j, w.nestAt))
		} else {
			w.trace = append(w.trace, fmt.Sprintf("M%d(fail %d %v)", i, failAt, fault))
		}
		w.merge(i, failAt, fault)
		w.nested = nil
	case r < 70:
		w.trace = append(w.trace, "deliver")
		w.deliver(false)
	default:
		d := []time.Duration{time.Second, 3 * time.Second, 7 * time.Second, 20 * time.Second, w.o.SettleGrace + time.Second, w.o.GCGrace}[w.rng.Intn(6)]
		w.trace = append(w.trace, "t"+d.String())
		w.c.Add(d)
		w.deliver(false) // drop what is now past the bound
	}
}

func (w *rsWorld) rows() int {
	n := 0
	for _, p := range w.w[0].RowPartitions(acct) {
		rows, err := w.mem.Snapshot(context.Background(), p, balance.MaxRows, store.ReadComplete)
		if err != nil {
			w.t.Fatal(err)
		}
		if len(rows) > 0 {
			n += len(rows) - 1
		}
	}
	return n
}

// TestTransactionsRandomSchedules runs random schedules of Transactions
// over one or two row partitions: applies from writers at clock offsets 0
// and +FutureSkew that pass, are held (delivered within SafetyMargin −
// 2·FutureSkew) or lose their acknowledgement; merges whose k-th write is
// refused, held or loses its acknowledgement, some with a whole merge
// nested at one of their store calls; clock steps from 1 s to GCGrace.
// After every step the balance is the sum of the transactions that landed,
// each once; after six idle merges every row partition holds at most its
// settled sum row. 2,000 schedules (20,000 with COUNTERKIT_CASES) from
// seed 1; a failure prints its seed, and
//
//	COUNTERKIT_SEED=<seed> go test ./balance -run '^TestTransactionsRandomSchedules$' -v
//
// replays it with every step's rows.
func TestTransactionsRandomSchedules(t *testing.T) {
	first, runs := int64(1), int64(2000)
	if os.Getenv("COUNTERKIT_CASES") != "" {
		runs = 20_000
	}
	replay := os.Getenv("COUNTERKIT_SEED") != ""
	if replay {
		seed, err := strconv.ParseInt(os.Getenv("COUNTERKIT_SEED"), 10, 64)
		if err != nil {
			t.Fatalf("COUNTERKIT_SEED: %v", err)
		}
		first, runs = seed, 1
	}
	for seed := first; seed < first+runs; seed++ {
		parts := 1 + int(seed%2)
		w := newRsWorld(t, seed, parts)
		if replay {
			w.st.log = func(s string) { t.Log(s) }
		}
		fail := func(format string, args ...any) {
			t.Fatalf("seed %d (%d row partitions): %s\ntrace: %s\nreplay: COUNTERKIT_SEED=%d go test ./balance -run '^TestTransactionsRandomSchedules$' -v",
				seed, parts, fmt.Sprintf(format, args...), strings.Join(w.trace, " "), seed)
		}
		for range 25 {
			w.step()
			err := w.balanceErr()
			if replay {
				t.Logf("after %s: %v", w.trace[len(w.trace)-1], err)
				w.dump()
			}
			if err != nil {
				fail("%v", err)
			}
		}
		w.deliver(true)
		for k := range 6 {
			w.c.Add(w.o.GCGrace + time.Minute)
			w.merge(k%2, 0, faulty.Pass)
			if err := w.balanceErr(); err != nil {
				fail("idle merge %d: %v", k, err)
			}
		}
		if extra := w.rows(); extra > 0 {
			fail("%d rows left besides the settled sum rows after six idle merges", extra)
		}
	}
	t.Logf("%d schedules from seed %d: every balance exact, every partition compacted", runs, first)
}

func (w *rsWorld) dump() {
	for _, p := range w.w[0].RowPartitions(acct) {
		rows, _ := w.mem.Snapshot(context.Background(), p, balance.MaxRows, store.ReadComplete)
		w.t.Logf(" partition %s:", p)
		rsDump(w.t, rows)
	}
}
