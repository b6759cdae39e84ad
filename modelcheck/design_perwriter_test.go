package modelcheck

import (
	"fmt"
	"strings"
	"testing"

	"github.com/counterkit/counterkit/internal/testsize"
)

// This file checks, on an abstract model, the per-writer layout planned
// for the ledger: every writer incarnation keeps an account's transactions
// under a key of its own, so that a credit touches a constant number of
// keys whatever the number of writers (the ledger of SPEC.md 6.9–6.11
// rewrites one value holding every writer's entry). The model follows one
// transaction x; every action is one store call or one step of a writer.
//
// The store (time in ticks): a write lands within L of being sent or never
// (lost); its acknowledgement may be lost; a read may miss what landed up
// to D earlier (it sees any of the versions that landed in (t-D, t], or the
// one before; of a record's claims, any subset of those that landed in
// (t-D, t]).
//
// The keys:
//   - K_w, one per writer incarnation w, written only by w: w keeps the
//     key's state in memory and puts it whole, each put with a larger
//     version; the key holds the highest version that landed. For x it
//     holds nothing, x listed (x's id in the history, or folded into the
//     total with the id kept: readers count both alike, so the model does
//     not tell them apart), x anonymous (folded, id dropped) or x
//     retracted (taken back out).
//   - rec(x), a record of sibling claims: a writer adds a claim naming
//     itself and stamped with the time it was sent; every claim that
//     landed is kept. Its owner is the claim with the least timestamp
//     (ties: the least writer id), and a reader takes it as the owner only
//     F after that timestamp, when every claim sent before it has landed
//     and is visible. (A writer that sends its claim again adds a copy
//     with a later stamp, which cannot change the owner; the model keeps,
//     per writer, the first copy that landed.)
//   - B, written by reclaimers: per reclaimed incarnation d a tombstone
//     naming d and the version of K_d reclaimed, with what x came to in
//     K_d; a tombstone collected later leaves that amount in B's total.
//
// What counts (a fresh reader with no faults): over B and every key that
// no tombstone hides (a tombstone of d at version v hides K_d up to
// version v), x counts once if any of them lists x, plus once for every
// one that holds it anonymous. That reader reads every key at one
// instant; a Value that reads them one after another, each fresh, taking
// at most V from its first read to its last, must count x the same
// (TestPerWriterDesignReader).
//
// The protocol:
//  1. A call of x at w (a client's send or retry; w's memory already
//     settled on x answers duplicate): read rec(x); a visible claim
//     answers duplicate; otherwise w may put x listed until W after that
//     read (later: read again). On the put's acknowledgement the call is
//     acknowledged and w adds its claim.
//  2. Carrying: a put of w that was not acknowledged leaves x listed in
//     w's memory, and w's later puts carry it, but only until W after
//     w's last read of rec(x) that saw no claim; past that w reads
//     rec(x) before its next put.
//  3. Settling (w's memory lists x, any time): read rec(x). No claim: if
//     a put of w carrying x was acknowledged, add w's claim (x is in K_w);
//     either way settle again later. An owner not yet final (less than F
//     after its timestamp): settle again later. Owner w: w owns x. Owner
//     another: w retracts x (its later puts carry the retraction).
//  4. Dropping the id (the owner only): at least A after the settle read
//     that made w the owner, w reads every other key; if none lists x,
//     x becomes anonymous in w's memory H later (H = V + 1: a Value read
//     that saw another key list x before it retracted also sees w's list
//     it).
//  5. Reclaiming a dead incarnation d, at least R after d's last write
//     was sent: read B; a tombstone of d there: delete K_d. Otherwise read
//     K_d and settle what it holds of x as in 3 (owner d: x listed in B;
//     anonymous: anonymous in B; no claim: add d's claim and reclaim again
//     later), put B with a tombstone of d at the version read, and once B
//     is acknowledged delete K_d (the delete lands within L). The
//     tombstone is collected G after the delete was sent.
//  6. A Value read reads every K_w, then B (B first can miss x: B before
//     the tombstone lands, K_d after its delete).
//
// The claim checked after every step: once a copy of x landed in any key,
// x counts exactly once; before, at most once (a call whose every write
// was lost leaves x uncounted or, once a later call applies it, counted
// once). The search has no horizon: every time is kept relative to now
// (see canon), so the states are finite and every schedule of any length
// is covered. TestPerWriterCanon checks that abstraction state by state.
//
// The bounds, in ticks: F = R = L + D, A = W + L + D - 1, and, for a
// Value read of at most V, G = L + D + V and H = V + 1. With them no
// schedule breaks the claim; one tick less finds a schedule that counts x
// twice or not at all: F, A, R and G (V = 0) in TestPerWriterDesignBroken
// at W = 2, L = 2, D = 1; F and A also at (W, L, D) = (1, 1, 1), (1, 2, 1),
// (2, 1, 1), (1, 1, 2) and (2, 2, 2), R at (1, 1, 1), (1, 2, 1) and
// (1, 1, 2), by hand; G and H in TestPerWriterDesignReader at W = L = D = 1
// (G with V = 1, H with V = 0; with V = 1, H = 2 passes and H = 1 fails,
// 1.2M states, by hand). With an atomic reader G needs only L + 1 (the
// tombstone outlives the delete's landing) and H nothing.
// TestPerWriterDesignBroken shows the other rules needed too: the settle
// read before the id is dropped, the deadline W, the scan, the tombstone,
// a claim only for a copy that was acknowledged, x listed (not anonymous)
// in B, and an owner that every reader computes alike and takes only once
// final: "the first claim this reader saw" and "the least writer id, taken
// at once" both miscount x; TestPerWriterDesignReader, that B is read
// last.
//
// Two findings changed the draft this file started from. Its owner was
// the claim that landed first, taken at once; the search found a schedule
// that loses x: a reclaimer reading a stale B (missing the tombstone an
// earlier reclaim of d had just written) and a stale rec(x) (missing a's
// claim) claimed x for d, that claim tied with a's and won on the writer
// id, and a retracted x, which the earlier reclaim had left out of B. No
// store of the project orders claims by landing anyway; a timestamp taken
// final F after it is what Cassandra's write times and Riak's siblings
// can give (F then also covers the skew between writers' clocks, which
// the model takes as agreeing). And the draft made a writer wait S = L + D
// after its last put and claim before settling: with the owner final F
// after its timestamp that wait is not needed (the search passes without
// it), so the protocol has one bound fewer.
//
// Clock skew is not modelled. With writers' clocks within S of true time,
// a bound between one writer's stamp and another's clock grows by 2S, by
// this argument (not checked here): a claim stamped ts' < ts by a writer
// S behind was sent before ts + S and is visible by ts + S + L + D, and a
// reader S ahead reads its clock as ts + F at ts + F - S; so F = L + D +
// 2S. R grows the same way where a reclaimer dates d's last write by d's
// stamp. W, A, G and H run from a writer's own events on its own clock and
// do not.
//
// What the layout costs, and why it is not built as checked here. An id
// stays listed in its writer's key at least F + A = 2(L + D) + W - 1 after
// its first put (the owner final, then the wait before the scan), and
// every put rewrites the key whole. L, in real time, is how long a Put
// may stay in flight before it lands: the ledger takes RetireAfter (an
// hour) to be longer than that, and Cassandra keeps hints for a replica
// that is down for up to three hours (max_hint_window) and delivers them
// when it returns. So a writer crediting r times a second rewrites about
// 2·r·L ids with every credit: at r = 10 and L = 1 h, 72,000 ids (some
// 2 MB); at about 40 a second, more than store.MaxValue. A credit's
// calls are constant but its bytes grow with the rate, against issue
// 28's item 2. The ledger of SPEC.md 6.9–6.11 escapes this by letting an
// id leave its history after a count of later transactions and judging
// a late copy against the records, which is where its stated limits come
// from (6.11, "Concurrent copies"); balance.Transactions escapes it
// because Partitions rows are fenced by write timestamps: a delete-range
// shadows a row that lands after it (9.4). A per-writer layout must keep
// a writer's ids where a credit does not rewrite them (segments written
// once, each read by Value until its ids are dropped, so that a Value
// reads about 2·r·L ids of each writer; or rows), or take the ledger's
// judgement and its limits. This model checks neither.

// perWriterRules are the protocol's parameters, and the switches that
// break it.
type perWriterRules struct {
	W, L, D, A, R, G int  // ticks
	F                int  // a claim's owner is final F after its timestamp
	Calls            int  // calls of x, each at any writer, any time
	Reclaims         int  // reclaim rounds of the dead incarnation
	Reader           bool // a Value read that reads the keys one by one
	V                int  // such a read's longest duration
	H                int  // the owner drops x's id H after the scan that allows it

	leastID       bool // the owner is the least writer id among claims
	firstSeen     bool // the owner is any claim the reader sees
	noSettle      bool // a writer drops x's id without reading rec(x)
	noScan        bool // the owner drops x's id when it settles, no scan
	noDeadline    bool // a writer puts x however long after its read
	noTomb        bool // a reclaim writes B without a tombstone
	claimUnacked  bool // a settle adds a claim for a copy never acknowledged
	reclaimToAnon bool // a reclaim moves x into B's total, anonymous
	canonEarly    int8 // canon forgets a writer's read this many ticks early
	readBFirst    bool // a Value read may read B before the other keys
}

// What a key, or a writer's memory, holds of x.
const (
	pwAbsent = iota
	pwListed
	pwAnon
	pwRetracted
	pwGone // the key was deleted
)

var pwXNames = [...]string{"nothing", "x listed", "x anonymous", "x retracted", "deleted"}

const (
	pwWriters = 3 // writer 0 is the incarnation that may crash (d); 1, 2 live
	pwDead    = 0
	pwNo      = -1
	pwMaxPuts = 2   // puts of one writer in flight
	pwRecent  = 4   // versions of a key landed within D
	pwGoneVer = 100 // the version of a delete
)

type pwVersion struct{ x, ver, at int8 }

// pwKeyStore is a key in the store: old is the newest version that
// landed by t-D, recent those that landed since, oldest first.
type pwKeyStore struct {
	cur     int8 // the highest version that landed
	old     pwVersion
	recent  [pwRecent]pwVersion
	nRecent int8
}

func (k *pwKeyStore) current() pwVersion {
	v := k.old
	if k.nRecent > 0 {
		v = k.recent[k.nRecent-1]
	}
	v.ver = k.cur
	return v
}

// readable lists what a read at t may see.
func (k *pwKeyStore) readable() []pwVersion {
	out := []pwVersion{k.old}
	return append(out, k.recent[:k.nRecent]...)
}

func (k *pwKeyStore) land(v pwVersion) {
	// Of versions that hold the same for x, a read may as well see the
	// oldest: it hides the fewest versions under a tombstone.
	for i := int8(0); i < k.nRecent; i++ {
		if k.recent[i].x == v.x {
			v.ver = min(v.ver, k.recent[i].ver)
			copy(k.recent[i:], k.recent[i+1:])
			k.nRecent--
			k.recent[k.nRecent] = pwVersion{}
			break
		}
	}
	if k.nRecent == pwRecent {
		panic("too many versions within D")
	}
	k.recent[k.nRecent] = v
	k.nRecent++
	k.cur = max(k.cur, v.ver)
}

// age moves the versions landed by t-D into old.
func (k *pwKeyStore) age(t, d int8) {
	for k.nRecent > 0 && k.recent[0].at <= t-d {
		k.old = k.recent[0]
		copy(k.recent[:], k.recent[1:])
		k.nRecent--
		k.recent[k.nRecent] = pwVersion{}
	}
}

type pwPut struct{ x, ver, sent, call int8 }

type pwWriter struct {
	mem        int8 // what w's memory holds of x
	owned      bool // w settled as x's owner
	ownedAt    int8
	scanAt     int8 // the owner's scan found no other key listing x
	rd         int8 // w's last read of rec(x) that saw no claim
	ackedCarry bool // a put of w carrying x listed was acknowledged
	nextVer    int8
	puts       [pwMaxPuts]pwPut
	nPuts      int8
	key        pwKeyStore
	crashed    bool
}

// pwClaim is a writer's claim: sent while in flight; landed when it
// landed, ts its timestamp (when the copy that landed was sent).
type pwClaim struct{ sent, landed, ts int8 }

const (
	pwCallIdle = iota
	pwCallRead // read rec(x) at f: no claim
	pwCallSent // put sent
	pwCallDone
)

type pwCall struct{ phase, w, f int8 }

const (
	pwRIdle = iota
	pwRBSent
	pwRDelSent
)

type pwState struct {
	t       int8
	writers [pwWriters]pwWriter
	rec     [pwWriters]pwClaim
	calls   [3]pwCall

	// B: the tombstone of d, and B's total.
	tomb                   bool
	tombVer, tombX, tombAt int8 // version of K_d, what it held, when it landed
	totalListed            bool
	totalAnon              int8
	rPhase, rounds         int8
	rSent, rVer, rX        int8 // the reclaim's put of B
	delSent                int8
	dLast                  int8 // d's last write sent
	landed, acked          bool // a copy of x landed; a call was acknowledged
	rd                     pwReader
	lastAction             string
	nCalls                 int8
}

// pwReader is a Value read that reads the keys one by one: what it saw so
// far.
type pwReader struct {
	phase    int8  // pwReadIdle, pwReading, pwReadDone
	mask     uint8 // keys read: bit w for K_w, bit pwWriters for B
	start    int8
	landed   bool // a copy of x had landed when it started
	listed   bool // a live key read listed x
	anon     int8 // live keys read holding x anonymous
	dX, dVer int8 // K_d as read
	b        pwBView
	count    int8 // what it counted, once done
}

// finish counts x from what the read saw, as value does.
func (rd *pwReader) finish() {
	listed, anon := rd.listed || rd.b.totalListed, rd.anon+rd.b.totalAnon
	if rd.b.tomb {
		listed = listed || rd.b.tombX == pwListed
		anon += b2i(rd.b.tombX == pwAnon)
	}
	if !rd.b.tomb || rd.dVer > rd.b.tombVer {
		listed = listed || rd.dX == pwListed
		anon += b2i(rd.dX == pwAnon)
	}
	*rd = pwReader{phase: pwReadDone, landed: rd.landed, count: anon + b2i(listed)}
}

func b2i(b bool) int8 {
	if b {
		return 1
	}
	return 0
}

// pwBView is B as a reader saw it.
type pwBView struct {
	tomb           bool
	tombVer, tombX int8
	totalListed    bool
	totalAnon      int8
}

const (
	pwReadIdle = iota
	pwReading
	pwReadDone
)

// pwNow is the time of every canonical state: the protocol only compares
// times, so a state is explored at pwNow with every time shifted by the
// same amount, and a time that no rule can tell from "long ago" becomes
// pwLongAgo. The search needs no horizon: the states are finite.
const (
	pwNow     = 60
	pwLongAgo = -100
)

// canon is the state as the search explores it: at pwNow, without the
// trace, and without what no longer tells states apart.
func (s *pwState) canon(r *perWriterRules) pwState {
	k := *s
	k.lastAction = ""
	t := k.t
	shift := func(x *int8, relevant bool) {
		switch {
		case *x == pwNo || *x == pwLongAgo:
		case !relevant:
			*x = pwLongAgo
		default:
			*x += pwNow - t
		}
	}
	for w := range k.writers {
		wr := &k.writers[w]
		dead := w == pwDead && wr.crashed
		if dead || wr.mem == pwAnon || wr.mem == pwRetracted || wr.owned || (wr.rd != pwNo && t > wr.rd+int8(r.W)-r.canonEarly) {
			wr.rd = pwNo
		}
		shift(&wr.rd, true)
		if dead || !wr.owned || wr.mem != pwListed {
			wr.ownedAt = pwNo
		}
		shift(&wr.ownedAt, t < wr.ownedAt+int8(r.A))
		if dead || !wr.owned || wr.mem != pwListed {
			wr.scanAt = pwNo
		}
		shift(&wr.scanAt, t < wr.scanAt+int8(r.H))
		if dead || wr.mem != pwListed {
			wr.ackedCarry = false
		}
		for j := range wr.puts[:wr.nPuts] {
			if wr.puts[j].call != pwNo && k.calls[wr.puts[j].call].phase != pwCallSent {
				wr.puts[j].call = pwNo
			}
			shift(&wr.puts[j].sent, true)
		}
		wr.key.old.at = 0
		for j := range wr.key.recent[:wr.key.nRecent] {
			shift(&wr.key.recent[j].at, true)
		}
		k.renumber(w)
	}
	// Of claims older than F, only their order counts.
	for w := range k.rec {
		cl := &k.rec[w]
		shift(&cl.sent, true)
		if cl.landed == pwNo {
			continue
		}
		shift(&cl.landed, cl.landed > t-int8(r.D))
		// (A claim sent from now on has a later timestamp than these.)
		final := int8(max(r.F, 1))
		if cl.ts > t-final {
			cl.ts += pwNow - t
			continue
		}
		earlier := int8(0)
		for _, o := range s.rec {
			if o.landed != pwNo && o.ts < s.rec[w].ts {
				earlier++
			}
		}
		cl.ts = pwNow - final - int8(pwWriters) + earlier
	}
	if k.rPhase != pwRBSent {
		k.rSent, k.rVer, k.rX = pwNo, 0, 0
	}
	shift(&k.rSent, true)
	shift(&k.dLast, t < k.dLast+int8(r.R))
	shift(&k.tombAt, k.tombAt > t-int8(r.D))
	shift(&k.delSent, k.rPhase == pwRDelSent || (k.tomb && t < k.delSent+int8(r.G)))
	for i := range k.calls {
		if k.calls[i].phase != pwCallRead {
			k.calls[i].w, k.calls[i].f = 0, 0
			continue
		}
		// A read older than W is as good as any older one.
		k.calls[i].f = max(k.calls[i].f, t-int8(r.W)-1) + pwNow - t
	}
	if k.rd.phase == pwReading {
		shift(&k.rd.start, true)
	} else if k.rd.phase == pwReadDone && k.rd.count == 1 {
		k.rd = pwReader{phase: pwReadDone, count: 1}
	}
	k.t = pwNow
	return k
}

// renumber numbers w's versions 1, 2, ... in their order: the protocol
// only compares them, and a writer whose puts are lost may put again and
// again. 0 (never written) and the delete's version keep theirs.
func (s *pwState) renumber(w int) {
	wr := &s.writers[w]
	vers := []*int8{&wr.nextVer, &wr.key.cur, &wr.key.old.ver}
	for i := range wr.key.recent[:wr.key.nRecent] {
		vers = append(vers, &wr.key.recent[i].ver)
	}
	for i := range wr.puts[:wr.nPuts] {
		vers = append(vers, &wr.puts[i].ver)
	}
	if w == pwDead {
		vers = append(vers, &s.tombVer, &s.rVer)
		if s.rd.phase == pwReading && s.rd.mask&(1<<pwDead) != 0 {
			vers = append(vers, &s.rd.dVer)
		}
	}
	var seen [128]bool
	for _, v := range vers {
		if *v > 0 && *v < pwGoneVer {
			seen[*v] = true
		}
	}
	var rank [128]int8
	n := int8(0)
	for v := range seen {
		if seen[v] {
			n++
			rank[v] = n
		}
	}
	for _, v := range vers {
		if *v > 0 && *v < pwGoneVer {
			*v = rank[*v]
		}
	}
}

// value is what a fresh reader with no faults counts for x.
func (s *pwState) value() int {
	listed, anon := s.totalListed, int(s.totalAnon)
	if s.tomb {
		switch s.tombX {
		case pwListed:
			listed = true
		case pwAnon:
			anon++
		}
	}
	for w := range s.writers {
		c := s.writers[w].key.current()
		if w == pwDead && s.tomb && c.ver <= s.tombVer {
			continue
		}
		switch c.x {
		case pwListed:
			listed = true
		case pwAnon:
			anon++
		}
	}
	if listed {
		anon++
	}
	return anon
}

type pwChecker struct {
	r       perWriterRules
	visited map[pwState]struct{}
	states  int
	path    []int // the successors taken from the initial state
	found   []int // the path to the first violation
	tracing bool  // next names its actions

	canonChecks int    // states still to check against their canon
	canonBroken string // the first state whose canon behaves otherwise
}

// sameAsCanon checks that s and its canon k are alike to the protocol: the
// same verdict, and the same successors up to their canon. It returns how
// they differ, or "".
func (c *pwChecker) sameAsCanon(s, k pwState) string {
	if c.verdict(s) != c.verdict(k) {
		return fmt.Sprintf("state %+v: verdict %q, its canon %q", s, c.verdict(s), c.verdict(k))
	}
	succ := func(s pwState) map[pwState]int {
		m := map[pwState]int{}
		for _, n := range c.next(s) {
			m[n.canon(&c.r)]++
		}
		return m
	}
	a, b := succ(s), succ(k)
	for n := range a {
		if _, ok := b[n]; !ok {
			return fmt.Sprintf("state %+v has a successor its canon %+v lacks: %+v", s, k, n)
		}
	}
	for n := range b {
		if _, ok := a[n]; !ok {
			return fmt.Sprintf("the canon %+v of %+v has a successor it lacks: %+v", k, s, n)
		}
	}
	return ""
}

// pwStart is the state before any call.
func pwStart(r perWriterRules) pwState {
	s := pwState{t: pwNow, tombVer: pwNo, tombX: pwNo, tombAt: pwNo, rSent: pwNo, delSent: pwNo, dLast: pwNo}
	for w := range s.writers {
		s.writers[w].ownedAt, s.writers[w].rd, s.writers[w].scanAt = pwNo, pwNo, pwNo
		s.writers[w].nextVer = 1
		s.rec[w] = pwClaim{pwNo, pwNo, pwNo}
	}
	s.nCalls = int8(r.Calls)
	return s
}

func checkPerWriter(r perWriterRules) (states int, violation []string) {
	c := &pwChecker{r: r, visited: map[pwState]struct{}{}}
	s := pwStart(r)
	c.explore(s)
	if c.found == nil {
		return c.states, nil
	}
	// Replay the violating path, naming each action.
	c.tracing = true
	tick := 0
	for _, i := range c.found {
		s = c.next(s.canon(&c.r))[i]
		violation = append(violation, fmt.Sprintf("t=%d %s", tick, s.lastAction))
		if s.lastAction == "tick" {
			tick++
		}
	}
	return c.states, append(violation, c.verdict(s))
}

// verdict says how the state miscounts x, or "" when it does not.
func (c *pwChecker) verdict(s pwState) string {
	if rd := s.rd; rd.phase == pwReadDone && (rd.count > 1 || (rd.landed && rd.count != 1)) {
		return fmt.Sprintf("=> a Value read one key at a time counts x %d, want %s", rd.count,
			map[bool]string{true: "1 (a copy landed before it began)", false: "at most 1"}[rd.landed])
	}
	got := s.value()
	if got <= 1 && (!s.landed || got == 1) {
		return ""
	}
	want := "at most 1"
	if s.landed {
		want = "1 (a copy landed)"
	}
	if s.acked {
		want = "1 (a call was acknowledged)"
	}
	return fmt.Sprintf("=> x counts %d, want %s", got, want)
}

func (c *pwChecker) explore(s pwState) {
	if c.found != nil {
		return
	}
	k := s.canon(&c.r)
	if c.canonChecks > 0 && c.canonBroken == "" {
		c.canonChecks--
		c.canonBroken = c.sameAsCanon(s, k)
	}
	if _, ok := c.visited[k]; ok {
		return
	}
	c.visited[k] = struct{}{}
	c.states++
	if c.verdict(k) != "" {
		c.found = append([]int(nil), c.path...)
		return
	}
	for i, n := range c.next(k) {
		c.path = append(c.path, i)
		c.explore(n)
		c.path = c.path[:len(c.path)-1]
	}
}

func pwWho(w int) string {
	if w == pwDead {
		return "d"
	}
	return string(rune('a' + w - 1))
}

// claimViews lists the sets of claims a read of rec(x) at t may see.
func (c *pwChecker) claimViews(s *pwState) []uint8 {
	var sure, maybe uint8
	for w, cl := range s.rec {
		switch {
		case cl.landed == pwNo:
		case cl.landed <= s.t-int8(c.r.D):
			sure |= 1 << w
		default:
			maybe |= 1 << w
		}
	}
	var out []uint8
	for sub := maybe; ; sub = (sub - 1) & maybe {
		out = append(out, sure|sub)
		if sub == 0 {
			break
		}
	}
	return out
}

// owners lists the owners a reader that sees the claims in v computes.
func (c *pwChecker) owners(s *pwState, v uint8) []int {
	var out []int
	best := pwNo
	for w := 0; w < pwWriters; w++ {
		if v&(1<<w) == 0 {
			continue
		}
		switch {
		case c.r.firstSeen:
			out = append(out, w)
		case c.r.leastID:
			if best == pwNo {
				best = w
			}
		default:
			if best == pwNo || s.rec[w].ts < s.rec[best].ts {
				best = w
			}
		}
	}
	if best != pwNo && !c.r.leastID && s.t < s.rec[best].ts+int8(c.r.F) {
		return nil // a claim with an earlier timestamp may still land
	}
	if best != pwNo {
		out = append(out, best)
	}
	return out
}

func viewString(v uint8) string {
	var names []string
	for w := 0; w < pwWriters; w++ {
		if v&(1<<w) != 0 {
			names = append(names, pwWho(w))
		}
	}
	if names == nil {
		return "no claim"
	}
	return "claims of " + strings.Join(names, ",")
}

// next lists every state one action away.
func (c *pwChecker) next(s pwState) []pwState {
	r := c.r
	t := s.t
	var out []pwState
	add := func(n pwState, format string, args ...any) {
		if c.tracing {
			n.lastAction = fmt.Sprintf(format, args...)
		}
		out = append(out, n)
	}
	// put sends w's memory; call is the call it carries, or pwNo.
	put := func(n *pwState, w int, call int8) {
		wr := &n.writers[w]
		wr.puts[wr.nPuts] = pwPut{x: wr.mem, ver: wr.nextVer, sent: t, call: call}
		wr.nPuts++
		wr.nextVer++
		if w == pwDead {
			n.dLast = t
		}
	}
	sendClaim := func(n *pwState, w int) {
		if n.rec[w].sent == pwNo && n.rec[w].landed == pwNo {
			n.rec[w].sent = t
		}
		if w == pwDead {
			n.dLast = t
		}
	}
	canCarry := func(wr *pwWriter) bool {
		return r.noDeadline || (wr.rd != pwNo && t <= wr.rd+int8(r.W))
	}

	// Calls.
	for i := 0; i < int(s.nCalls); i++ {
		cl := s.calls[i]
		read := func(w int, again string) {
			wr := &s.writers[w]
			if wr.owned || wr.mem == pwAnon || wr.mem == pwRetracted {
				n := s
				n.calls[i] = pwCall{phase: pwCallDone}
				add(n, "call %d at %s: %s settled x in memory, answers duplicate", i, pwWho(w), pwWho(w))
				return
			}
			for _, v := range c.claimViews(&s) {
				n := s
				if v != 0 {
					n.calls[i] = pwCall{phase: pwCallDone}
					add(n, "call %d at %s%s reads rec(x): %s, answers duplicate", i, pwWho(w), again, viewString(v))
					continue
				}
				n.calls[i] = pwCall{phase: pwCallRead, w: int8(w), f: t}
				n.writers[w].rd = t
				add(n, "call %d at %s%s reads rec(x): no claim", i, pwWho(w), again)
			}
		}
		switch cl.phase {
		case pwCallIdle:
			if i > 0 && s.calls[i-1].phase == pwCallIdle {
				break // calls are alike: they start in order
			}
			for w := 0; w < pwWriters; w++ {
				if !s.writers[w].crashed {
					read(w, "")
				}
			}
		case pwCallRead:
			w := int(cl.w)
			wr := &s.writers[w]
			switch {
			case wr.crashed:
				n := s
				n.calls[i].phase = pwCallDone
				add(n, "call %d ends: %s crashed", i, pwWho(w))
			case !r.noDeadline && t > cl.f+int8(r.W):
				read(w, " (its deadline passed)")
			case wr.owned || wr.mem == pwAnon || wr.mem == pwRetracted:
				n := s
				n.calls[i] = pwCall{phase: pwCallDone}
				add(n, "call %d at %s: %s settled x meanwhile, answers duplicate", i, pwWho(w), pwWho(w))
			case wr.nPuts < pwMaxPuts:
				n := s
				n.writers[w].mem = pwListed
				put(&n, w, int8(i))
				n.calls[i].phase = pwCallSent
				add(n, "call %d: %s puts K_%s v%d with x listed", i, pwWho(w), pwWho(w), n.writers[w].nextVer-1)
			}
		}
	}

	// Puts in flight land (acknowledged or not) or are lost.
	for w := 0; w < pwWriters; w++ {
		wr := &s.writers[w]
		for j := 0; j < int(wr.nPuts); j++ {
			p := wr.puts[j]
			land := func(n *pwState) {
				nw := &n.writers[w]
				copy(nw.puts[j:], nw.puts[j+1:])
				nw.nPuts--
				nw.puts[nw.nPuts] = pwPut{}
				if p.ver > nw.key.current().ver && nw.key.current().x != pwGone {
					nw.key.land(pwVersion{x: p.x, ver: p.ver, at: t})
					if p.x == pwListed {
						n.landed = true
					}
				}
			}
			acked := func(n *pwState) {
				if n.writers[w].crashed {
					return
				}
				if p.x == pwListed {
					n.writers[w].ackedCarry = true
				}
				if p.call != pwNo {
					n.calls[p.call].phase = pwCallDone
					n.acked = true
					sendClaim(n, w)
				}
			}
			endCall := func(n *pwState) {
				if p.call != pwNo {
					n.calls[p.call].phase = pwCallDone
				}
			}
			n := s
			land(&n)
			acked(&n)
			endCall(&n)
			what := ""
			if p.call != pwNo && !s.writers[w].crashed {
				what = fmt.Sprintf(": call %d acknowledged, %s sends its claim", p.call, pwWho(w))
			}
			add(n, "K_%s v%d (%s) lands, acknowledged%s", pwWho(w), p.ver, pwXNames[p.x], what)
			if p.x == pwListed || p.call != pwNo {
				n = s
				land(&n)
				endCall(&n)
				add(n, "K_%s v%d (%s) lands, its acknowledgement is lost", pwWho(w), p.ver, pwXNames[p.x])
			}
			n = s
			land(&n)
			n.writers[w].key = s.writers[w].key
			n.landed = s.landed
			endCall(&n)
			add(n, "K_%s v%d (%s) is lost", pwWho(w), p.ver, pwXNames[p.x])
		}
		if cl := s.rec[w]; cl.sent != pwNo {
			n := s
			n.rec[w].sent = pwNo
			if n.rec[w].landed == pwNo {
				n.rec[w].landed, n.rec[w].ts = t, cl.sent
			}
			add(n, "the claim of %s lands in rec(x)", pwWho(w))
			n = s
			n.rec[w].sent = pwNo
			add(n, "the claim of %s is lost", pwWho(w))
		}
	}

	// Writers' own steps.
	for w := 0; w < pwWriters; w++ {
		wr := &s.writers[w]
		if wr.crashed {
			continue
		}
		// A put of w's memory (another transaction's, carrying x).
		newest := wr.key.current().x
		if wr.nPuts > 0 {
			newest = wr.puts[wr.nPuts-1].x
		}
		if wr.nPuts < pwMaxPuts && wr.mem != pwAbsent &&
			wr.mem != newest &&
			(wr.mem != pwListed || wr.owned || canCarry(wr)) {
			n := s
			put(&n, w, pwNo)
			add(n, "%s puts K_%s v%d (%s)", pwWho(w), pwWho(w), n.writers[w].nextVer-1, pwXNames[wr.mem])
		}
		if wr.mem == pwListed && r.noSettle {
			n := s
			n.writers[w].mem = pwAnon
			add(n, "%s drops x's id without reading rec(x)", pwWho(w))
		}
		// Settling.
		if wr.mem == pwListed && !wr.owned && !r.noSettle {
			for _, v := range c.claimViews(&s) {
				if v == 0 {
					n := s
					n.writers[w].rd = t
					if wr.ackedCarry || r.claimUnacked {
						sendClaim(&n, w)
					}
					if n != s {
						add(n, "%s reads rec(x): no claim (claims: %v)", pwWho(w), wr.ackedCarry || r.claimUnacked)
					}
					continue
				}
				for _, o := range c.owners(&s, v) {
					n := s
					if o == w {
						n.writers[w].owned, n.writers[w].ownedAt = true, t
						if r.noScan {
							n.writers[w].mem = pwAnon
						}
					} else {
						n.writers[w].mem = pwRetracted
					}
					add(n, "%s settles: rec(x) shows %s, owner %s", pwWho(w), viewString(v), pwWho(o))
				}
			}
		}
		// Dropping the id after the scan.
		if wr.mem == pwListed && wr.owned && !r.noScan && t >= wr.ownedAt+int8(r.A) {
			ok := true
			for v := 0; v < pwWriters; v++ {
				if v == w {
					continue
				}
				seen := false
				for _, ver := range s.writers[v].key.readable() {
					if ver.x != pwListed {
						seen = true
					}
				}
				ok = ok && seen
			}
			if s.totalListed || (s.tomb && s.tombX == pwListed) {
				ok = false
			}
			if ok && wr.scanAt == pwNo {
				n := s
				n.writers[w].scanAt = t
				add(n, "%s reads the other keys: none lists x", pwWho(w))
			}
		}
		if wr.mem == pwListed && wr.owned && wr.scanAt != pwNo && t >= wr.scanAt+int8(r.H) {
			n := s
			n.writers[w].mem = pwAnon
			add(n, "%s drops x's id: x anonymous in memory", pwWho(w))
		}
	}
	if !s.writers[pwDead].crashed {
		n := s
		n.writers[pwDead].crashed = true
		add(n, "d crashes")
	}

	// Reclaiming d.
	if d := &s.writers[pwDead]; d.crashed && s.rPhase == pwRIdle && int(s.rounds) < r.Reclaims &&
		t >= s.dLast+int8(r.R) {
		if s.tomb {
			n := s
			n.rounds++
			n.rPhase, n.delSent = pwRDelSent, t
			add(n, "a reclaimer reads B: d's tombstone; it deletes K_d")
		}
		if !s.tomb || s.tombAt > t-int8(r.D) {
			for _, kv := range d.key.readable() {
				base := s
				base.rounds++
				if kv.x == pwGone {
					add(base, "a reclaimer reads K_d: deleted")
					continue
				}
				sendB := func(n pwState, x int8, why string) {
					n.rPhase, n.rSent, n.rVer, n.rX = pwRBSent, t, kv.ver, x
					add(n, "a reclaimer reads K_d v%d (%s)%s; it puts B: tombstone of d v%d, %s", kv.ver, pwXNames[kv.x], why, kv.ver, pwXNames[x])
				}
				switch kv.x {
				case pwListed:
					for _, v := range c.claimViews(&s) {
						if v == 0 {
							n := base
							sendClaim(&n, pwDead)
							add(n, "a reclaimer reads K_d v%d (x listed), rec(x): no claim; it claims x for d", kv.ver)
							continue
						}
						for _, o := range c.owners(&s, v) {
							x := int8(pwAbsent)
							if o == pwDead {
								x = pwListed
								if r.reclaimToAnon {
									x = pwAnon
								}
							}
							sendB(base, x, fmt.Sprintf(", rec(x): %s, owner %s", viewString(v), pwWho(o)))
						}
					}
				case pwAnon:
					sendB(base, pwAnon, "")
				default:
					sendB(base, pwAbsent, "")
				}
			}
		}
	}
	if s.rPhase == pwRBSent {
		land := func(n *pwState) {
			if r.noTomb {
				switch n.rX {
				case pwListed:
					n.totalListed = true
				case pwAnon:
					n.totalAnon++
				}
				return
			}
			if !n.tomb || n.rVer > n.tombVer || (n.rVer == n.tombVer && n.rX > n.tombX) {
				n.tomb, n.tombVer, n.tombX, n.tombAt = true, n.rVer, n.rX, t
			}
		}
		n := s
		land(&n)
		n.rPhase, n.delSent = pwRDelSent, t
		add(n, "B lands, acknowledged; the reclaimer deletes K_d")
		n = s
		land(&n)
		n.rPhase = pwRIdle
		add(n, "B lands, its acknowledgement is lost")
		n = s
		n.rPhase = pwRIdle
		add(n, "B is lost")
	}
	if s.rPhase == pwRDelSent {
		n := s
		n.rPhase = pwRIdle
		d := &n.writers[pwDead]
		if d.key.current().x != pwGone {
			d.key.land(pwVersion{x: pwGone, ver: pwGoneVer, at: t})
		}
		add(n, "the delete of K_d lands")
	}
	if s.tomb && s.delSent != pwNo && t >= s.delSent+int8(r.G) {
		n := s
		n.tomb = false
		switch s.tombX {
		case pwListed:
			n.totalListed = true
		case pwAnon:
			n.totalAnon++
		}
		n.tombVer, n.tombX, n.tombAt = pwNo, pwNo, pwNo
		add(n, "B's tombstone of d is collected")
	}

	// The Value read, one key at a time.
	if r.Reader && s.rd.phase == pwReadIdle {
		n := s
		n.rd = pwReader{phase: pwReading, start: t, landed: s.landed}
		add(n, "a Value read begins")
	}
	if s.rd.phase == pwReading {
		for key := 0; key <= pwWriters; key++ {
			if s.rd.mask&(1<<key) != 0 {
				continue
			}
			if key == pwWriters && s.rd.mask != 1<<pwWriters-1 && !r.readBFirst {
				continue // B is read last
			}
			n := s
			rd := &n.rd
			rd.mask |= 1 << key
			var what string
			switch {
			case key == pwWriters:
				rd.b = pwBView{s.tomb, s.tombVer, s.tombX, s.totalListed, s.totalAnon}
				what = "B"
			default:
				c := s.writers[key].key.current()
				what = fmt.Sprintf("K_%s (%s)", pwWho(key), pwXNames[c.x])
				if key == pwDead {
					rd.dX, rd.dVer = c.x, c.ver
				} else {
					rd.listed = rd.listed || c.x == pwListed
					rd.anon += b2i(c.x == pwAnon)
				}
			}
			if rd.mask == 1<<(pwWriters+1)-1 {
				rd.finish()
				what += fmt.Sprintf("; it counts x %d", rd.count)
			}
			add(n, "the Value read reads %s", what)
		}
	}

	// Time passes only when no write would outlive its bound L, and no
	// Value read its bound V.
	if s.rd.phase == pwReading && t+1 > s.rd.start+int8(r.V) {
		return out
	}
	late := func(sent int8) bool { return sent != pwNo && t+1 > sent+int8(r.L) }
	for w := range s.writers {
		for _, p := range s.writers[w].puts[:s.writers[w].nPuts] {
			if late(p.sent) {
				return out
			}
		}
		if late(s.rec[w].sent) {
			return out
		}
	}
	if (s.rPhase == pwRBSent && late(s.rSent)) || (s.rPhase == pwRDelSent && late(s.delSent)) {
		return out
	}
	n := s
	n.t++
	for w := range n.writers {
		n.writers[w].key.age(n.t, int8(r.D))
	}
	add(n, "tick")
	return out
}

// perWriterScope is the scope of both tests: W = 2, L = 2, D = 1, where
// every bound is tight; small, the scope TestPerWriterDesign checks by
// default, W = L = D = 1 (COUNTERKIT_CASES checks W = 2, L = 2 with two
// reclaims).
func perWriterScope(short bool) perWriterRules {
	r := perWriterRules{W: 2, L: 2, D: 1, Calls: 2, Reclaims: 1}
	switch {
	case large():
		r.Reclaims = 2
	case short:
		r.W, r.L = 1, 1
	}
	r.F = r.L + r.D
	r.A = r.W + r.L + r.D - 1
	r.R = r.L + r.D
	r.G = r.L + r.D
	return r
}

// perWriterReaderScopes are the scopes of a Value read one key at a time
// that takes up to V: two copies of x on the live writers (one retracts,
// the other drops its id), and one copy on the writer that is reclaimed.
// H = V + 1 and G = L + D + V. short leaves out "two copies" (the default
// of TestPerWriterDesignReader; its broken variants take "two copies"
// from the scopes without short).
func perWriterReaderScopes(short bool) map[string]perWriterRules {
	scope := func(calls, reclaims, v int) perWriterRules {
		r := perWriterRules{W: 1, L: 1, D: 1, Calls: calls, Reclaims: reclaims, Reader: true, V: v}
		r.F = r.L + r.D
		r.A = r.W + r.L + r.D - 1
		r.R = r.L + r.D
		r.G = r.L + r.D + r.V
		r.H = r.V + 1
		return r
	}
	scopes := map[string]perWriterRules{"reclaimed": scope(1, 1, 1)}
	if !short {
		scopes["two copies"] = scope(2, 0, 0) // 1.2M states with V = 1
	}
	if large() {
		if !short {
			scopes["two copies, V = 0"] = scopes["two copies"]
		}
		scopes["two copies"] = scope(2, 0, 1)
		scopes["both"] = scope(2, 1, 1)
	}
	return scopes
}

// perWriterReaderScopeNames are the names of perWriterReaderScopes, in order.
var perWriterReaderScopeNames = []string{"reclaimed", "two copies, V = 0", "two copies", "both"}

func (r perWriterRules) String() string {
	reader := ""
	if r.Reader {
		reader = fmt.Sprintf(", a Value read of at most V=%d, H=%d", r.V, r.H)
	}
	return fmt.Sprintf("W=%d L=%d D=%d F=%d A=%d R=%d G=%d, %d calls, %d reclaims%s",
		r.W, r.L, r.D, r.F, r.A, r.R, r.G, r.Calls, r.Reclaims, reader)
}

// TestPerWriterDesign checks the protocol at W = L = D = 1 (perWriterScope
// small); under COUNTERKIT_CASES at its bounds, W = 2, L = 2, D = 1, where
// every bound is tight, with two reclaims. It runs on one goroutine: the
// race pass (-short) leaves it to the full pass.
func TestPerWriterDesign(t *testing.T) {
	testsize.SkipSequential(t)
	r := perWriterScope(!large())
	states, v := checkPerWriter(r)
	if v != nil {
		t.Fatalf("%v: %d states, x miscounted:\n%s", r, states, strings.Join(v, "\n"))
	}
	t.Logf("%v: %d states, x counted once from its first landing in each", r, states)
}

// TestPerWriterDesignBroken shows each rule is needed: without it the
// search finds a schedule that counts x twice, or not at all once a copy
// landed. It runs on one goroutine: the race pass (-short) leaves it to
// the full pass.
func TestPerWriterDesignBroken(t *testing.T) {
	testsize.SkipSequential(t)
	for _, tc := range []struct {
		name   string
		break_ func(*perWriterRules)
	}{
		{"no settle read before dropping the id", func(r *perWriterRules) { r.noSettle = true }},
		{"no deadline on the put after the read", func(r *perWriterRules) { r.noDeadline = true }},
		{"reclaim without tombstone", func(r *perWriterRules) { r.noTomb = true }},
		{"tombstone collected one tick early", func(r *perWriterRules) { r.G-- }},
		{"owner is the first claim the reader saw", func(r *perWriterRules) { r.firstSeen = true }},
		{"owner is the least writer id, taken at once", func(r *perWriterRules) { r.leastID = true }},
		{"owner taken one tick before it is final", func(r *perWriterRules) { r.F-- }},
		{"id dropped without the scan", func(r *perWriterRules) { r.noScan = true }},
		{"scan one tick early", func(r *perWriterRules) { r.A-- }},
		{"reclaim one tick early", func(r *perWriterRules) { r.R-- }},
		{"claim for a copy never acknowledged", func(r *perWriterRules) { r.claimUnacked = true }},
		{"reclaim moves x into B anonymous", func(r *perWriterRules) { r.reclaimToAnon = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := perWriterScope(false)
			tc.break_(&r)
			states, v := checkPerWriter(r)
			if v == nil {
				t.Fatalf("%v: %d states, no schedule miscounts x", r, states)
			}
			t.Logf("%v: after %d states:\n%s", r, states, strings.Join(v, "\n"))
		})
	}
}

// TestPerWriterCanon checks the search's one abstraction on the first
// states it meets (with a Value read one key at a time): a state and its canon (times shifted to pwNow, those no
// rule can tell apart merged) have the same verdict and the same
// successors. A canon that forgets a writer's read of rec(x) one tick
// early is caught. It runs on one goroutine: the race pass (-short)
// leaves it to the full pass.
func TestPerWriterCanon(t *testing.T) {
	testsize.SkipSequential(t)
	for _, early := range []int8{0, 1} {
		r := perWriterReaderScopes(true)["reclaimed"]
		r.canonEarly = early
		c := &pwChecker{r: r, visited: map[pwState]struct{}{}, canonChecks: 20000}
		c.explore(pwStart(r))
		switch {
		case early == 0 && c.canonBroken != "":
			t.Fatalf("%v: %s", r, c.canonBroken)
		case early == 1 && c.canonBroken == "":
			t.Fatalf("%v: a canon that forgets reads early passed", r)
		}
		t.Logf("%v, canon forgetting reads %d tick(s) early: %d states, %q", r, early, c.states, c.canonBroken)
	}
}

// TestPerWriterDesignReader checks a Value read that reads the keys one
// after another within V: reading B last, with the owner dropping x's id
// H = V + 1 after the scan that allows it and B's tombstones kept
// G = L + D + V, it counts x as the atomic reader does; each of the three
// rules broken finds a read that counts x twice or not at all. By default
// it checks scope "reclaimed"; COUNTERKIT_CASES adds "two copies" (with
// V = 0, and V = 1: 1.2M states) and "both" (perWriterReaderScopes). It
// runs on one goroutine: the race pass (-short) leaves it to the full
// pass.
func TestPerWriterDesignReader(t *testing.T) {
	testsize.SkipSequential(t)
	scopes := perWriterReaderScopes(!large())
	for _, name := range perWriterReaderScopeNames {
		r, ok := scopes[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			states, v := checkPerWriter(r)
			if v != nil {
				t.Fatalf("%v: %d states, x miscounted:\n%s", r, states, strings.Join(v, "\n"))
			}
			t.Logf("%v: %d states, every read counts x as the atomic reader does", r, states)
		})
	}
	for _, tc := range []struct {
		name, scope string
		break_      func(*perWriterRules)
	}{
		{"id dropped V after the scan", "two copies", func(r *perWriterRules) { r.H-- }},
		{"tombstone collected one tick early", "reclaimed", func(r *perWriterRules) { r.G-- }},
		{"B read first", "reclaimed", func(r *perWriterRules) { r.readBFirst = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := perWriterReaderScopes(false)[tc.scope]
			tc.break_(&r)
			states, v := checkPerWriter(r)
			if v == nil {
				t.Fatalf("%v: %d states, no read miscounts x", r, states)
			}
			t.Logf("%v: after %d states:\n%s", r, states, strings.Join(v, "\n"))
		})
	}
}
