package vectors

// Generated states in driver vectors (SPEC.md 11.1, "Generated states";
// testdata/vectors/README.md): a ledger state above store.MaxValue (8 MiB)
// cannot be listed in a vector. A vector may give recipes for entries
// (`generated`); a state marked `"generated": true` holds their entries
// besides those it lists, and a sibling or put of such a state gives its
// bytes by `value_sha256` and `value_len` instead of `value`. In memory a
// state always holds every entry: dvVector.UnmarshalJSON expands the
// recipes, and dvState.MarshalJSON leaves out the entries they stand for.

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/counterkit/counterkit/store"
	"github.com/counterkit/counterkit/tpncounter"
)

// dvGen is a recipe for entries of a ledger state: one live entry per id of
// Actors in half ("p" or "n"), each holding in its history one transaction
// per id of Txns, named by the actor id followed by that id, oldest first,
// each of Amount; seq is the number of transactions, total and forgot 0,
// the folded record empty.
type dvGen struct {
	Half   string  `json:"half"`
	Actors idRange `json:"actors"`
	Txns   idRange `json:"txns"`
	Amount dvInt   `json:"amount"`
}

var dvGenMemo sync.Map // dvGen -> []dvEntry

// entries returns the entries g stands for, sorted by actor. The slices
// are shared between callers and clipped, so an append copies them.
func (g dvGen) entries() []dvEntry {
	if es, ok := dvGenMemo.Load(g); ok {
		return es.([]dvEntry)
	}
	txns := g.Txns.ids()
	es := make([]dvEntry, 0, g.Actors.Count)
	for _, a := range g.Actors.ids() {
		h := make([]dvTxn, len(txns))
		for i, t := range txns {
			h[i] = dvTxn{Txn: a + t, Amount: g.Amount}
		}
		es = append(es, dvEntry{Actor: a, Seq: strconv.Itoa(len(txns)), History: h, Folded: []dvTxn{}})
	}
	es = slices.Clip(es)
	dvGenMemo.Store(g, es)
	return es
}

func (g dvGen) check() error {
	switch {
	case g.Half != "p" && g.Half != "n":
		return fmt.Errorf("generated: half %q", g.Half)
	case g.Actors.Count < 1 || g.Txns.Count < 1 || g.Txns.Count > 1025:
		return fmt.Errorf("generated: %d actors of %d transactions", g.Actors.Count, g.Txns.Count)
	case g.Amount <= 0:
		return fmt.Errorf("generated: amount %d", g.Amount)
	}
	return nil
}

// dvStateJSON is dvState without its JSON methods.
type dvStateJSON dvState

// MarshalJSON writes s with the entries its recipes stand for left out.
func (s dvState) MarshalJSON() ([]byte, error) {
	if s.Generated {
		gen := map[string]bool{}
		for _, g := range s.gen {
			for _, e := range g.entries() {
				gen[strings.ToUpper(g.Half)+"/"+e.Actor] = true
			}
		}
		keep := func(half string, es []dvEntry) []dvEntry {
			rest := make([]dvEntry, 0, len(es))
			for _, e := range es {
				if !gen[half+"/"+e.Actor] {
					rest = append(rest, e)
				}
			}
			return rest
		}
		s.P, s.N = keep("P", s.P), keep("N", s.N)
	}
	return json.Marshal(dvStateJSON(s))
}

// dvVectorJSON is dvVector without its JSON methods.
type dvVectorJSON dvVector

// UnmarshalJSON reads a vector and adds the entries of its recipes to
// every state marked generated.
func (v *dvVector) UnmarshalJSON(b []byte) error {
	var x dvVectorJSON
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*v = dvVector(x)
	for _, g := range v.Generated {
		if err := g.check(); err != nil {
			return fmt.Errorf("vector %q: %v", v.Name, err)
		}
	}
	expand := func(s *dvState) error {
		if s == nil || !s.Generated {
			return nil
		}
		if len(v.Generated) == 0 {
			return fmt.Errorf("vector %q: a generated state, but the vector gives no recipe", v.Name)
		}
		return s.expand(v.Generated)
	}
	for _, sb := range v.InitialSiblings {
		if err := expand(sb.State); err != nil {
			return err
		}
	}
	for _, st := range v.Steps {
		for _, c := range st.Calls {
			if err := expand(c.State); err != nil {
				return err
			}
			for _, sb := range c.Siblings {
				if err := expand(sb.State); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// expand adds the entries of recipes gs to s's halves and marks s
// generated.
func (s *dvState) expand(gs []dvGen) error {
	s.Generated, s.gen = true, gs
	for _, g := range gs {
		half := &s.P
		if g.Half == "n" {
			half = &s.N
		}
		*half = append(slices.Clone(*half), g.entries()...)
		slices.SortFunc(*half, func(a, b dvEntry) int { return strings.Compare(a.Actor, b.Actor) })
		for i := 1; i < len(*half); i++ {
			if (*half)[i].Actor == (*half)[i-1].Actor {
				return fmt.Errorf("generated: actor %q twice in %s", (*half)[i].Actor, g.Half)
			}
		}
	}
	return nil
}

// dvGenState is the state of recipes gs and the explicit entries of x,
// with its value (every transaction counted once).
func dvGenState(x dvState, gs ...dvGen) *dvState {
	s := x
	s.P, s.N = slices.Clone(x.P), slices.Clone(x.N)
	if s.P == nil {
		s.P = []dvEntry{}
	}
	if s.N == nil {
		s.N = []dvEntry{}
	}
	if err := s.expand(gs); err != nil {
		panic(err)
	}
	es := dvEntries{}
	es.add(&s)
	s.Value = dvInt(es.value())
	return &s
}

// dvCompactState marks s generated when it holds every entry of recipes
// gs unchanged; it reports whether it does.
func dvCompactState(s *dvState, gs []dvGen) bool {
	if s == nil || len(gs) == 0 {
		return false
	}
	for _, g := range gs {
		half := s.P
		if g.Half == "n" {
			half = s.N
		}
		at := make(map[string]int, len(half))
		for i, e := range half {
			at[e.Actor] = i
		}
		for _, w := range g.entries() {
			i, ok := at[w.Actor]
			if !ok || !dvSameEntry(half[i], w) {
				return false
			}
		}
	}
	s.Generated, s.gen = true, gs
	return true
}

func dvSameEntry(a, b dvEntry) bool {
	return a.Actor == b.Actor && a.Seq == b.Seq && a.Total == b.Total && a.Forgot == b.Forgot && a.Retired == b.Retired &&
		a.RetiredAt == b.RetiredAt && slices.Equal(a.History, b.History) && slices.Equal(a.Folded, b.Folded)
}

// dvSHA is the lowercase hex SHA-256 of b.
func dvSHA(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// dvBytes returns the bytes of a sibling or put: value, or, in the
// generated form (sha set), the encoding of its state, which must have
// that SHA-256 and length.
func dvBytes(value, sha string, n int, s *dvState) ([]byte, error) {
	if sha == "" {
		return dvUnhex(value), nil
	}
	if s == nil {
		return nil, fmt.Errorf("value_sha256 without a state")
	}
	b, err := dvEncState(s)
	if err != nil {
		return nil, err
	}
	if len(b) != n || dvSHA(b) != sha {
		return nil, fmt.Errorf("the state encodes to %d bytes of SHA-256 %s, not value_len %d and value_sha256 %s", len(b), dvSHA(b), n, sha)
	}
	return b, nil
}

// dvScratch is the buffer states are encoded into to be measured or
// hashed only: an 8 MiB state encoded again and again into fresh memory
// costs the race detector dearly.
var dvScratch struct {
	sync.Mutex
	b []byte
}

// dvMeasure returns the length and SHA-256 of s's encoding.
func dvMeasure(s *dvState) (int, string, error) {
	dvScratch.Lock()
	defer dvScratch.Unlock()
	b, err := dvEncStateTo(dvScratch.b, s)
	if err != nil {
		return 0, "", err
	}
	dvScratch.b = b
	return len(b), dvSHA(b), nil
}

// dvVerify checks that s encodes to n bytes of SHA-256 sha.
func dvVerify(sha string, n int, s *dvState) error {
	if s == nil {
		return fmt.Errorf("value_sha256 without a state")
	}
	size, got, err := dvMeasure(s)
	if err != nil {
		return err
	}
	if size != n || got != sha {
		return fmt.Errorf("the state encodes to %d bytes of SHA-256 %s, not value_len %d and value_sha256 %s", size, got, n, sha)
	}
	return nil
}

// dvValueKey identifies a value for the model store: its hex, or its
// SHA-256 and length.
func dvValueKey(value, sha string, n int) string {
	if sha == "" {
		return value
	}
	return fmt.Sprintf("sha256:%s/%d", sha, n)
}

// dvBigSibling is an initial sibling holding the state of recipes gs and
// the explicit entries of x, in the generated form.
func dvBigSibling(x dvState, gs ...dvGen) dvSibling {
	s := dvGenState(x, gs...)
	b, err := dvEncState(s)
	if err != nil {
		panic(err)
	}
	return dvSibling{State: s, ValueSHA256: dvSHA(b), ValueLen: len(b)}
}

// dvEntriesSize is the length of the encoding of entries m (SPEC.md 6.7),
// each entry with the seq m gives it (1 for an entry the model created).
// Below 128 a seq takes one byte, so the length does not depend on it.
func dvEntriesSize(m dvEntries) (int, error) {
	var s dvState
	for k, e := range m {
		half, actor, _ := strings.Cut(k, "/")
		if actor == "" {
			b := &dvBase{Cutoff: e.RetiredAt, Total: e.Total, Forgot: e.Forgot}
			if half == "P" {
				s.PBase = b
			} else {
				s.NBase = b
			}
			continue
		}
		e.Actor = actor
		if e.Seq == "" {
			e.Seq = "1"
		}
		if half == "P" {
			s.P = append(s.P, e)
		} else {
			s.N = append(s.N, e)
		}
	}
	n, _, err := dvMeasure(&s)
	return n, err
}

// retract takes txn out of the history of the entry key (tpncounter
// Retract, SPEC.md 6.9: the actor's own copy leaves its history).
func (m dvEntries) retract(key, txn string) {
	e, ok := m[key]
	if !ok {
		return
	}
	e.History = slices.DeleteFunc(slices.Clone(e.History), func(x dvTxn) bool { return x.Txn == txn })
	m[key] = e
}

// dvCap is the ledger's MaxEncodedSize (SPEC.md 6.9): store.MaxValue less
// the room for a write's own changes, 36 bytes for each of MaxActors + 1
// entries and 64 (the vectors' MaxActors is the default).
const dvCap = store.MaxValue - (36*(tpncounter.DefaultMaxActors+1) + 64)

// dvApplyFits is SPEC.md 6.3 step 3's size cap at the ledger's
// MaxEncodedSize (dvCap): Apply of txn by actor to next is refused
// too_large when the halves' bodies (the encoding less its header) and
// len(actor) + len(txn) + 59 bytes pass dvCap − 64.
func (m *dvModel) dvApplyFits(next dvEntries, actor, txn string) bool {
	size, err := dvEntriesSize(next)
	if err != nil {
		m.bad("model: the state does not encode: %v", err)
		return true
	}
	return size-dvHeaderLen()+len(actor)+len(txn)+59 <= dvCap-64
}

// dvActorsFit is 6.2's MaxActors in Apply: a new live entry of actor in
// half of next is refused too_large while the half holds MaxActors live
// entries, those of actors in retired (retired by this write) aside.
func (m *dvModel) dvActorsFit(next dvEntries, half, actor string, retired map[string]bool) bool {
	if e, ok := next[half+"/"+actor]; ok && !e.Retired {
		return true
	}
	n := 0
	for k, e := range next {
		if h, a, _ := strings.Cut(k, "/"); h == half && !e.Retired && !retired[a] {
			n++
		}
	}
	return n < cmp.Or(m.v.Options.MaxActors, tpncounter.DefaultMaxActors)
}

// dvHeaderLen is the length of a tpncounter encoding less its halves'
// bodies: the envelope and the body's array header (an empty state's two
// bodies are one byte each).
var dvHeaderLen = sync.OnceValue(func() int {
	b, err := dvEncState(&dvState{})
	if err != nil {
		panic(err)
	}
	return len(b) - 2
})

// dvLongTxn is a transaction id of n bytes: name, ".", then "x"s.
func dvLongTxn(name string, n int) string {
	return name + "." + strings.Repeat("x", n-len(name)-1)
}

// dvBulk is the bulk of the states of the "too large" vectors: 31 actors
// holding 1000 transactions each and one holding k, every id 254 bytes.
func dvBulk(k int) []dvGen {
	txns := func(n int) idRange { return idRange{Prefix: ".", First: 1, Count: n, Width: 250} }
	return []dvGen{
		{Half: "p", Actors: idRange{Prefix: "g", First: 1, Count: 31, Width: 2}, Txns: txns(1000), Amount: 1},
		{Half: "p", Actors: idRange{Prefix: "h", First: 1, Count: 1, Width: 2}, Txns: txns(k), Amount: 1},
	}
}

// dvTooLarge builds a "too large" vector: writer a~aaaaaaaa's initial
// sibling is the bulk, and one group step credits first (alone), then
// rest (one group). The bulk and first's length are chosen so that the
// state with first and the first fit transactions of rest has halves'
// bodies of dvCap − 170 bytes, give or take 17. Each rest member (a
// 64-byte id: 68 bytes, 133 with the cap's bound) after those passes the
// cap (dvCap − 64) by 27 ± 17 bytes and the ones before fit by 41 ∓ 17,
// while
// the exact size after the Apply, or a bound without the 64 bytes kept
// for the header, would admit one more.
func dvTooLarge(name, note string, o dvOptions, first string, rest []string, fit int, steps ...dvStep) dvVector {
	const writer = "a~aaaaaaaa"
	size := func(k, l0, n int) int {
		own := dvEntry{Actor: writer, Seq: strconv.Itoa(n + 1), History: []dvTxn{{dvLongTxn(first, l0), 1}}, Folded: []dvTxn{}}
		for _, t := range rest {
			if len(own.History) == n+1 {
				break
			}
			if !slices.ContainsFunc(own.History, func(x dvTxn) bool { return x.Txn == t }) {
				own.History = append(own.History, dvTxn{t, 1})
			}
		}
		b, err := dvEncState(dvGenState(dvState{P: []dvEntry{own}}, dvBulk(k)...))
		if err != nil {
			panic(err)
		}
		return len(b) - dvHeaderLen()
	}
	// The size is linear in k (258 bytes a transaction) and in l0 from 32
	// (a str 8 header) to 255.
	target := dvCap - 170
	s1, s2 := size(1, 32, fit), size(2, 32, fit)
	step := s2 - s1
	// l0 reaches 224 of each k's 258 bytes: within 17 of target always.
	k, l0 := 0, 0
	for k0 := 1 + (target-s1)/step; k == 0 && k0 > 1+(target-s1)/step-2; k0-- {
		x := min(max(32+target-(s1+(k0-1)*step), 32), 255)
		if got := size(k0, x, fit); got != target {
			x = min(max(x+target-got, 32), 255)
		}
		if got := size(k0, x, fit); got >= target-17 && got <= target+17 {
			k, l0 = k0, x
		}
	}
	if k == 0 {
		panic(name + ": no bulk fits")
	}
	members := []dvStep{dvMemberOf("credit", dvLongTxn(first, l0), 1)}
	for _, t := range rest {
		members = append(members, dvMemberOf("credit", t, 1))
	}
	return dvVector{Name: name, Note: note, Options: o, Ledgers: dvLedgersABC[:1],
		InitialSiblings: []dvSibling{dvBigSibling(dvState{}, dvBulk(k)...)}, Generated: dvBulk(k),
		Steps: append([]dvStep{dvGroup("a", members)}, steps...)}
}

// dvLedgerTooLargeVectors are the vectors of the size cap on a group's
// members (SPEC.md 6.3 step 3, 6.9): the key holds a generated state just
// under 8 MiB (11.1, "Generated states"); group members carry 64-byte
// transaction ids, so each adds 68 bytes.
func dvLedgerTooLargeVectors(opts func(retries, h, f int) dvOptions) []dvVector {
	o := opts(2, 10, 10)
	o.RetireAfterNS = dvI(-1) // no retirement pass: no record lookups of the bulk's actors
	t := func(name string) string { return dvLongTxn(name, 64) }
	return []dvVector{
		dvTooLarge("group: too large for the store: the last member refused",
			"the key holds a generated state just under store.MaxValue (8 MiB). q0 runs alone and lands; q1, q2 and q3 queue as one group. The ledger's counter caps Apply at store.MaxValue (6.3 step 3): q1 and q2 fit, q3 does not (too_large, no outcome, nothing changed) and one put carries q1 and q2",
			o, "q0", []string{t("q1"), t("q2"), t("q3")}, 2),
		dvTooLarge("group: too large for the store: a later member of a refused transaction",
			"as above, with q1, q2, q2 again and q3 queued: q1 fits; q2 does not, nor does the second q2 (not a duplicate: the first was never applied), nor q3, each too_large; the put carries q1 alone",
			o, "q0", []string{t("q1"), t("q2"), t("q2"), t("q3")}, 1),
		dvTooLarge("group: too large for the store: no member fits",
			"q1 and q2 queue behind q0; neither fits (too_large): nothing is put, nothing pending, and the value is q0's",
			o, "q0", []string{t("q1"), t("q2")}, 0, dvLedgerOp("value", "a")),
		{Name: "too large for the store: a put refused", Options: opts(2, 10, 10), Ledgers: dvLedgersABC[:1],
			Note:  "the store refuses the put for what the value is (reply too_large, nothing written; a store may accept less than store.MaxValue): no retry, since such a refusal cannot change. The credit fails too_large after one attempt, taken back out, nothing pending; the next credit is written",
			Steps: []dvStep{dvCredit("a", "r1", 5, "", "too_large"), dvCredit("a", "r2", 7), dvLedgerOp("value", "a")}},
	}
}

// bytes returns the bytes a recorded call wrote: raw, or its hex value.
func (c dvCall) bytes() []byte {
	if c.raw != nil {
		return c.raw
	}
	return dvUnhex(c.Value)
}

// bytes returns the bytes of a recorded sibling: raw, or its hex value.
func (sb dvSibling) bytes() []byte {
	if sb.raw != nil {
		return sb.raw
	}
	return dvUnhex(sb.Value)
}

// dvEntryPrint identifies an entry's content (the model's check that one
// seq stands for one content) without writing it out: its FNV-1a-64.
func dvEntryPrint(e dvEntry) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%d\x00%v\x00%d\x00%d\x00", e.Actor, e.Seq, e.Total, e.Forgot, e.Retired, e.RetiredAt, len(e.History))
	var buf []byte
	for _, list := range [][]dvTxn{e.History, e.Folded} {
		for _, x := range list {
			buf = append(append(buf[:0], x.Txn...), 0)
			buf = append(strconv.AppendInt(buf, int64(x.Amount), 10), 0)
			h.Write(buf)
		}
		h.Write([]byte{1}) // the history ends
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// dvReplaceAll replaces every from[i] in b by to[i]. It copies b only when
// b holds one of them, and in place when each pair has one length (the
// writer ids of a vector and of a replay do), since values are up to 8 MiB.
func dvReplaceAll(b []byte, from, to [][]byte) []byte {
	found, same := false, true
	for i := range from {
		found = found || bytes.Contains(b, from[i])
		same = same && len(from[i]) == len(to[i]) && len(from[i]) > 0
	}
	if !found {
		return b
	}
	if !same {
		for i := range from {
			b = bytes.ReplaceAll(b, from[i], to[i])
		}
		return b
	}
	out := slices.Clone(b)
	for i := range from {
		for at := 0; ; {
			k := bytes.Index(out[at:], from[i])
			if k < 0 {
				break
			}
			copy(out[at+k:], to[i])
			at += k + len(to[i])
		}
	}
	return out
}

// dvShowTxnDiff shows a put's transactions against the model's: both maps
// when small, else what differs (a state may hold 32,000 of them).
func dvShowTxnDiff(written, want map[string]int64) string {
	if len(written) <= 64 && len(want) <= 64 {
		return fmt.Sprintf("%v, want %v", written, want)
	}
	var extra, missing []string
	for t, a := range written {
		if w, ok := want[t]; !ok || w != a {
			extra = append(extra, fmt.Sprintf("%s:%d", t, a))
		}
	}
	for t, a := range want {
		if w, ok := written[t]; !ok || w != a {
			missing = append(missing, fmt.Sprintf("%s:%d", t, a))
		}
	}
	slices.Sort(extra)
	slices.Sort(missing)
	return fmt.Sprintf("%d transactions, want %d: not wanted %v, missing %v", len(written), len(want), extra[:min(len(extra), 8)], missing[:min(len(missing), 8)])
}
