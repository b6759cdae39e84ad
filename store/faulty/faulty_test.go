package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/counterkit/counterkit/adapters/memory"
	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/store/faulty"
)

var bg = context.Background()

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want one wrapping %v", err, target)
	}
}

func TestFaultNames(t *testing.T) {
	for f, want := range map[faulty.Fault]string{
		faulty.Pass: "pass", faulty.Refuse: "refuse", faulty.LoseAck: "lose-ack", faulty.Lose: "lose",
		faulty.Hold: "hold", faulty.Stale: "stale", faulty.StaleBy(1): "stale", faulty.StaleBy(3): "stale(3)",
		faulty.StaleBy(0): "pass", faulty.Unclassified: "unclassified", faulty.Fault(7): "Fault(7)",
	} {
		if got := f.String(); got != want {
			t.Errorf("%d: %q, want %q", uint8(f), got, want)
		}
	}
	if faulty.StaleBy(3).Kind() != faulty.Stale || faulty.StaleBy(3).Age() != 3 || faulty.StaleBy(100).Age() != faulty.MaxStaleness {
		t.Error("StaleBy does not round-trip its age")
	}
}

func TestSiblingsWriteFaults(t *testing.T) {
	inner := memory.NewSiblings()
	s := faulty.NewSiblings(inner, faulty.Options{Policy: faulty.Script(
		faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Hold, faulty.Hold, faulty.Stale)})
	wantIs(t, s.Put(bg, "k", "a", []byte("1"), nil), crdt.ErrUnavailable)
	if inner.Count("k") != 0 {
		t.Fatal("a refused write landed")
	}
	wantIs(t, s.Put(bg, "k", "a", []byte("2"), nil), crdt.ErrAmbiguousWrite)
	if inner.Count("k") != 1 {
		t.Fatal("a write whose acknowledgement was lost did not land")
	}
	wantIs(t, s.Put(bg, "k", "a", []byte("3"), nil), crdt.ErrAmbiguousWrite)
	if inner.Count("k") != 1 {
		t.Fatal("a lost write landed")
	}
	val := []byte("4")
	wantIs(t, s.Put(bg, "k", "a", val, nil), crdt.ErrAmbiguousWrite)
	val[0] = 'x' // the held write must not alias the caller's slice
	wantIs(t, s.Put(bg, "k", "a", []byte("5"), nil), crdt.ErrAmbiguousWrite)
	must(t, s.Put(bg, "k", "a", []byte("6"), nil)) // Stale on a write passes
	if inner.Count("k") != 2 || s.Held() != 2 {
		t.Fatalf("%d siblings, %d held; want 2, 2", inner.Count("k"), s.Held())
	}
	if hc := s.HeldCalls(); len(hc) != 2 || hc[0].N != 4 || hc[1].N != 5 || hc[0].Method != faulty.MethodPut {
		t.Fatalf("held calls %v", hc)
	}
	must(t, s.Deliver(1)) // out of order: "5" first
	wantIs(t, s.Deliver(1), crdt.ErrNotFound)
	must(t, s.Deliver(0))
	vals, _, err := inner.Fetch(bg, "k")
	must(t, err)
	got := map[string]bool{}
	for _, v := range vals {
		got[string(v)] = true
	}
	if len(got) != 4 || !got["2"] || !got["4"] || !got["5"] || !got["6"] {
		t.Fatalf("siblings %q, want 2, 4, 5, 6", vals)
	}
	c := s.Counts()
	want := map[faulty.Fault]int{faulty.Refuse: 1, faulty.LoseAck: 1, faulty.Lose: 1, faulty.Hold: 2, faulty.Pass: 1}
	if fmt.Sprint(c) != fmt.Sprint(want) {
		t.Fatalf("counts %v, want %v", c, want)
	}
	c[faulty.Pass] = 100
	if s.Counts()[faulty.Pass] != 1 {
		t.Fatal("Counts returned the wrapper's own map")
	}
}

// TestUnclassified: the write lands, and its error wraps ErrUnclassified and
// neither ErrAmbiguousWrite nor ErrUnavailable; a read fails the same way
// and is not served; so does an Apply.
func TestUnclassified(t *testing.T) {
	inner := memory.NewSiblings()
	s := faulty.NewSiblings(inner, faulty.Options{Policy: faulty.Script(faulty.Unclassified, faulty.Unclassified)})
	err := s.Put(bg, "k", "a", []byte("1"), nil)
	wantIs(t, err, faulty.ErrUnclassified)
	if errors.Is(err, crdt.ErrAmbiguousWrite) || errors.Is(err, crdt.ErrUnavailable) {
		t.Fatalf("%v: wraps a classified sentinel", err)
	}
	if inner.Count("k") != 1 {
		t.Fatal("an unclassified write did not land")
	}
	vs, _, err := s.Fetch(bg, "k")
	wantIs(t, err, faulty.ErrUnclassified)
	if vs != nil || errors.Is(err, crdt.ErrUnavailable) {
		t.Fatalf("an unclassified read served %q or was classified (%v)", vs, err)
	}
	if got := s.Counts()[faulty.Unclassified]; got != 2 {
		t.Fatalf("counted %d unclassified calls, want 2", got)
	}
	mp := memory.NewPartitions()
	p := faulty.NewPartitions(mp, faulty.Options{Policy: faulty.Script(faulty.Unclassified)})
	err = p.Apply(bg, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("r"), Value: []byte("v"), Timestamp: 1}})
	wantIs(t, err, faulty.ErrUnclassified)
	if rows, _ := mp.Snapshot(bg, "p", 10, store.ReadComplete); len(rows) != 1 {
		t.Fatalf("an unclassified Apply left %d rows, want it applied", len(rows))
	}
}

func TestDropHeld(t *testing.T) {
	inner := memory.NewSiblings()
	s := faulty.NewSiblings(inner, faulty.Options{Policy: faulty.Script(faulty.Hold, faulty.Hold)})
	_ = s.Put(bg, "k", "a", []byte("1"), nil)
	_ = s.Put(bg, "k", "a", []byte("2"), nil)
	if n := s.DropHeld(); n != 2 || s.Held() != 0 {
		t.Fatalf("dropped %d, %d still held", n, s.Held())
	}
	must(t, s.DeliverAll())
	if inner.Count("k") != 0 {
		t.Fatal("a dropped write landed")
	}
}

// A held write delivered after a cancelled context still lands: it was in
// flight.
func TestHoldOutlivesContext(t *testing.T) {
	inner := memory.NewPartitions()
	p := faulty.NewPartitions(inner, faulty.Options{Policy: faulty.Script(faulty.Hold)})
	ctx, cancel := context.WithCancel(bg)
	wantIs(t, p.Apply(ctx, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte("a"), Value: []byte("v"), Timestamp: 1}}), crdt.ErrAmbiguousWrite)
	cancel()
	wantIs(t, p.Apply(ctx, nil), context.Canceled)
	must(t, p.DeliverAll())
	rows, err := inner.Snapshot(bg, "p", 10, store.ReadComplete)
	must(t, err)
	if len(rows) != 1 {
		t.Fatalf("rows %v", rows)
	}
}

func TestSiblingsStale(t *testing.T) {
	inner := memory.NewSiblings()
	s := faulty.NewSiblings(inner, faulty.Options{})
	var toks []store.Token
	for i := range 4 {
		_, tok, err := s.Fetch(bg, "k")
		must(t, err)
		toks = append(toks, tok)
		must(t, s.Put(bg, "k", "a", []byte(strconv.Itoa(i)), tok))
	}
	// Recorded: absent, [0], [1], [2]; the fresh read is [3].
	for age, want := range []string{"[3]", "[2]", "[1]", "[0]", "[]", "[]"} {
		s.SetPolicy(faulty.Script(faulty.StaleBy(age)))
		vals, tok, err := s.Fetch(bg, "k")
		must(t, err)
		if got := fmt.Sprintf("%s", vals); got != want {
			t.Errorf("age %d: %s, want %s", age, got, want)
		}
		if age >= 1 && age <= 3 && string(tok) != string(toks[4-age]) {
			t.Errorf("age %d: token %x, want the old one %x", age, tok, toks[4-age])
		}
	}
	// A write based on a stale read leaves siblings.
	s.SetPolicy(faulty.Script(faulty.Stale))
	_, tok, err := s.Fetch(bg, "k")
	must(t, err)
	must(t, s.Put(bg, "k", "b", []byte("x"), tok))
	if inner.Count("k") != 2 {
		t.Fatalf("%d siblings after a write on a stale read, want 2", inner.Count("k"))
	}
	// Stale values are copies.
	s.SetPolicy(faulty.Script(faulty.StaleBy(2)))
	vals, _, _ := s.Fetch(bg, "k")
	vals[0][0] = 'z'
	s.SetPolicy(faulty.Script(faulty.StaleBy(2)))
	again, _, _ := s.Fetch(bg, "k")
	if string(again[0]) == "z" {
		t.Fatal("a stale read shares memory with the wrapper's history")
	}
}

func TestStaleWithinMaxLag(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{RecordWrites: true, MaxLag: 5 * time.Second, Clock: func() time.Time { return now }})
	for i := range 3 { // "0" newest until +10 s, "1" until +20 s, "2" newest
		_, tok, err := s.Fetch(bg, "k")
		must(t, err)
		must(t, s.Put(bg, "k", "a", []byte(strconv.Itoa(i)), tok))
		now = now.Add(10 * time.Second)
	}
	now = now.Add(-8 * time.Second) // "1" replaced 2 s ago, "0" 12 s ago
	passes := s.Counts()[faulty.Pass]
	for _, c := range []struct {
		after time.Duration
		age   int
		want  string
	}{
		{0, 1, "[1]"}, {0, 2, "[1]"}, {0, 3, "[1]"}, // "0" lags more than 5 s
		{3, 1, "[1]"}, // replaced exactly 5 s ago
		{4, 1, "[2]"}, // 6 s: served fresh
	} {
		now = now.Add(c.after * time.Second)
		s.SetPolicy(faulty.Script(faulty.StaleBy(c.age)))
		vals, _, err := s.Fetch(bg, "k")
		must(t, err)
		if got := fmt.Sprintf("%s", vals); got != c.want {
			t.Errorf("+%v, age %d: %s, want %s", c.after, c.age, got, c.want)
		}
	}
	if got := s.Counts()[faulty.Pass] - passes; got != 1 {
		t.Errorf("%d reads past MaxLag counted as passes, want 1", got)
	}
}

func TestStaleWithoutHistoryIsFresh(t *testing.T) {
	inner := memory.NewSiblings()
	must(t, inner.Put(bg, "k", "a", []byte("v"), nil))
	s := faulty.NewSiblings(inner, faulty.Options{Policy: faulty.Script(faulty.Stale)})
	vals, _, err := s.Fetch(bg, "k")
	must(t, err)
	if len(vals) != 1 || s.Counts()[faulty.Pass] != 1 {
		t.Fatalf("%q, counts %v", vals, s.Counts())
	}
}

func TestRecordWrites(t *testing.T) {
	s := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{RecordWrites: true})
	for _, v := range []string{"1", "2", "3"} {
		_ = s.Put(bg, "k", "a", []byte(v), nil)
	}
	s.SetPolicy(faulty.Script(faulty.StaleBy(2)))
	vals, _, err := s.Fetch(bg, "k")
	must(t, err)
	if len(vals) != 1 || string(vals[0]) != "1" {
		t.Fatalf("two writes old: %q, want [1]", vals)
	}
}

func TestReadFaultsRefuse(t *testing.T) {
	for _, f := range []faulty.Fault{faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Hold} {
		s := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{Policy: faulty.Script(f)})
		_, _, err := s.Fetch(bg, "k")
		wantIs(t, err, crdt.ErrUnavailable)
		p := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{Policy: faulty.Script(f, f)})
		_, err = p.Snapshot(bg, "p", 1, store.ReadAny)
		wantIs(t, err, crdt.ErrUnavailable)
		wantIs(t, p.Scan(bg, "p", nil, store.ReadAny, func(store.Row) bool { return true }), crdt.ErrUnavailable)
		if s.Held() != 0 || p.Held() != 0 || s.Counts()[faulty.Refuse] != 1 || p.Counts()[faulty.Refuse] != 2 {
			t.Fatalf("%v: held %d %d, counts %v %v", f, s.Held(), p.Held(), s.Counts(), p.Counts())
		}
	}
}

func TestHookBeforeAndAfter(t *testing.T) {
	inner := memory.NewSiblings()
	errBefore, errAfter := errors.New("crash"), errors.New("ack lost")
	var seen []string
	s := faulty.NewSiblings(inner, faulty.Options{Hook: func(_ context.Context, c faulty.Call, after bool) error {
		seen = append(seen, fmt.Sprintf("%s#%d:%v", c.Method, c.N, after))
		switch {
		case c.N == 1 && !after:
			return errBefore
		case c.N == 2 && after:
			return errAfter
		}
		return nil
	}})
	wantIs(t, s.Put(bg, "k", "a", []byte("1"), nil), errBefore)
	if inner.Count("k") != 0 {
		t.Fatal("a call failed by the before hook happened")
	}
	wantIs(t, s.Put(bg, "k", "a", []byte("2"), nil), errAfter)
	if inner.Count("k") != 1 {
		t.Fatal("a call failed by the after hook did not happen")
	}
	s.SetPolicy(faulty.Script(faulty.Refuse))
	_ = s.Put(bg, "k", "a", []byte("3"), nil)
	_, _, _ = s.Fetch(bg, "k")
	want := "[Put#1:false Put#2:false Put#2:true Put#3:false Fetch#4:false Fetch#4:true]"
	if got := fmt.Sprint(seen); got != want {
		t.Fatalf("hook calls %s, want %s", got, want)
	}
	s.SetHook(nil)
	must(t, s.Put(bg, "k", "a", []byte("4"), nil))
}

func TestSeededReplays(t *testing.T) {
	run := func(seed int64) string {
		inner := memory.NewPartitions()
		p := faulty.NewPartitions(inner, faulty.Options{Policy: faulty.Seeded(seed, faulty.Rates{
			Refuse: 0.1, LoseAck: 0.1, Lose: 0.1, Hold: 0.1, Stale: 0.3, MaxStaleness: 3})})
		var out []string
		for i := range 200 {
			err := p.Apply(bg, []store.Mutation{{Partition: "p", Op: store.OpPut, Key: []byte{byte(i % 7)}, Value: []byte(strconv.Itoa(i)), Timestamp: int64(i + 1)}})
			rows, _ := p.Snapshot(bg, "p", 100, store.ReadAny)
			out = append(out, fmt.Sprint(err != nil, len(rows)))
		}
		_ = p.DeliverAll()
		return fmt.Sprint(out, p.Counts())
	}
	a, b, c := run(7), run(7), run(8)
	if a != b {
		t.Fatal("the same seed gave different faults")
	}
	if a == c {
		t.Fatal("different seeds gave the same faults")
	}
	t.Log(a[len(a)-80:])
}

func TestSeededRates(t *testing.T) {
	pol := faulty.Seeded(1, faulty.Rates{Refuse: 0.2, LoseAck: 0.2, Lose: 0.2, Hold: 0.2, Stale: 0.5, MaxStaleness: 4})
	counts := map[faulty.Fault]int{}
	ages := map[int]int{}
	for i := range 10000 {
		counts[pol(faulty.Call{Method: faulty.MethodPut, N: uint64(i)})]++
		f := pol(faulty.Call{Method: faulty.MethodFetch, N: uint64(i)})
		counts[f.Kind()+10]++
		ages[f.Age()]++
	}
	for _, f := range []faulty.Fault{faulty.Pass, faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Hold} {
		if n := counts[f]; n < 1800 || n > 2200 {
			t.Errorf("%v on writes: %d of 10000, want about 2000", f, n)
		}
	}
	if counts[faulty.Stale+10] < 4800 || counts[faulty.Stale+10] > 5200 || counts[faulty.Refuse+10] != 0 {
		t.Errorf("reads: %v", counts)
	}
	for age := 1; age <= 4; age++ {
		if ages[age] < 1100 || ages[age] > 1400 {
			t.Errorf("age %d: %d", age, ages[age])
		}
	}
	if ages[5] != 0 {
		t.Error("an age over MaxStaleness")
	}
}

func TestOnly(t *testing.T) {
	p := faulty.Only(faulty.Script(faulty.Refuse, faulty.Refuse), faulty.MethodPut)
	if p(faulty.Call{Method: faulty.MethodFetch}) != faulty.Pass || p(faulty.Call{Method: faulty.MethodPut}) != faulty.Refuse {
		t.Fatal("Only does not filter by method")
	}
}

func TestUnknownFaultIsRefused(t *testing.T) {
	inner := memory.NewSiblings()
	s := faulty.NewSiblings(inner, faulty.Options{Policy: func(faulty.Call) faulty.Fault { return 7 }})
	wantIs(t, s.Put(bg, "k", "a", []byte("1"), nil), crdt.ErrInvalidConfig)
	if inner.Count("k") != 0 {
		t.Fatal("a call with an unknown fault happened")
	}
}

type noDeleter struct{ store.Siblings }

func TestDeleteCapability(t *testing.T) {
	inner := memory.NewSiblings()
	with := faulty.NewSiblings(inner, faulty.Options{})
	if _, ok := with.Store().(store.SiblingDeleter); !ok {
		t.Fatal("Store() hides the Delete of a store that has one")
	}
	_, tok, _ := with.Fetch(bg, "k")
	must(t, with.Put(bg, "k", "a", []byte("1"), tok))
	_, tok, _ = with.Fetch(bg, "k")
	must(t, with.Delete(bg, "k", tok))
	if inner.Count("k") != 0 {
		t.Fatal("Delete did not delete")
	}
	without := faulty.NewSiblings(noDeleter{inner}, faulty.Options{})
	if _, ok := without.Store().(store.SiblingDeleter); ok {
		t.Fatal("Store() offers Delete over a store without one")
	}
	wantIs(t, without.Delete(bg, "k", nil), crdt.ErrMisconfiguredStore)
}

// keyLister is ledger.KeyLister.
type keyLister interface {
	Keys(ctx context.Context, prefix, after string, limit int) ([]string, error)
}

// TestKeysCapability: Store() lists keys exactly when the wrapped store
// does, with or without Delete, and keeps Delete as before.
func TestKeysCapability(t *testing.T) {
	inner := memory.NewSiblings()
	_, tok, _ := inner.Fetch(bg, "k")
	must(t, inner.Put(bg, "k", "a", []byte("1"), tok))
	type listOnly struct {
		store.Siblings
		keyLister
	}
	type deleteOnly struct {
		store.Siblings
		store.SiblingDeleter
	}
	for _, tc := range []struct {
		name           string
		inner          store.Siblings
		deletes, lists bool
	}{
		{"both", inner, true, true},
		{"delete", deleteOnly{inner, inner}, true, false},
		{"keys", listOnly{inner, inner}, false, true},
		{"neither", noDeleter{inner}, false, false},
	} {
		st := faulty.NewSiblings(tc.inner, faulty.Options{}).Store()
		_, deletes := st.(store.SiblingDeleter)
		l, lists := st.(keyLister)
		if deletes != tc.deletes || lists != tc.lists {
			t.Errorf("%s: Store() deletes %v and lists keys %v, want %v and %v", tc.name, deletes, lists, tc.deletes, tc.lists)
		}
		if _, ok := st.(store.Expiring); !ok {
			t.Errorf("%s: Store() hides the TTL", tc.name)
		}
		if lists {
			if keys, err := l.Keys(bg, "", "", 10); err != nil || !slices.Equal(keys, []string{"k"}) {
				t.Errorf("%s: Keys = %v, %v; want [k]", tc.name, keys, err)
			}
		}
	}
}

func put(part, key string, ts int64) store.Mutation {
	return store.Mutation{Partition: part, Op: store.OpPut, Key: []byte(key), Value: []byte(key + strconv.FormatInt(ts, 10)), Timestamp: ts}
}

func keys(rows []store.Row) string {
	s := ""
	for _, r := range rows {
		s += string(r.Key)
	}
	return s
}

func TestPartitionsFaultsAndStale(t *testing.T) {
	inner := memory.NewPartitions()
	p := faulty.NewPartitions(inner, faulty.Options{Policy: faulty.Script(faulty.Refuse, faulty.LoseAck, faulty.Lose, faulty.Hold)})
	wantIs(t, p.Apply(bg, []store.Mutation{put("p", "a", 1)}), crdt.ErrUnavailable)
	wantIs(t, p.Apply(bg, []store.Mutation{put("p", "b", 1), put("q", "b", 1)}), crdt.ErrAmbiguousWrite)
	wantIs(t, p.Apply(bg, []store.Mutation{put("p", "c", 1)}), crdt.ErrAmbiguousWrite)
	wantIs(t, p.Apply(bg, []store.Mutation{{Partition: "p", Op: store.OpDeletePartition, Timestamp: 5}}), crdt.ErrAmbiguousWrite)
	snap := func(level store.Read) string {
		rows, err := p.Snapshot(bg, "p", 10, level)
		must(t, err)
		return keys(rows)
	}
	if got := snap(store.ReadAny); got != "b" {
		t.Fatalf("rows %q, want b", got)
	}
	must(t, p.Apply(bg, []store.Mutation{put("p", "d", 2)}))
	if got := snap(store.ReadAny); got != "bd" {
		t.Fatalf("rows %q, want bd", got)
	}
	p.SetPolicy(faulty.Script(faulty.Stale, faulty.Stale, faulty.Stale))
	if got := snap(store.ReadAny); got != "b" {
		t.Fatalf("stale snapshot %q, want b", got)
	}
	if got := snap(store.ReadComplete); got != "bd" {
		t.Fatalf("a complete read was stale: %q", got)
	}
	var scanned []store.Row
	must(t, p.Scan(bg, "p", nil, store.ReadAny, func(r store.Row) bool { scanned = append(scanned, r); return true }))
	if keys(scanned) != "b" {
		t.Fatalf("stale scan %q, want b", keys(scanned))
	}
	// The held partition delete lands late, under its own timestamp: it
	// removes b and d (timestamps 1 and 2 < 5) but not a later write.
	must(t, p.Apply(bg, []store.Mutation{put("p", "e", 9)}))
	must(t, p.DeliverAll())
	if got := snap(store.ReadComplete); got != "e" {
		t.Fatalf("after the late delete: %q, want e", got)
	}
	rows, err := inner.Snapshot(bg, "q", 10, store.ReadComplete)
	must(t, err)
	if keys(rows) != "b" {
		t.Fatal("a batch whose acknowledgement was lost was not applied to every partition")
	}
}

func TestStaleSnapshotHonoursLimit(t *testing.T) {
	p := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{})
	must(t, p.Apply(bg, []store.Mutation{put("p", "a", 1), put("p", "b", 1), put("p", "c", 1)}))
	_, _ = p.Snapshot(bg, "p", 10, store.ReadAny)
	must(t, p.Apply(bg, []store.Mutation{{Partition: "p", Op: store.OpDeletePartition, Timestamp: 2}}))
	p.SetPolicy(faulty.Script(faulty.Stale))
	_, err := p.Snapshot(bg, "p", 2, store.ReadAny)
	wantIs(t, err, crdt.ErrTooLarge)
}

func TestScanPages(t *testing.T) {
	inner := memory.NewPartitions()
	var muts []store.Mutation
	for i := range 10 {
		muts = append(muts, put("p", string(rune('a'+i)), 1))
	}
	must(t, inner.Apply(bg, muts))
	var log []string
	p := faulty.NewPartitions(inner, faulty.Options{ScanPage: 3, Hook: func(_ context.Context, c faulty.Call, after bool) error {
		if !after {
			log = append(log, c.Method)
			if c.Method == faulty.MethodScanPage && c.N == 2 {
				// Between pages: delete rows the scan has not reached.
				return inner.Apply(bg, []store.Mutation{{Partition: "p", Op: store.OpDeleteRange, Key: []byte("g"), End: []byte("i"), Timestamp: 2}})
			}
		}
		return nil
	}})
	got := ""
	err := p.Scan(bg, "p", []byte("b"), store.ReadAny, func(r store.Row) bool { got += string(r.Key); return true })
	must(t, err)
	if got != "bcdefij" || fmt.Sprint(log) != "[Scan ScanPage ScanPage]" {
		t.Fatalf("scanned %q with calls %v", got, log)
	}
	// A refused page fails the scan after the rows already passed.
	p.SetHook(nil)
	p.SetPolicy(faulty.Script(faulty.Pass, faulty.Refuse))
	got = ""
	err = p.Scan(bg, "p", nil, store.ReadAny, func(r store.Row) bool { got += string(r.Key); return true })
	wantIs(t, err, crdt.ErrUnavailable)
	if got != "abc" {
		t.Fatalf("rows before the refused page: %q", got)
	}
	// Stopping early reads no further page.
	p.SetPolicy(nil)
	n := 0
	before := p.Counts()[faulty.Pass]
	must(t, p.Scan(bg, "p", nil, store.ReadAny, func(store.Row) bool { n++; return n < 2 }))
	if calls := p.Counts()[faulty.Pass] - before; calls != 1 {
		t.Fatalf("a scan stopped on its first page made %d calls", calls)
	}
}

func TestConcurrentUse(t *testing.T) {
	s := faulty.NewSiblings(memory.NewSiblings(), faulty.Options{
		Policy: faulty.Seeded(3, faulty.Rates{Refuse: 0.1, LoseAck: 0.1, Lose: 0.1, Hold: 0.1, Stale: 0.3, MaxStaleness: 4}),
		Hook:   func(context.Context, faulty.Call, bool) error { return nil },
	})
	p := faulty.NewPartitions(memory.NewPartitions(), faulty.Options{
		Policy:   faulty.Seeded(3, faulty.Rates{Hold: 0.2, Stale: 0.3, MaxStaleness: 4}),
		ScanPage: 2, RecordWrites: true,
	})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				_, tok, _ := s.Fetch(bg, "k")
				_ = s.Put(bg, "k", crdt.ActorID("a"+strconv.Itoa(g)), []byte{byte(i) + 1}, tok)
				_ = p.Apply(bg, []store.Mutation{put("p", strconv.Itoa(i%5), int64(i+1))})
				_ = p.Scan(bg, "p", nil, store.ReadAny, func(store.Row) bool { return true })
				if i%10 == 0 {
					_ = s.DeliverAll()
					_ = p.Deliver(0)
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range s.Counts() {
		total += n
	}
	if total != 800 {
		t.Fatalf("counted %d calls, want 800", total)
	}
}

// Under seeded faults, exactly the writes the faults say landed have
// landed: those passed or whose acknowledgement was lost, and the held
// ones once delivered; refused and lost ones have not. Last write wins by
// timestamp, so a reference store given only those writes, in order, must
// end up with the same rows.
func TestSeededFaultsLandAsDocumented(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		inner, ref := memory.NewPartitions(), memory.NewPartitions()
		var landed []faulty.Call
		p := faulty.NewPartitions(inner, faulty.Options{
			Policy: faulty.Seeded(seed, faulty.Rates{Refuse: 0.15, LoseAck: 0.15, Lose: 0.15, Hold: 0.15}),
			Hook: func(_ context.Context, c faulty.Call, after bool) error {
				if after && c.Method == faulty.MethodApply {
					landed = append(landed, c)
				}
				return nil
			},
		})
		batches := map[uint64][]store.Mutation{}
		dropped := 0
		for i := range 100 {
			b := []store.Mutation{put("p", strconv.Itoa(i%9), int64(1+i*7%50))}
			if i%5 == 0 {
				b = append(b, store.Mutation{Partition: "p", Op: store.OpDeleteRange, Key: []byte("3"), End: []byte("6"), Timestamp: int64(i%40 + 1)})
			}
			batches[uint64(i+1)] = b
			err := p.Apply(bg, b)
			if err != nil && !errors.Is(err, crdt.ErrAmbiguousWrite) && !errors.Is(err, crdt.ErrUnavailable) {
				t.Fatal(err)
			}
			if i%17 == 16 {
				if p.Held() > 1 {
					must(t, p.Deliver(0))
					dropped += p.DropHeld()
				}
			}
		}
		must(t, p.DeliverAll())
		for _, c := range landed {
			must(t, ref.Apply(bg, batches[c.N]))
		}
		got, err := inner.Snapshot(bg, "p", 100, store.ReadComplete)
		must(t, err)
		want, err := ref.Snapshot(bg, "p", 100, store.ReadComplete)
		must(t, err)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d: store %v, landed writes %v", seed, got, want)
		}
		c := p.Counts()
		if c[faulty.Pass]+c[faulty.LoseAck]+c[faulty.Hold]+c[faulty.Refuse]+c[faulty.Lose] != 100 || c[faulty.Hold] == 0 {
			t.Fatalf("seed %d: counts %v", seed, c)
		}
		if want := c[faulty.Pass] + c[faulty.LoseAck] + c[faulty.Hold] - dropped; len(landed) != want || dropped == 0 {
			t.Fatalf("seed %d: %d writes landed, want %d (counts %v, %d held writes dropped)", seed, len(landed), want, c, dropped)
		}
	}
}

// A policy can tell writes apart by their batch and reads by their level.
func TestCallCarriesBatchAndLevel(t *testing.T) {
	inner := memory.NewPartitions()
	var seen []string
	p := faulty.NewPartitions(inner, faulty.Options{Policy: func(c faulty.Call) faulty.Fault {
		seen = append(seen, fmt.Sprintf("%s:%d:%d", c.Method, len(c.Batch), c.Level))
		if c.Method == faulty.MethodApply && c.Batch[0].Op == store.OpDeletePartition {
			return faulty.Hold
		}
		return faulty.Pass
	}})
	must(t, p.Apply(bg, []store.Mutation{put("p", "a", 1), put("p", "b", 1)}))
	b := []store.Mutation{{Partition: "p", Op: store.OpDeletePartition, Timestamp: 2}}
	wantIs(t, p.Apply(bg, b), crdt.ErrAmbiguousWrite)
	b[0].Timestamp = 1 // the held batch is a copy
	if hc := p.HeldCalls(); len(hc) != 1 || hc[0].Batch[0].Timestamp != 2 {
		t.Fatalf("held calls %v", hc)
	}
	_, _ = p.Snapshot(bg, "p", 10, store.ReadComplete)
	_ = p.Scan(bg, "p", nil, store.ReadAny, func(store.Row) bool { return true })
	if got := fmt.Sprint(seen); got != "[Apply:2:0 Apply:1:0 Snapshot:0:1 Scan:0:0]" {
		t.Fatalf("policy saw %s", got)
	}
	must(t, p.DeliverAll())
	rows, _ := inner.Snapshot(bg, "p", 10, store.ReadComplete)
	if len(rows) != 0 {
		t.Fatalf("the held delete, delivered, left %v", rows)
	}
}
