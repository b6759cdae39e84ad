package tpncounter

// Model tests for the index (written as an independent review of the ring
// index, then adopted). They drive
// several Counter (and GCounter) replicas through random Apply, Compact,
// Merge (including overflowing merges that undo), Clone, encode/decode and
// counter wrap-around, and after every step check:
//   - checkIndex on both halves (recount from the rings, table, multi records);
//   - Status, HasTransaction, Amount of every id of the pool, the value and
//     the horizon against a brute-force recount from the public Entry API;
//   - the outcome of every Apply / Merge against what the entries say it
//     must be (Applied adds exactly the amount; Duplicate vs
//     DuplicateFolded; conflicts, overflow, too many actors, outside window);
//   - that an erroring call leaves the encoding unchanged;
//   - that clones taken earlier are not changed by later steps on the original.
// The same random run is repeated with forced hashes (equal tags) and the
// traces (outcomes, values, encodings) must agree.
//
// Each scenario draws its own configuration (lengths 1–3, or 1–6 per
// replica, 2–8 actors, 6–45 ids, small MaxActors, amounts near
// MaxInt64/3, timed or not, debits, forking actors or not). Replay a
// failure: COUNTERKIT_SEED=<seed> go test ./tpncounter -run '^TestModel'.
// Scale: COUNTERKIT_CASES=10 runs ten times the scenarios. (During the
// review the same scenarios, 170 seeds × 2,000 steps × 4 hash modes, were
// also compared step by step with the previous index implementation.)

import (
	"bytes"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/big"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/proptest"
)

type rvCfg struct {
	h, f      int   // HistoryLength, FoldedLength
	maxActors int   // Options.MaxActors (0: default)
	actors    int   // actor pool
	ids       int   // id pool
	reps      int   // replicas
	big       bool  // some ids carry amounts near MaxInt64/3
	timed     bool  // Options.TxnTime
	pinned    bool  // each actor writes on one replica only (no forks)
	neg       bool  // Counter: some ids are debits
	hs, fs    []int // per-replica lengths when non-nil (mixed options)
}

// rvOpts returns replica i's options.
func (cfg rvCfg) opts(i int) Options {
	o := Options{HistoryLength: cfg.h, FoldedLength: cfg.f, MaxActors: cfg.maxActors}
	if cfg.hs != nil {
		o.HistoryLength, o.FoldedLength = cfg.hs[i], cfg.fs[i]
	}
	if cfg.timed {
		o.TxnTime = rvTxnTime
	}
	return o
}

func rvAmount(cfg rvCfg, k int) int64 {
	a := int64(1 + k%5)
	if cfg.big && k%7 == 3 {
		a = math.MaxInt64/3 + int64(k)
	}
	if cfg.neg && k%4 == 0 {
		a = -a
	}
	return a
}

func rvTxnTime(x crdt.TxnID) (time.Time, bool) {
	k, err := strconv.Atoi(strings.TrimPrefix(string(x), "t"))
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(1_000_000_000+int64(k), 0).UTC(), true
}

// rvHalf is the brute-force view of one half from the public Entry API.
type rvHalf struct {
	ents    map[crdt.ActorID]Entry
	inHist  map[crdt.TxnID]int
	inFold  map[crdt.TxnID]int
	amt     map[crdt.TxnID]int64 // the owner's copy
	owner   map[crdt.TxnID]Copy
	copies  map[crdt.TxnID][]Copy
	value   *big.Int
	horizon time.Time
}

func rvView(g *GCounter) rvHalf {
	h := rvHalf{ents: map[crdt.ActorID]Entry{}, inHist: map[crdt.TxnID]int{}, inFold: map[crdt.TxnID]int{}, amt: map[crdt.TxnID]int64{}}
	for _, a := range g.Actors() {
		e, _ := g.Entry(a)
		h.ents[a] = e
	}
	h.recount()
	return h
}

func (h *rvHalf) recount() {
	h.inHist, h.inFold, h.amt = map[crdt.TxnID]int{}, map[crdt.TxnID]int{}, map[crdt.TxnID]int64{}
	h.owner, h.copies = map[crdt.TxnID]Copy{}, map[crdt.TxnID][]Copy{}
	h.value = new(big.Int)
	h.horizon = time.Time{}
	for a, e := range h.ents {
		h.value.Add(h.value, big.NewInt(e.Total))
		if e.Forgot.After(h.horizon) {
			h.horizon = e.Forgot
		}
		for _, t := range e.History {
			h.inHist[t.ID]++
			h.copies[t.ID] = append(h.copies[t.ID], Copy{a, t.Amount, false})
		}
		for _, t := range e.Folded {
			h.inFold[t.ID]++
			h.copies[t.ID] = append(h.copies[t.ID], Copy{a, t.Amount, true})
		}
	}
	// The owner's copy counts: the folded copy of the smallest actor, else
	// the history copy of the smallest actor. Folded copies other than the
	// owner's are in their actors' totals and are subtracted.
	for x, cs := range h.copies {
		o := cs[0]
		for _, c := range cs[1:] {
			if (c.Folded && !o.Folded) || (c.Folded == o.Folded && c.Actor < o.Actor) {
				o = c
			}
		}
		h.owner[x], h.amt[x] = o, o.Amount
		if !o.Folded {
			h.value.Add(h.value, big.NewInt(o.Amount))
			continue
		}
		for _, c := range cs {
			if c.Folded && c.Actor != o.Actor {
				h.value.Sub(h.value, big.NewInt(c.Amount))
			}
		}
	}
}

// rvDebitOwns is the owner rule across the halves of a Counter for an id
// both hold.
func rvDebitOwns(pv, nv rvHalf, x crdt.TxnID) bool {
	po, no := pv.owner[x], nv.owner[x]
	if po.Folded != no.Folded {
		return no.Folded
	}
	return no.Actor < po.Actor
}

func (h rvHalf) status(x crdt.TxnID) Status {
	switch {
	case h.inFold[x] > 0:
		return Folded
	case h.inHist[x] > 0:
		return InHistory
	}
	return Unknown
}

// rvMergeView is the brute-force join of two halves: per actor the larger
// entry (seq first; content ties are resolved by compareEntries on the real
// entries, so the caller passes the real counters).
func rvMergeView(a, b *GCounter) rvHalf {
	h := rvHalf{ents: map[crdt.ActorID]Entry{}}
	for _, act := range a.Actors() {
		e, _ := a.Entry(act)
		h.ents[act] = e
	}
	for _, act := range b.Actors() {
		be := b.entries[act]
		if ae, ok := a.entries[act]; ok && compareEntries(be, ae) <= 0 {
			continue
		}
		e, _ := b.Entry(act)
		h.ents[act] = e
	}
	h.recount()
	return h
}

func fitsBig(v *big.Int) bool { return v.IsInt64() }

// clampBig is what Value returns for the exact value v.
func clampBig(v *big.Int) int64 {
	switch {
	case v.IsInt64():
		return v.Int64()
	case v.Sign() < 0:
		return math.MinInt64
	}
	return math.MaxInt64
}

// rvSum is what actor a's entry of h holds: its total and history.
func rvSum(h *rvHalf, a crdt.ActorID) *big.Int {
	e := h.ents[a]
	sum := big.NewInt(e.Total)
	for _, t := range e.History {
		sum.Add(sum, big.NewInt(t.Amount))
	}
	return sum
}

func rvCheckHalf(g *GCounter, pool []crdt.TxnID) error {
	if err := g.checkIndex(); err != nil {
		return err
	}
	v := rvView(g)
	if v.value.Cmp(g.BigValue()) != 0 || clampBig(v.value) != g.Value() {
		return fmt.Errorf("value %d (%s), brute %s", g.Value(), g.BigValue(), v.value)
	}
	if !g.Horizon().Equal(v.horizon) {
		return fmt.Errorf("horizon %v, brute %v", g.Horizon(), v.horizon)
	}
	for _, x := range pool {
		if s, w := g.Status(x), v.status(x); s != w {
			return fmt.Errorf("Status(%s) = %v, brute %v", x, s, w)
		}
		if hs, w := g.HasTransaction(x), v.inHist[x] > 0; hs != w {
			return fmt.Errorf("HasTransaction(%s) = %v, brute %v", x, hs, w)
		}
		o, ok := g.Owner(x)
		if wa, wok := v.amt[x]; o.Amount != wa || ok != wok {
			return fmt.Errorf("Owner(%s).Amount = %d %v, brute %d %v", x, o.Amount, ok, wa, wok)
		}
	}
	return nil
}

func rvCheck(c *Counter, pool []crdt.TxnID) error {
	for i, g := range []*GCounter{&c.p, &c.n} {
		if err := rvCheckHalf(g, pool); err != nil {
			return fmt.Errorf("half %d: %w", i, err)
		}
	}
	pv, nv := rvView(&c.p), rvView(&c.n)
	value := new(big.Int).Sub(pv.value, nv.value)
	for x, po := range pv.owner {
		if no, ok := nv.owner[x]; ok {
			if rvDebitOwns(pv, nv, x) {
				value.Sub(value, big.NewInt(po.Amount))
			} else {
				value.Add(value, big.NewInt(no.Amount))
			}
		}
	}
	if value.Cmp(c.BigValue()) != 0 || clampBig(value) != c.Value() {
		return fmt.Errorf("Counter.Value %d (%s), brute %s", c.Value(), c.BigValue(), value)
	}
	// An id is one conflict however many ways it conflicts: held in both
	// halves, with two amounts in P, with two amounts in N.
	conflicted := map[crdt.TxnID]bool{}
	for _, half := range []map[crdt.TxnID][]Copy{pv.copies, nv.copies} {
		for x, cs := range half {
			_, inP := pv.copies[x]
			_, inN := nv.copies[x]
			if inP && inN || slices.ContainsFunc(cs, func(c Copy) bool { return c.Amount != cs[0].Amount }) {
				conflicted[x] = true
			}
		}
	}
	conflicts := len(conflicted)
	var got, want []crdt.TxnID
	for _, k := range c.Conflicts() {
		got = append(got, k.ID)
	}
	for x := range conflicted {
		want = append(want, x)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Errorf("Counter.Conflicts lists %v, brute %v", got, want)
	}
	if conflicts > 0 && forcedHash == nil {
		modelStats["conflicted states"]++
	}
	for _, x := range pool {
		ws := max(pv.status(x), nv.status(x))
		want, known := pv.owner[x], false
		if _, ok := pv.owner[x]; ok {
			known = true
		}
		if no, ok := nv.owner[x]; ok && (!known || rvDebitOwns(pv, nv, x)) {
			want, known = Copy{no.Actor, -no.Amount, no.Folded}, true
		}
		if got, ok := c.Owner(x); ok != known || got != want {
			return fmt.Errorf("Counter.Owner(%s) = %+v %v, brute %+v %v", x, got, ok, want, known)
		}
		if s := c.Status(x); s != ws {
			return fmt.Errorf("Counter.Status(%s) = %v, want %v", x, s, ws)
		}
		if hs := c.HasTransaction(x); hs != (pv.inHist[x]+nv.inHist[x] > 0) {
			return fmt.Errorf("Counter.HasTransaction(%s) = %v", x, hs)
		}
	}
	return nil
}

// rvWrap shifts every counter of every entry of g by 2^32-8192: ring
// positions (mod any ring length up to 8192) are unchanged, so the index
// stays valid, but head+size now wraps around 2^32.
func rvWrap(g *GCounter) {
	const k = uint32(1<<32 - 8192)
	for _, e := range g.entries {
		e.head += k
		e.mid += k
		e.tail += k
	}
}

func mustBytes(c *Counter) []byte {
	b, err := c.MarshalBinary()
	if err != nil {
		panic(err)
	}
	return b
}

type ghost struct {
	c *Counter
	b []byte
}

// rvRun runs one random scenario and returns its trace; it fails t on the
// first broken check.
func rvRun(t *testing.T, seed int64, cfg rvCfg, steps int) []string {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	pool := make([]crdt.TxnID, cfg.ids)
	for k := range pool {
		pool[k] = crdt.TxnID(fmt.Sprintf("t%d", k))
	}
	reps := make([]*Counter, cfg.reps)
	for i := range reps {
		reps[i], _ = New(cfg.opts(i))
	}
	var ghosts []ghost
	var trace []string
	fail := func(step int, what string, err error) {
		t.Helper()
		t.Fatalf("seed %d cfg %+v step %d (%s): %v", seed, cfg, step, what, err)
	}
	for step := 0; step < steps; step++ {
		i := rng.Intn(len(reps))
		c := reps[i]
		ai := rng.Intn(cfg.actors)
		if cfg.pinned {
			ai = ai - ai%cfg.reps + i
			if ai >= cfg.actors {
				ai = i
			}
		}
		a := crdt.ActorID(fmt.Sprintf("a%d", ai))
		before := mustBytes(c)
		var out string
		op := rng.Intn(100)
		switch {
		case op < 55:
			k := rng.Intn(cfg.ids)
			if rng.Intn(3) == 0 {
				k = rng.Intn(min(cfg.ids, 8)) // hot ids
			}
			x, amt := pool[k], rvAmount(cfg, k)
			switch rng.Intn(40) {
			case 0: // conflicting retry: another amount
				if amt > 0 {
					amt++
				} else {
					amt--
				}
			case 1: // conflicting retry: the other sign
				amt = -amt
			}
			pv, nv := rvView(&c.p), rvView(&c.n)
			half, mag := pv, amt
			if amt < 0 {
				half, mag = nv, -amt
			}
			owner, known := c.Owner(x) // checked against the brute force by rvCheck
			valueBefore := c.BigValue()
			superseded := slices.ContainsFunc(half.copies[x], func(c Copy) bool { return c.Amount == mag })
			o, err := c.Apply(a, x, amt)
			out = fmt.Sprintf("apply %s %s %d: %v %s", a, x, amt, o, kind(err))
			if forcedHash == nil && err == nil {
				modelStats["outcome "+o.String()]++
			}
			after := rvView(&c.p)
			if amt < 0 {
				after = rvView(&c.n)
			}
			// The expected answer.
			status := max(pv.status(x), nv.status(x))
			horizon := pv.horizon // Apply checks the later of both halves' horizons
			if nv.horizon.After(horizon) {
				horizon = nv.horizon
			}
			switch {
			case known && owner.Amount != amt && superseded:
				if err != nil || o != Superseded {
					fail(step, out, errors.New("want Superseded"))
				}
			case known && owner.Amount != amt:
				if !errors.Is(err, crdt.ErrConflictingTransaction) {
					fail(step, out, errors.New("want conflict"))
				}
			case status == Folded:
				if err != nil || o != DuplicateFolded {
					fail(step, out, errors.New("want DuplicateFolded"))
				}
			case status == InHistory:
				if err != nil || o != Duplicate {
					fail(step, out, errors.New("want Duplicate"))
				}
			case err == nil:
				if o != Applied {
					fail(step, out, errors.New("want Applied"))
				}
				// The Counter's value grows by the amount (a half alone may
				// also lose a copy the other half owns, which the Counter
				// did not count).
				if got, want := c.BigValue(), new(big.Int).Add(valueBefore, big.NewInt(amt)); got.Cmp(want) != 0 {
					fail(step, out, fmt.Errorf("value %s, want %s", got, want))
				}
				if after.status(x) != InHistory && after.status(x) != Folded {
					fail(step, out, errors.New("applied but not known"))
				}
			case errors.Is(err, crdt.ErrOverflow):
				// SPEC.md 6.3 step 5: the Counter's value or the actor's
				// own sum would leave int64.
				if fitsBig(new(big.Int).Add(valueBefore, big.NewInt(amt))) && fitsBig(new(big.Int).Add(rvSum(&half, a), big.NewInt(mag))) {
					fail(step, out, errors.New("overflow refused a fitting value"))
				}
			case errors.Is(err, crdt.ErrTooLarge):
				if _, ok := half.ents[a]; ok || len(half.ents) < c.Options().MaxActors {
					fail(step, out, errors.New("spurious ErrTooLarge"))
				}
			case errors.Is(err, crdt.ErrOutsideWindow):
				at, _ := rvTxnTime(x)
				if !cfg.timed || at.After(horizon) {
					fail(step, out, errors.New("spurious ErrOutsideWindow"))
				}
			default:
				fail(step, out, err)
			}
			if cfg.timed && err == nil && o == Applied {
				at, _ := rvTxnTime(x)
				if !at.After(horizon) {
					fail(step, out, errors.New("applied a txn not after the horizon"))
				}
			}
			if err != nil || o != Applied {
				if !bytes.Equal(before, mustBytes(c)) {
					fail(step, out, errors.New("state changed"))
				}
			}
		case op < 65:
			ch, err := c.Compact(a)
			out = fmt.Sprintf("compact %s: %v %s", a, ch, kind(err))
			if forcedHash == nil && ch {
				modelStats["compact changed"]++
			}
			if err != nil || !ch {
				if !bytes.Equal(before, mustBytes(c)) {
					fail(step, out, errors.New("state changed"))
				}
			}
			if err != nil {
				fail(step, out, err)
			}
		case op < 85:
			j := rng.Intn(len(reps))
			o := reps[j]
			wantP, wantN := rvMergeView(&c.p, &o.p), rvMergeView(&c.n, &o.n)
			ob := mustBytes(o)
			err := c.Merge(o)
			out = fmt.Sprintf("merge %d<-%d: %s", i, j, kind(err))
			if !bytes.Equal(ob, mustBytes(o)) && i != j {
				fail(step, out, errors.New("merge modified its argument"))
			}
			switch {
			case err == nil:
				if pv := rvView(&c.p); pv.value.Cmp(wantP.value) != 0 {
					fail(step, out, fmt.Errorf("P value %s, want %s", pv.value, wantP.value))
				}
				if nv := rvView(&c.n); nv.value.Cmp(wantN.value) != 0 {
					fail(step, out, fmt.Errorf("N value %s, want %s", nv.value, wantN.value))
				}
			default:
				if !bytes.Equal(before, mustBytes(c)) {
					fail(step, out, errors.New("failed merge changed the state"))
				}
				if !errors.Is(err, crdt.ErrTooLarge) { // Merge never refuses overflow (SPEC.md 6.5)
					fail(step, out, err)
				}
			}
		case op < 90:
			// Clone: keep the original as a ghost that must never change.
			cl := c.Clone()
			ghosts = append(ghosts, ghost{c, before})
			if len(ghosts) > 4 {
				ghosts = ghosts[1:]
			}
			reps[i] = cl
			c = cl
			out = "clone"
			if !bytes.Equal(before, mustBytes(c)) {
				fail(step, out, errors.New("clone encodes differently"))
			}
		case op < 95:
			d, _ := New(cfg.opts(i))
			if err := d.UnmarshalBinary(before); err != nil {
				fail(step, "decode", err)
			}
			// A failed decode leaves d unchanged.
			if err := d.UnmarshalBinary(before[:len(before)-1]); err == nil {
				fail(step, "decode", errors.New("truncated decoded"))
			}
			if !d.Equal(c) {
				fail(step, "decode", errors.New("decoded state differs"))
			}
			reps[i] = d
			c = d
			out = "decode"
		case op < 97:
			rvWrap(&c.p)
			rvWrap(&c.n)
			out = "wrap"
		default:
			// Positive/Negative are copies.
			p := c.Positive()
			if len(pool) > 0 {
				_, _ = p.Apply("zz", crdt.TxnID("fresh"+strconv.Itoa(step)), 1)
			}
			out = "positive"
			if !bytes.Equal(before, mustBytes(c)) {
				fail(step, out, errors.New("Positive shares state"))
			}
		}
		if err := rvCheck(c, pool); err != nil {
			fail(step, out, err)
		}
		for gi, g := range ghosts {
			if g.c == c {
				continue
			}
			if !bytes.Equal(g.b, mustBytes(g.c)) {
				fail(step, out, fmt.Errorf("ghost %d changed", gi))
			}
			if err := rvCheck(g.c, pool); err != nil {
				fail(step, out, fmt.Errorf("ghost %d: %w", gi, err))
			}
		}
		if forcedHash == nil {
			modelStats[strings.Fields(out)[0]+" "+out[strings.LastIndex(out, " ")+1:]]++
		}
		trace = append(trace, fmt.Sprintf("%s -> %d %x", out, c.Value(), mustBytes(c)))
	}
	return trace
}

var modelStats = map[string]int{}

func rvConfigs(rng *rand.Rand) rvCfg {
	cfg := rvCfg{
		h:      1 + rng.Intn(3),
		f:      1 + rng.Intn(3),
		actors: 2 + rng.Intn(7),
		ids:    6 + rng.Intn(40),
		reps:   2 + rng.Intn(3),
		big:    rng.Intn(3) == 0,
		timed:  rng.Intn(3) == 0,
		pinned: rng.Intn(2) == 0,
		neg:    rng.Intn(4) != 0,
	}
	if rng.Intn(3) == 0 {
		cfg.maxActors = 1 + rng.Intn(cfg.actors)
	}
	if rng.Intn(2) == 0 {
		for range cfg.reps {
			cfg.hs = append(cfg.hs, 1+rng.Intn(5))
			cfg.fs = append(cfg.fs, 1+rng.Intn(6))
		}
	}
	return cfg
}

var rvHashes = []func(crdt.TxnID) uint64{
	// Three hashes for everything: every id shares a tag with a third.
	func(x crdt.TxnID) uint64 { return []uint64{0, 1 << 63, ^uint64(0)}[len(x)%3] },
	// Five tags spread over the table, by a real hash of the id.
	func(x crdt.TxnID) uint64 {
		h := fnv.New64a()
		h.Write([]byte(x))
		return (h.Sum64() % 5) * (math.MaxUint64 / 5)
	},
	// One hash for every id.
	func(crdt.TxnID) uint64 { return 1 << 40 },
}

func TestModelRandom(t *testing.T) {
	testsize.SkipSequential(t)
	defer func() { forcedHash = nil }()
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	scenarios, steps := proptest.Scale(2), 500 // COUNTERKIT_CASES=2 gives 4
	wants := []string{"outcome applied", "outcome duplicate", "outcome duplicate (folded)", "compact changed", "merge ok", "decode decode", "wrap wrap"}
	missing := func() bool {
		return slices.ContainsFunc(wants, func(w string) bool { return modelStats[w] == 0 })
	}
	base := rand.New(rand.NewSource(seed)).Int63()
	// More scenarios, up to four times as many, while one kind of step is
	// still missing: a few seeds in CI's two draw no folded duplicate.
	ran := 0
	for s := base; s < base+int64(scenarios) || missing() && s < base+4*int64(scenarios); s++ {
		ran++
		cfg := rvConfigs(rand.New(rand.NewSource(s)))
		want := rvRun(t, s, cfg, steps)
		for hi, h := range rvHashes {
			forcedHash = h
			got := rvRun(t, s, cfg, steps)
			forcedHash = nil
			for i := range want {
				if want[i] != got[i] {
					t.Fatalf("seed %d hashes %d step %d:\n real:   %.300s\n forced: %.300s", s, hi, i, want[i], got[i])
				}
			}
		}
	}
	t.Logf("%d scenarios × %d steps × %d hash modes; outcomes (real hashes): %v", ran, steps, 1+len(rvHashes), modelStats)
	for _, want := range wants {
		if modelStats[want] == 0 {
			t.Errorf("no %q step: the scenarios are vacuous", want)
		}
	}
}

// TestModelGCounterMergeUndo drives GCounter.Merge (its own undo path:
// more entries than maxEntries, lowered to 5 here) with big amounts, whose
// merged values pass int64, checking the index and the exact value after every step.
func TestModelGCounterMergeUndo(t *testing.T) {
	testsize.SkipSequential(t)
	defer func(m int) { forcedHash, maxEntries = nil, m }(maxEntries)
	maxEntries = 5
	seed := proptest.Seed()
	t.Logf("seed %d; replay: %s", seed, proptest.Replay(t, seed))
	seeds := proptest.Scale(3)
	first := rand.New(rand.NewSource(seed)).Int63()
	undoneTotal, pastTotal := 0, 0
	defer func() {
		t.Logf("undone merges: %d, merges past int64: %d", undoneTotal, pastTotal)
		if undoneTotal == 0 || pastTotal == 0 {
			t.Error("no undone merge or none past int64: the scenarios are vacuous")
		}
	}()
	for s := first; s < first+int64(seeds); s++ {
		for _, fh := range append([]func(crdt.TxnID) uint64{nil}, rvHashes...) {
			forcedHash = fh
			rng := rand.New(rand.NewSource(s))
			// At most 5 of the 8 actors: some merges are undone.
			opts := Options{HistoryLength: 1 + rng.Intn(2), FoldedLength: 1 + rng.Intn(2), MaxActors: 5}
			reps := make([]*GCounter, 3)
			for i := range reps {
				reps[i], _ = NewGCounter(opts)
			}
			pool := make([]crdt.TxnID, 20)
			for k := range pool {
				pool[k] = crdt.TxnID(fmt.Sprintf("t%d", k))
			}
			// Big transactions and two actors apart on each replica: merging
			// two passes int64, merging all three passes the cap.
			amount := func(k int) int64 {
				if k%4 == 0 {
					return math.MaxInt64/3 + int64(k)
				}
				return int64(1 + k)
			}
			for i, ks := range [][2]int{{0, 12}, {4, 16}, {8, 1}} {
				for j, k := range ks {
					if _, err := reps[i].Apply(crdt.ActorID(fmt.Sprintf("a%d", i+3*j)), pool[k], amount(k)); err != nil {
						t.Fatal(err)
					}
				}
			}
			undone := 0
			probe := reps[0].Clone()
			if err := probe.Merge(reps[1]); err != nil {
				t.Fatal(err)
			}
			before, _ := probe.MarshalBinary()
			if err := probe.Merge(reps[2]); !errors.Is(err, crdt.ErrTooLarge) {
				t.Fatalf("merging 6 actors into MaxActors 5: %v", err)
			} else if after, _ := probe.MarshalBinary(); !bytes.Equal(before, after) {
				t.Fatal("an undone merge changed the state")
			}
			undone++
			for step := 0; step < 800; step++ {
				i := rng.Intn(len(reps))
				g := reps[i]
				before, _ := g.MarshalBinary()
				var what string
				switch rng.Intn(4) {
				case 0, 1:
					k := rng.Intn(len(pool))
					_, err := g.Apply(crdt.ActorID(fmt.Sprintf("a%d", rng.Intn(8))), pool[k], amount(k))
					what = "apply " + kind(err)
				case 2:
					_, err := g.Compact(crdt.ActorID(fmt.Sprintf("a%d", rng.Intn(6))))
					what = "compact " + kind(err)
				default:
					o := reps[rng.Intn(len(reps))]
					want := rvMergeView(g, o)
					err := g.Merge(o)
					what = "merge " + kind(err)
					if err != nil {
						if !errors.Is(err, crdt.ErrTooLarge) {
							t.Fatalf("seed %d step %d: merge: %v", s, step, err)
						}
						undone++
						if after, _ := g.MarshalBinary(); !bytes.Equal(before, after) {
							t.Fatalf("seed %d step %d: failed merge changed state", s, step)
						}
					} else if rvView(g).value.Cmp(want.value) != 0 {
						t.Fatalf("seed %d step %d: merge value %d want %s", s, step, g.Value(), want.value)
					} else if !fitsBig(want.value) {
						pastTotal++
					}
				}
				if err := rvCheckHalf(g, pool); err != nil {
					t.Fatalf("seed %d step %d (%s): %v", s, step, what, err)
				}
			}
			forcedHash = nil
			undoneTotal += undone
		}
	}
}

// TestModelBigRing fills an entry to MaxEntriesPerActor (a folded record
// that cannot be forgotten because another actor holds every item), checks
// that Apply refuses the 4097th item without changing anything, then lets
// the other actor drop its copies and the first forget, with the index
// checked at every stage, with real hashes and with every id's hash forced
// into three values (COUNTERKIT_CASES adds five tags spread by a real hash).
func TestModelBigRing(t *testing.T) {
	testsize.SkipSequential(t)
	defer func() { forcedHash = nil }()
	hashes := rvHashes[:1]
	if os.Getenv(proptest.EnvCases) != "" {
		hashes = rvHashes[:2]
	}
	for _, fh := range append([]func(crdt.TxnID) uint64{nil}, hashes...) {
		forcedHash = fh
		g, _ := NewGCounter(Options{HistoryLength: 1024, FoldedLength: 1024})
		var xs, ys []Txn
		for i := range 3072 {
			xs = append(xs, Txn{ID: crdt.TxnID(fmt.Sprintf("x%d", i)), Amount: 1})
		}
		for i := range 1024 {
			ys = append(ys, Txn{ID: crdt.TxnID(fmt.Sprintf("y%d", i)), Amount: 2})
		}
		g.swap("b", nil, entryFrom("b", 1, 0, 0, xs, nil))
		g.swap("a", nil, entryFrom("a", 1, 3072, 0, ys, xs))
		pool := []crdt.TxnID{"x0", "x3071", "y0", "y1023", "new0", "new1"}
		check := func(what string) {
			t.Helper()
			if err := rvCheckHalf(g, pool); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		check("built")
		if v := g.Value(); v != 3072+2048 {
			t.Fatalf("value %d", v)
		}
		before, _ := g.MarshalBinary()
		if _, err := g.Apply("a", "new0", 1); !errors.Is(err, crdt.ErrTooLarge) {
			t.Fatalf("want ErrTooLarge, got %v", err)
		}
		if after, _ := g.MarshalBinary(); !bytes.Equal(before, after) {
			t.Fatal("refused Apply changed the state")
		}
		check("refused")
		if _, err := g.Compact("b"); err != nil {
			t.Fatal(err)
		}
		check("b dropped")
		for i := range 3000 {
			if _, err := g.Apply(crdt.ActorID([]string{"a", "b", "c"}[i%3]), crdt.TxnID(fmt.Sprintf("new%d", i)), 1); err != nil {
				t.Fatal(err)
			}
			if i%997 == 0 {
				check(fmt.Sprint("apply ", i))
			}
		}
		check("end")
		if v := g.Value(); v != 3072+2048+3000 {
			t.Fatalf("value %d", v)
		}
		forcedHash = nil
	}
}
