package tpncounter

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/internal/wire"
	"github.com/counterkit/counterkit/proptest"
)

// TestEncodingCacheAndMergeBinary runs random schedules of Apply, Compact,
// Retract, Retire, Merge and MergeBinary over three replicas and checks,
// after every step, that MarshalBinary with cached entry encodings (and
// cached runs of retired entries, see segments) equals an encoding from
// scratch, and that MergeBinary gives exactly what decoding
// and Merge give (same state, same error), leaving the receiver unchanged
// on error, for valid and for damaged inputs.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./tpncounter -run TestEncodingCacheAndMergeBinary
func TestEncodingCacheAndMergeBinary(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	opts := Options{HistoryLength: 3, FoldedLength: 2}
	schedules := proptest.Scale(60)
	var merged, skippedAll, damaged, lenient int
	for s := 0; s < schedules; s++ {
		reps := make([]*Counter, 3)
		for i := range reps {
			reps[i] = newT(t, opts)
		}
		for step := 0; step < 80; step++ {
			i := r.IntN(len(reps))
			c, actor := reps[i], crdt.ActorID(fmt.Sprintf("r%d", i))
			txn := crdt.TxnID(fmt.Sprintf("t%d", r.IntN(40)))
			if r.IntN(2) == 0 { // a UUID id, written as 16 bytes (format version 3)
				txn = crdt.TxnID(fmt.Sprintf("%08x-0000-4000-8000-%012x", r.IntN(40), 7))
			}
			amount := int64(1 + r.IntN(3))
			if r.IntN(3) == 0 {
				amount = -amount
			}
			what := ""
			switch k := r.IntN(10); {
			case k < 5:
				what = fmt.Sprintf("%s applies %s %d", actor, txn, amount)
				_, _ = c.Apply(actor, txn, amount) // conflicts are refused, state unchanged
			case k < 6:
				what = fmt.Sprintf("%s compacts", actor)
				_, _ = c.Compact(actor)
			case k < 7:
				what = fmt.Sprintf("%s retracts %s", actor, txn)
				_, _ = c.Retract(actor, txn)
			case k < 8: // its owner's next Apply makes it live again
				j := r.IntN(len(reps))
				what = fmt.Sprintf("r%d retires r%d", i, j)
				_, _ = c.Retire(crdt.ActorID(fmt.Sprintf("r%d", j)))
			default:
				j := r.IntN(len(reps))
				what = fmt.Sprintf("r%d merges r%d", i, j)
				data := must(reps[j].MarshalBinary())
				if r.IntN(4) == 0 {
					data = bytes.Clone(data)
					data[r.IntN(len(data))] ^= byte(1 << r.IntN(8))
					damaged++
				}
				want := c.Clone()
				o := newT(t, opts)
				wantErr := o.UnmarshalBinary(data)
				if wantErr == nil {
					wantErr = want.Merge(o)
				}
				before := must(c.MarshalBinary())
				if wantErr == nil && !want.Equal(c) {
					merged++
				} else if wantErr == nil {
					skippedAll++
				}
				err := c.MergeBinary(data)
				if (err == nil) != (wantErr == nil) {
					// The one documented difference: checks that involve
					// only entries equal to c's own are not repeated.
					if err == nil && wantErr != nil {
						lenient++
						if !want.Equal(c) {
							t.Fatalf("and changed the state")
						}
						continue
					}
					t.Fatalf("seed %d schedule %d step %d (%s): MergeBinary error %v, decode and Merge %v", seed, s, step, what, err, wantErr)
				}
				if err != nil {
					if got := must(c.MarshalBinary()); !bytes.Equal(got, before) {
						t.Fatalf("seed %d schedule %d step %d (%s): MergeBinary failed (%v) and changed the state", seed, s, step, what, err)
					}
					continue
				}
				if !want.Equal(c) || want.Value() != c.Value() {
					t.Fatalf("seed %d schedule %d step %d (%s): MergeBinary gave another state (value %d) than decode and Merge (value %d)", seed, s, step, what, c.Value(), want.Value())
				}
			}
			for k, rep := range reps {
				got := must(rep.MarshalBinary())
				fresh := rep.Clone()
				dropEncodings(fresh)
				if want := must(fresh.MarshalBinary()); !bytes.Equal(got, want) {
					t.Fatalf("seed %d schedule %d step %d (%s): r%d's cached encoding differs from a fresh one", seed, s, step, what, k)
				}
			}
		}
	}
	t.Logf("%d schedules; merges that changed the state %d, that changed nothing %d, on damaged input %d (accepted there, unchanged, where decoding refuses: %d)", schedules, merged, skippedAll, damaged, lenient)
}

func newT(t *testing.T, o Options) *Counter {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestMergeBinaryShifts runs random schedules of writers that share one
// account as the ledger's do: a writer merges the stored state into its
// own Counter with MergeBinary, writes (credits mostly; debits,
// duplicates, a transaction another writer holds, Retract, Compact,
// Retire now and then) and stores its state. Between two turns of a
// writer the others wrote, so the entries it fetches are its cached ones
// with older transactions gone and newer ones added: MergeBinary changes
// them in place (see shift). After every MergeBinary the Counter must be
// what decoding and Merge give (checkShiftMerge), and the test requires
// that many merges took that path.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./tpncounter -run TestMergeBinaryShifts
func TestMergeBinaryShifts(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	merges, shifted, err := runShiftSchedules(seed, proptest.Scale(40))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d merges, %d of them changed entries in place", merges, shifted)
	if shifted < merges/4 {
		t.Fatalf("only %d of %d merges changed entries in place", shifted, merges)
	}
}

// runShiftSchedules runs the schedules of TestMergeBinaryShifts and
// returns the number of merges, of merges that changed entries in place,
// and the first difference found.
func runShiftSchedules(seed int64, schedules int) (merges, shifted int, err error) {
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	for s := 0; s < schedules; s++ {
		opts := Options{HistoryLength: 1 + r.IntN(4), FoldedLength: 1 + r.IntN(3)}
		writers := make([]*Counter, 2+r.IntN(4))
		for i := range writers {
			writers[i], _ = New(opts)
		}
		var stored []byte
		var ids []crdt.TxnID // every transaction written so far
		for step := 0; step < 120; step++ {
			w := r.IntN(len(writers))
			c, actor := writers[w], crdt.ActorID(fmt.Sprintf("w%d", w))
			if stored != nil {
				merges++
				if err := checkShiftMerge(c, stored); err != nil {
					return merges, shifted, fmt.Errorf("seed %d schedule %d step %d (w%d merges): %w", seed, s, step, w, err)
				}
				if c.shifted() {
					shifted++
				}
			}
			for k := 1 + r.IntN(2); k > 0; k-- {
				txn := crdt.TxnID(fmt.Sprintf("t%d", len(ids)))
				amount := int64(1 + r.IntN(5))
				switch x := r.IntN(20); {
				case x < 2 && len(ids) > 0: // a transaction another writer may hold
					txn = ids[r.IntN(len(ids))]
				case x < 4:
					amount = -amount
				case x == 4:
					_, _ = c.Compact(actor)
					continue
				case x == 5 && len(ids) > 0:
					_, _ = c.Retract(actor, ids[r.IntN(len(ids))])
					continue
				case x == 6:
					_, _ = c.Retire(crdt.ActorID(fmt.Sprintf("w%d", r.IntN(len(writers)))))
					continue
				}
				if _, err := c.Apply(actor, txn, amount); err == nil && txn == crdt.TxnID(fmt.Sprintf("t%d", len(ids))) {
					ids = append(ids, txn)
				}
			}
			stored = must(c.MarshalBinary())
		}
	}
	return merges, shifted, nil
}

// shifted reports whether c's last MergeBinary changed entries in place.
func (c *Counter) shifted() bool {
	return c.merge != nil && len(c.merge.ents[0])+len(c.merge.ents[1]) > 0
}

// checkShiftMerge merges data into c with MergeBinary and checks the
// result against decoding data and merging it into a copy of c: the same
// error, word for word (c unchanged on one), state, value, horizon,
// conflicts and encoding; c's cached encoding equal to one from scratch;
// and c's index whole (checkIndex).
func checkShiftMerge(c *Counter, data []byte) error {
	want := c.Clone()
	o, _ := New(c.Options())
	wantErr := o.UnmarshalBinary(data)
	if wantErr == nil {
		wantErr = want.Merge(o)
	}
	before := must(c.MarshalBinary())
	err := c.MergeBinary(data)
	switch {
	case (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error():
		return fmt.Errorf("MergeBinary error %v, decode and Merge %v", err, wantErr)
	case err != nil:
		if !bytes.Equal(must(c.MarshalBinary()), before) {
			return fmt.Errorf("MergeBinary failed (%v) and changed the state", err)
		}
		return nil
	}
	if !want.Equal(c) || want.Value() != c.Value() || !want.Horizon().Equal(c.Horizon()) {
		return fmt.Errorf("MergeBinary gave value %d, horizon %v; decode and Merge value %d, horizon %v", c.Value(), c.Horizon(), want.Value(), want.Horizon())
	}
	if got, wc := fmt.Sprint(c.Conflicts()), fmt.Sprint(want.Conflicts()); got != wc {
		return fmt.Errorf("MergeBinary gave conflicts %s; decode and Merge %s", got, wc)
	}
	got := must(c.MarshalBinary())
	fresh := c.Clone()
	dropEncodings(fresh)
	if !bytes.Equal(got, must(fresh.MarshalBinary())) || !bytes.Equal(got, must(want.MarshalBinary())) {
		return fmt.Errorf("MergeBinary's cached encoding differs from a fresh one or from decode and Merge's")
	}
	for _, g := range [2]*GCounter{&c.p, &c.n} {
		if err := g.checkIndex(); err != nil {
			return fmt.Errorf("index after MergeBinary: %w", err)
		}
	}
	return nil
}

// TestMergeBinaryShiftEdges merges hand-made states into a Counter whose
// writer w1 holds a, b, c and w2 holds x: entries that are shifts of the
// receiver's (changed in place), and entries that look like one but are
// not (an id not valid, an id twice, an id another writer holds, a value that overflows
// once merged), which must give what decoding and Merge give.
func TestMergeBinaryShiftEdges(t *testing.T) {
	type ent struct {
		actor        string
		seq          uint64
		total        int64
		hist, folded []Txn
	}
	encode := func(p ...ent) []byte {
		e := wire.NewEncoder(crdt.TagTPNCounter, 2)
		e.ArrayLen(2)
		e.ArrayLen(len(p))
		for _, en := range p {
			e.ArrayLen(6)
			e.String(en.actor)
			e.Uint(en.seq)
			e.Int(en.total)
			e.Int(0)
			for _, list := range [2][]Txn{en.hist, en.folded} {
				e.ArrayLen(len(list))
				for _, x := range list {
					e.ArrayLen(2)
					e.String(string(x.ID))
					e.Int(x.Amount)
				}
			}
		}
		e.ArrayLen(0)
		return must(e.Bytes())
	}
	a, b, c, d, x, y := Txn{"a", 1}, Txn{"b", 2}, Txn{"c", 3}, Txn{"d", 4}, Txn{"x", 5}, Txn{"y", 6}
	w2 := ent{"w2", 1, 0, []Txn{x}, nil}
	start := encode(ent{"w1", 3, 0, []Txn{a, b, c}, nil}, w2)
	for _, tc := range []struct {
		name    string
		data    []byte
		inPlace bool
	}{
		{"one more, the oldest folded", encode(ent{"w1", 4, 1, []Txn{b, c, d}, []Txn{a}}, w2), true},
		{"the oldest forgotten, two more", encode(ent{"w1", 5, 1, []Txn{c, d, y}, nil}, w2), true},
		{"all new, folded", encode(ent{"w1", 9, 10, []Txn{y}, []Txn{d}}, w2), true},
		{"both writers", encode(ent{"w1", 4, 0, []Txn{a, b, c, d}, nil}, ent{"w2", 2, 5, []Txn{y}, []Txn{x}}), true},
		{"a UUID id as text (version 2)", encode(ent{"w1", 4, 0, []Txn{b, c, {"01234567-0000-4000-8000-000000000007", 4}}, nil}, w2), false},
		{"a new id not valid", encode(ent{"w1", 4, 0, []Txn{b, c, {"d\x01", 4}}, nil}, w2), false},
		{"a new id not valid, not a shift", encode(ent{"w1", 4, 0, []Txn{b, c, {"d\x01", 4}}, nil}, ent{"w2", 2, 0, []Txn{y}, nil}), false},
		{"an id twice", encode(ent{"w1", 4, 0, []Txn{b, c, b}, nil}, w2), false},
		{"an id w2 holds", encode(ent{"w1", 4, 0, []Txn{b, c, x}, nil}, w2), false},
		{"one id added by both", encode(ent{"w1", 4, 0, []Txn{a, b, c, y}, nil}, ent{"w2", 2, 0, []Txn{x, y}, nil}), false},
		{"a kept id with another amount", encode(ent{"w1", 4, 0, []Txn{a, {"b", 7}, c}, nil}, w2), false},
		{"past int64 once merged", encode(ent{"w1", 4, math.MaxInt64 - 10, []Txn{b, c, d}, []Txn{a}}, w2), true},
		{"below the folded sum", encode(ent{"w1", 4, 0, []Txn{b, c, d}, []Txn{a}}, w2), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newT(t, Options{})
			require.NoError(t, c.UnmarshalBinary(start))
			must(c.MarshalBinary())
			require.NoError(t, checkShiftMerge(c, tc.data))
			require.Equal(t, tc.inPlace, c.shifted(), "changed in place")
		})
	}
}

// FuzzMergeBinary checks that MergeBinary of any input gives what decoding
// it and Merge give (checkShiftMerge) into a receiver holding two writers'
// entries; the seeds are those writers' next states, so that inputs near
// them take the shift path, which checks only the ids an entry adds, and
// every encoding of the vectors (vectorEncodings; a tgcounter's body as
// either half of a tpncounter, see asCounter), malformed ones included.
//
// Run: go test ./tpncounter -run '^$' -fuzz '^FuzzMergeBinary$' -fuzztime 60s
func FuzzMergeBinary(f *testing.F) {
	opts := Options{HistoryLength: 3, FoldedLength: 2}
	newC := func() *Counter {
		c, err := New(opts)
		if err != nil {
			f.Fatal(err)
		}
		return c
	}
	w0, w1 := newC(), newC()
	apply := func(c *Counter, actor crdt.ActorID, ids ...string) {
		for i, id := range ids {
			if _, err := c.Apply(actor, crdt.TxnID(id), int64(i+1)); err != nil {
				f.Fatal(err)
			}
		}
	}
	apply(w0, "w0", "t0", "t1", "t2", "t3", "t4")
	apply(w1, "w1", "u0", "u1", "u2")
	if err := w0.MergeBinary(must(w1.MarshalBinary())); err != nil {
		f.Fatal(err)
	}
	recv := must(w0.MarshalBinary())
	apply(w1, "w1", "u3", "u4")
	f.Add(must(w1.MarshalBinary()))
	apply(w0, "w0", "t5", "01234567-0000-4000-8000-000000000007")
	f.Add(must(w0.MarshalBinary()))
	if _, err := w1.Compact("w1"); err != nil {
		f.Fatal(err)
	}
	f.Add(must(w1.MarshalBinary()))
	for _, b := range vectorEncodings(f) {
		f.Add(asCounter(b, 0))
		if !bytes.Equal(asCounter(b, 1), b) {
			f.Add(asCounter(b, 1))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newC()
		if err := c.UnmarshalBinary(recv); err != nil {
			t.Fatal(err)
		}
		must(c.MarshalBinary()) // the entries' encodings cached, as a writer's are
		if err := checkShiftMerge(c, data); err != nil {
			t.Fatal(err)
		}
	})
}

// asCounter returns data, if a tgcounter encoding of a version below 128, as
// the tpncounter of that version holding its body (whatever follows the
// envelope's version) in half h and nothing in the other; other data as is.
func asCounter(data []byte, h int) []byte {
	head := wire.AppendEnvelope(nil, crdt.TagTGCounter, 0)
	n := len(head) - 1
	if len(data) <= n || !bytes.Equal(data[:n], head[:n]) || data[n] >= 0x80 {
		return data
	}
	out := wire.AppendEnvelope(nil, crdt.TagTPNCounter, uint64(data[n]))
	out = wire.AppendArrayHeader(out, 2)
	if h == 1 {
		out = wire.AppendArrayHeader(out, 0)
	}
	out = append(out, data[n+1:]...)
	if h == 0 {
		out = wire.AppendArrayHeader(out, 0)
	}
	return out
}

// TestMarshalAllocatesItsSize checks that MarshalBinary allocates the
// encoding's size, not a bound on it, after the changes that grow that
// bound the most: shifts merged in place, a merge of changed entries and
// an Apply. The result must also equal a fresh decode's encoding.
func TestMarshalAllocatesItsSize(t *testing.T) {
	s, next := turnStates(t, 32)
	changed := must(next.MarshalBinary())
	c := s.Clone()
	c.MarshalBinary() // cache the encodings, so that the merge shifts in place
	steps := []struct {
		name string
		run  func() error
	}{
		{"shifts", func() error { return c.MergeBinary(changed) }},
		{"apply", func() error { _, err := c.Apply("writer-00", "after", 5); return err }},
		{"merge", func() error { return c.Merge(next) }},
	}
	for _, st := range steps {
		if err := st.run(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		b := must(c.MarshalBinary())
		if extra := cap(b) - len(b); extra > 32 {
			t.Errorf("after %s: %d bytes encoded in an allocation of %d", st.name, len(b), cap(b))
		}
		var d Counter
		if err := d.UnmarshalBinary(b); err != nil {
			t.Fatalf("after %s: %v", st.name, err)
		}
		if again := must(d.MarshalBinary()); !bytes.Equal(again, b) {
			t.Errorf("after %s: the encoding differs from its decode's", st.name)
		}
	}
}
