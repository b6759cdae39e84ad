package tpncounter

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
)

// woken returns a copy of c with every dormant record installed as an
// entry: the state c would be without dormant records.
func woken(c *Counter) *Counter {
	w := c.Clone()
	w.p.wake()
	w.n.wake()
	return w
}

// redecode returns c encoded and decoded again: its retired entries
// become dormant records.
func redecode(t *testing.T, c *Counter) *Counter {
	t.Helper()
	d := newT(t, c.p.o)
	if err := d.UnmarshalBinary(must(c.MarshalBinary())); err != nil {
		t.Fatal(err)
	}
	return d
}

// sameCounters fails unless a (which may hold dormant records) and b (the
// same state with none) look the same through every method that reads
// entries.
func sameCounters(t *testing.T, a, b *Counter, actors []crdt.ActorID, where string) {
	t.Helper()
	ab, bb := must(a.MarshalBinary()), must(b.MarshalBinary())
	if !bytes.Equal(ab, bb) {
		t.Fatalf("%s: encodings differ:\n%x\n%x", where, ab, bb)
	}
	if a.Value() != b.Value() {
		t.Fatalf("%s: value %d, want %d", where, a.Value(), b.Value())
	}
	if !a.Equal(b) || !b.Equal(a) || !a.Leq(b) || !b.Leq(a) {
		t.Fatalf("%s: Equal/Leq say the states differ", where)
	}
	if sa, sb := a.Stats(), b.Stats(); sa != sb {
		t.Fatalf("%s: stats %+v, want %+v", where, sa, sb)
	}
	if !a.Horizon().Equal(b.Horizon()) {
		t.Fatalf("%s: horizon %v, want %v", where, a.Horizon(), b.Horizon())
	}
	if la, lb := maps.Collect(a.LiveActors()), maps.Collect(b.LiveActors()); !maps.Equal(la, lb) {
		t.Fatalf("%s: live actors %v, want %v", where, la, lb)
	}
	for h, ga := range [2]*GCounter{&a.p, &a.n} {
		gb := [2]*GCounter{&b.p, &b.n}[h]
		if ga.Len() != gb.Len() || ga.Value() != gb.Value() {
			t.Fatalf("%s: half %d: len %d value %d, want %d %d", where, h, ga.Len(), ga.Value(), gb.Len(), gb.Value())
		}
		if x, y := ga.Actors(), gb.Actors(); !slices.Equal(x, y) {
			t.Fatalf("%s: half %d: actors %v, want %v", where, h, x, y)
		}
		if sa, sb := ga.Stats(), gb.Stats(); sa != sb {
			t.Fatalf("%s: half %d: stats %+v, want %+v", where, h, sa, sb)
		}
		if !ga.Equal(gb) || !gb.Equal(ga) {
			t.Fatalf("%s: half %d: not Equal", where, h)
		}
		for _, actor := range actors {
			ea, oka := ga.Entry(actor)
			eb, okb := gb.Entry(actor)
			if oka != okb || fmt.Sprint(ea) != fmt.Sprint(eb) {
				t.Fatalf("%s: half %d: entry of %s %v %+v, want %v %+v", where, h, actor, oka, ea, okb, eb)
			}
		}
		if err := ga.checkIndex(); err != nil {
			t.Fatalf("%s: half %d: %v", where, h, err)
		}
	}
}

// TestDormantMatchesEntries runs random schedules over pairs of counters
// in the same state: one holding many retired actors as dormant records
// (decoded from bytes), the other with every record installed as an
// entry. Both take the same Apply (by live and by retired actors), Retire,
// Compact, Retract, Merge and MergeBinary, with the same results, and
// after every step they must encode to the same bytes and agree in value,
// entries, actors, Len, Equal, Leq, Stats, LiveActors and Horizon. 10
// schedules by default, proptest.Scale(20) with COUNTERKIT_CASES above 1.
//
// Replay: COUNTERKIT_SEED=<seed> go test ./tpncounter -run TestDormantMatchesEntries
func TestDormantMatchesEntries(t *testing.T) {
	testsize.SkipSequential(t)
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	// txnTime gives "t<n>" the time n seconds after 2001.
	txnTime := func(x crdt.TxnID) (time.Time, bool) {
		n, err := strconv.Atoi(strings.TrimPrefix(string(x), "t"))
		return time.Unix(1e9+int64(n), 0), err == nil && strings.HasPrefix(string(x), "t")
	}
	schedules := 10 // COUNTERKIT_CASES above 1: proptest.Scale(20) (2 gives 40)
	if proptest.Scale(1) > 1 {
		schedules = proptest.Scale(20)
	}
	var dormantSteps, steps, wokenByApply int
	for s := 0; s < schedules; s++ {
		opts := Options{HistoryLength: 3, FoldedLength: 2}
		if s%2 == 1 {
			opts.TxnTime = txnTime
		}
		olds := 20 + r.IntN(40)
		var actors []crdt.ActorID
		for i := 0; i < olds; i++ {
			actors = append(actors, crdt.ActorID(fmt.Sprintf("o%03d", i)))
		}
		for i := 0; i < 3; i++ {
			actors = append(actors, crdt.ActorID(fmt.Sprintf("w%d", i)))
		}
		actors = append(actors, "zz-none")
		next := 0 // the next transaction number
		txn := func() crdt.TxnID {
			next += 1 + r.IntN(2)
			if r.IntN(8) == 0 { // an old one: a duplicate, or below the horizon
				return crdt.TxnID(fmt.Sprintf("t%d", r.IntN(next+1)))
			}
			return crdt.TxnID(fmt.Sprintf("t%d", next))
		}
		amount := func() int64 {
			a := int64(1 + r.IntN(3))
			if r.IntN(3) == 0 {
				a = -a
			}
			return a
		}
		// Two replicas, each built the same way: the old actors write and
		// most of them retire.
		var dorm, full [2]*Counter
		for k := range dorm {
			c := newT(t, opts)
			for _, a := range actors[:olds] {
				for n := r.IntN(3); n >= 0; n-- {
					_, _ = c.Apply(a, txn(), amount())
				}
				if r.IntN(5) != 0 {
					_, _ = c.Retire(a)
				}
			}
			dorm[k] = redecode(t, c)
			full[k] = woken(dorm[k])
		}
		for step := 0; step < 60; step++ {
			k := r.IntN(2)
			d, f := dorm[k], full[k]
			var what string
			// same fails unless both counters answered alike (results, then errors).
			same := func(got, want any, gotErr, wantErr error) {
				t.Helper()
				if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("seed %d schedule %d step %d (%s): %v %v, want %v %v", seed, s, step, what, got, gotErr, want, wantErr)
				}
			}
			actor := actors[r.IntN(len(actors)-1)]
			if r.IntN(2) == 0 {
				actor = actors[olds+r.IntN(3)] // a live writer
			}
			switch op := r.IntN(12); {
			case op < 4:
				x, amt := txn(), amount()
				what = fmt.Sprintf("%s applies %s %d", actor, x, amt)
				if e, _, ok := d.p.locate(string(actor)); ok && e == nil {
					wokenByApply++
				}
				o1, e1 := d.Apply(actor, x, amt)
				o2, e2 := f.Apply(actor, x, amt)
				same(o1, o2, e1, e2)
			case op < 6:
				what = fmt.Sprintf("retire %s", actor)
				ok1, e1 := d.Retire(actor)
				ok2, e2 := f.Retire(actor)
				same(ok1, ok2, e1, e2)
			case op < 7:
				what = fmt.Sprintf("%s compacts", actor)
				ok1, e1 := d.Compact(actor)
				ok2, e2 := f.Compact(actor)
				same(ok1, ok2, e1, e2)
			case op < 8:
				x := crdt.TxnID(fmt.Sprintf("t%d", r.IntN(next+1)))
				what = fmt.Sprintf("%s retracts %s", actor, x)
				ok1, e1 := d.Retract(actor, x)
				ok2, e2 := f.Retract(actor, x)
				same(ok1, ok2, e1, e2)
			case op < 9:
				// Merge the other replica: as it is (dormant records
				// included, or not), or decoded afresh.
				var o1, o2 *Counter
				switch r.IntN(3) {
				case 0:
					o1, o2 = dorm[1-k], full[1-k]
					what = "merge the other"
				case 1:
					o1, o2 = dorm[1-k], dorm[1-k]
					what = "merge the other (dormant into both)"
				default:
					o1 = redecode(t, full[1-k])
					o2 = woken(o1)
					what = "merge the other, decoded"
				}
				same(nil, nil, d.Merge(o1), f.Merge(o2))
			case op < 10:
				what = "merge the other's encoding"
				data := must(full[1-k].MarshalBinary())
				same(nil, nil, d.MergeBinary(data), f.MergeBinary(data))
			case op < 11:
				what = "decode again"
				dorm[k] = redecode(t, d)
				d = dorm[k]
			default:
				what = "clone"
				dorm[k], full[k] = d.Clone(), f.Clone()
				d, f = dorm[k], full[k]
			}
			steps++
			if d.p.dorm.n()+d.n.dorm.n() > 0 {
				dormantSteps++
			}
			sameCounters(t, d, f, actors, fmt.Sprintf("seed %d schedule %d step %d (%s)", seed, s, step, what))
		}
	}
	t.Logf("%d schedules, %d steps, %d with dormant records; %d applies by a dormant actor", schedules, steps, dormantSteps, wokenByApply)
	if dormantSteps < steps/2 || wokenByApply == 0 {
		t.Fatalf("the schedules hardly exercise dormant records")
	}
}
