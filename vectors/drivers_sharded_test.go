package vectors

import (
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/tpncounter"
)

// The sharded ledger's vectors (SPEC.md 6.12) and their model.

// dvMarkerPrefix starts the bytes of a layout marker (SPEC.md 6.12).
const dvMarkerPrefix = "counterkit.ledger.sharded/1 shards="

// dvMarker is the hex of the marker naming n shards.
func dvMarker(n int) string { return hex.EncodeToString([]byte(dvMarkerPrefix + strconv.Itoa(n))) }

// dvMarkerShards returns the n a sibling's hex value names as a layout
// marker, or 0 when it is not one.
func dvMarkerShards(value string) int {
	b, err := hex.DecodeString(value)
	if err != nil {
		return 0
	}
	t, ok := strings.CutPrefix(string(b), dvMarkerPrefix)
	n, err := strconv.Atoi(t)
	if !ok || err != nil || n < 1 || n > 1024 || strconv.Itoa(n) != t {
		return 0
	}
	return n
}

// dvShardOf is SPEC.md 6.12's ShardOf: FNV-1a 64 of the id, modulo n.
func dvShardOf(txn string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(txn))
	return int(h.Sum64() % uint64(n))
}

// dvShardedLedger is a sharded ledger of n sub-keys whose incarnations are
// writers (dvLedger.ShardWriters).
func dvShardedLedger(actor string, writers ...string) dvLedger {
	return dvLedger{Actor: actor, Shards: len(writers), ShardWriters: writers}
}

// dvLedgerShardedVectors are the vectors of SPEC.md 6.12. With 2 shards,
// t1, t3 and t5 go to sub-key 0 and t2, t4 and t6 to sub-key 1; with 3,
// t3 and t5 to 0, t2 and t4 to 1, t1 and t6 to 2.
func dvLedgerShardedVectors(opts func(retries, h, f int) dvOptions) []dvVector {
	a2 := dvShardedLedger("a", "a~aaaaaa00", "a~aaaaaa01")
	b2 := dvShardedLedger("b", "b~bbbbbb00", "b~bbbbbb01")
	b3 := dvShardedLedger("b", "b~bbbbbb00", "b~bbbbbb01", "b~bbbbbb02")
	plain := "93aa74706e636f756e74657202929196aa617e61616161616161610100009192a27431059090" // a's state after crediting t1 5
	return []dvVector{
		{Name: "sharded: the first write puts the layout marker",
			Note:    "a, sharded over 2 sub-keys, finds the account key empty and puts its marker with the fetch's token before anything else; t1 goes to acct/0 as a plain ledger's credit does, its record keyed by the account. Within a second the layout is trusted: t2 goes to acct/1 with no read of the marker. Value reads the marker and both sub-keys (a set) and sums them",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{a2}, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t2", 7),
				dvLedgerOp("value", "a"),
			}},
		{Name: "sharded: the layout is read again a second after its check",
			Note:    "a second after the first check, a write reads the marker again (and finds its own: nothing is put); just before that second it does not",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{a2}, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvAtClock(dvCredit("a", "t3", 1), time.Second-1),
				dvAtClock(dvCredit("a", "t2", 2), time.Second),
				dvAtClock(dvCredit("a", "t4", 3), time.Second+1),
			}},
		{Name: "sharded: a failed write reads the layout again",
			Note:    "t2's put to acct/1 is refused twice (retry_count 1): the credit fails unavailable, and a's next write, in the same second, reads the marker first",
			Options: opts(1, 10, 10), Ledgers: []dvLedger{a2}, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("a", "t2", 2, "", "refuse", "", "refuse"),
				dvCredit("a", "t3", 3),
			}},
		{Name: "sharded: a marker put in doubt is put again",
			Note:    "a's first marker put is ambiguous and did not land: a reads the account key again, finds no marker and puts it again, then credits",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{a2}, Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_lost"),
				dvLedgerOp("value", "a"),
			}},
		{Name: "sharded: a marker put in doubt that landed is not put again",
			Note:    "a's first marker put is ambiguous and landed: the second read finds the marker, and a credits without putting it again",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{a2}, Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_landed"),
			}},
		{Name: "sharded: a marker put in doubt, then refused, fails ambiguous_write",
			Note:    "retry_count 1: the first marker put is ambiguous and lost, the second refused: the credit fails ambiguous_write+unavailable (the first put may have landed) having written nothing else",
			Options: opts(1, 10, 10), Ledgers: []dvLedger{a2}, Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "ambiguous_lost", "", "refuse"),
			}},
		{Name: "sharded: a marker put refused on every attempt fails the write",
			Note:    "both attempts of the marker put (retry_count 1) are refused: the credit fails unavailable having written nothing; the next credit puts the marker and lands",
			Options: opts(1, 10, 10), Ledgers: []dvLedger{a2}, Steps: []dvStep{
				dvCredit("a", "t1", 5, "", "refuse", "", "refuse"),
				dvCredit("a", "t1", 5),
			}},
		{Name: "sharded: a retry through another ledger reaches the same sub-key",
			Note:    "b, another process with the same 2 sub-keys, trusts a's marker (it reads it, puts nothing) and finds t1 on acct/0: duplicate, owner a's sub-key incarnation. Its own credit t2 lands on acct/1",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{a2, b2}, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("b", "t1", 5),
				dvCredit("b", "t2", 2),
				dvLedgerOp("value", "a"),
			}},
		{Name: "sharded: a marker naming another n is refused",
			Note:    "the account is sharded over 2 sub-keys; b, over 3, reads the marker and is refused invalid_config before writing, for writes and for Value",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{a2, b3}, Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvCredit("b", "t2", 2),
				dvLedgerOp("value", "b"),
			}},
		{Name: "sharded: of two layouts only the larger n writes",
			Note:    "the account key holds markers for 2 and 3 (two first uses raced): a, over 2 sub-keys, holds nothing in doubt and is refused invalid_config; b, over 3, writes (t1 to acct/2) and puts no marker; a's Value reads the 3 sub-keys the larger marker names",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{a2, b3},
			InitialSiblings: []dvSibling{{Value: dvMarker(2)}, {Value: dvMarker(3)}},
			Steps: []dvStep{
				dvCredit("a", "t2", 2),
				dvCredit("b", "t1", 5),
				dvLedgerOp("value", "a"),
			}},
		{Name: "sharded: after a race, a record of another sub-key takes a pending copy out",
			Note:    "retry_count 1. b, over 3 sub-keys, puts its marker and credits t1 on acct/2; both puts are ambiguous and lost: the credit fails ambiguous_write, t1 pending. a, over 2, reads the account key one state stale (no marker), puts its marker beside b's, finds no record of t1, credits it on acct/0 and records it, naming acct/0 (version 2). b's next credit, t6 on acct/2, reads the marker again (its last write failed), finds both layouts and, the larger, writes: its fetch of acct/2 lacks t1, whose live record names another key, so t1 is taken out of its pending write (SPEC.md 6.11 step 4) rather than judged against acct/2's state, where a's writer never appears (a stale read for good): its put carries t6 alone. Value counts t1 once",
			Options: opts(1, 10, 10), Ledgers: []dvLedger{a2, b3}, Steps: []dvStep{
				dvCredit("b", "t1", 5, "", "", "", "ambiguous_lost", "", "ambiguous_lost"),
				dvCredit("a", "t1", 5, "stale"),
				dvCredit("b", "t6", 3),
				dvLedgerOp("value", "b"),
			}},
		{Name: "sharded: after a race, the larger reads the smaller's sub-key first",
			Note:    "b, over 3 sub-keys, puts its marker and credits t5. a, over 2, reads the account key one state stale (no marker), puts its marker beside b's and credits t1 on acct/0, whose record put (after the confirming fetch) is refused: the credit fails ambiguous_write, t1 landed but unrecorded. A second later b credits t1: it reads the marker again, finds both layouts, and, the larger, reads t1's sub-key under 2 (acct/0) before its own (acct/2): that state holds t1, so the call is a duplicate (owner a's writer) with nothing written. Value counts t1 once",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{a2, b3}, Steps: []dvStep{
				dvCredit("b", "t5", 1),
				dvRecFaults(dvCredit("a", "t1", 5, "stale"), "t1", "", "", "refuse"),
				dvAtClock(dvCredit("b", "t1", 5), time.Second),
				dvAtClock(dvLedgerOp("value", "b"), time.Second),
			}},
		{Name: "sharded: a plain ledger's key cannot be sharded",
			Note:    "the account key holds a plain ledger's state: every operation of a sharded ledger fails invalid_config",
			Options: opts(2, 10, 10), Ledgers: []dvLedger{a2},
			InitialSiblings: []dvSibling{{Value: plain, State: dvDecodeState(dvUnhex(plain))}},
			Steps: []dvStep{
				dvCredit("a", "t1", 5),
				dvLedgerOp("value", "a"),
			}},
	}
}

// dvShardedModel is what the model knows of one sharded ledger.
type dvShardedModel struct {
	d       dvLedger
	ok      bool      // the marker was seen or written
	recheck time.Time // a write reads the marker again from then on
	width   int       // the sub-keys Value reads
	others  []int     // the other n the markers name, ascending
	subs    map[int]*dvLedgerModel
}

// dvModelSharded walks a vector of sharded ledgers (SPEC.md 6.12): each
// step's calls to the account key against the layout rules, the rest
// against the model of a plain ledger on each sub-key.
func dvModelSharded(v dvVector) []string {
	var out []string
	ls := map[string]*dvShardedModel{}
	for _, d := range v.Ledgers {
		if d.Shards == 0 {
			return []string{"a vector of sharded ledgers has a plain one: not modelled"}
		}
		ls[d.Actor] = &dvShardedModel{d: d, width: d.Shards, subs: map[int]*dvLedgerModel{}}
	}
	models := map[int]*dvModel{}
	model := func(i int) *dvModel {
		if models[i] == nil {
			sv := v
			sv.Ledgers = nil
			for _, d := range v.Ledgers {
				if i < d.Shards {
					sv.Ledgers = append(sv.Ledgers, dvLedger{Actor: d.Actor, Writer: d.ShardWriters[i]})
				}
			}
			models[i] = dvNewModel(sv, v.Options.Key+"/"+strconv.Itoa(i))
		}
		return models[i]
	}
	now := dvT0
	for i, s := range v.Steps {
		bad := func(format string, args ...any) {
			out = append(out, fmt.Sprintf("step %d (%s %s): ", i+1, s.Op, s.Txn)+fmt.Sprintf(format, args...))
		}
		if s.Clock != "" {
			at, err := time.Parse(time.RFC3339Nano, s.Clock)
			if err != nil {
				bad("clock %q: %v", s.Clock, err)
				continue
			}
			now = at
		}
		S := ls[s.Ledger]
		if S == nil {
			bad("unknown ledger %q", s.Ledger)
			continue
		}
		write := s.Op == "credit" || s.Op == "debit"
		if !write && s.Op != "value" {
			bad("op %q: not modelled", s.Op)
			continue
		}
		k, errKind := 0, ""
		if !write || !S.ok || !now.Before(S.recheck) {
			k, errKind = S.layout(v, s, now, write, bad)
		}
		if errKind != "" {
			if s.Error != errKind || k != len(s.Calls) {
				bad("error %q after %d calls, the model says %q after %d", s.Error, len(s.Calls), errKind, k)
			}
			S.checkPending(s, bad)
			continue
		}
		sub := func(i int) (*dvModel, *dvLedgerModel) {
			m := model(i)
			m.now = now
			if i >= S.d.Shards { // a reader beyond n: a fresh ledger
				return m, dvNewLedgerModel("", nil)
			}
			if S.subs[i] == nil {
				S.subs[i] = dvNewLedgerModel(S.d.ShardWriters[i], nil)
			}
			return m, S.subs[i]
		}
		if write {
			if done := S.elsewhere(v, s, &k, bad); done {
				S.checkPending(s, bad)
				continue
			}
			m, L := sub(dvShardOf(s.Txn, S.d.Shards))
			m.begin(i, s, s.Calls[k:])
			m.run(L, s)
			if strings.Contains(s.Error, "unavailable") || strings.Contains(s.Error, "ambiguous_write") {
				S.recheck = time.Time{}
			}
		} else {
			// The sub-keys' fetches, a set sorted by key.
			keys := make([]string, S.width)
			for j := range keys {
				keys[j] = v.Options.Key + "/" + strconv.Itoa(j)
			}
			slices.Sort(keys)
			var sum int64
			for j, key := range keys {
				if k+j >= len(s.Calls) || s.Calls[k+j].Method != "fetch" || s.Calls[k+j].Key != key {
					bad("call %d: want a fetch of %q", k+j+1, key)
					break
				}
				n, _ := strconv.Atoi(strings.TrimPrefix(key, v.Options.Key+"/"))
				m, L := sub(n)
				m.begin(i, s, s.Calls[k+j:k+j+1])
				var part dvMember
				m.part = &part
				m.run(L, dvStep{Op: "value", Ledger: s.Ledger})
				m.part = nil
				if part.errKind != "" || part.value == nil {
					bad("sub-key %s: %q: not modelled", key, part.errKind)
					break
				}
				sum += *part.value
			}
			if s.Error != "" || dvShow(s.Value) != dvShow64(&sum) {
				bad("value %s (error %q), the model says %d", dvShow(s.Value), s.Error, sum)
			}
		}
		S.checkPending(s, bad)
	}
	for _, i := range slices.Sorted(func(yield func(int) bool) {
		for i := range models {
			if !yield(i) {
				return
			}
		}
	}) {
		out = append(out, models[i].out...)
	}
	return out
}

// layout is the layout check (SPEC.md 6.12) at the start of step s: it
// returns how many of the step's calls it made, and the error that ends
// the step ("" when it goes on).
func (S *dvShardedModel) layout(v dvVector, s dvStep, now time.Time, write bool, bad func(string, ...any)) (int, string) {
	n := S.d.Shards
	k, doubt := 0, false // doubt: a marker Put was ambiguous
	for attempt := 1; ; attempt++ {
		if k >= len(s.Calls) || s.Calls[k].Method != "fetch" || s.Calls[k].Key != v.Options.Key {
			bad("call %d: want a fetch of the marker", k+1)
			return len(s.Calls), s.Error
		}
		f := s.Calls[k]
		k++
		if f.Reply != "ok" {
			return k, "unavailable"
		}
		var ns []int
		for _, sb := range f.Siblings {
			m := dvMarkerShards(sb.Value)
			if m == 0 {
				return k, "invalid_config"
			}
			ns = append(ns, m)
		}
		if len(ns) > 0 {
			largest := slices.Max(ns)
			if !slices.Contains(ns, n) {
				return k, "invalid_config"
			}
			if write && largest != n {
				for _, L := range S.subs {
					if L.pending || len(L.unacked) > 0 || len(L.unindexed) > 0 || len(L.met) > 0 {
						bad("a refused layout that holds work in doubt: not modelled")
					}
				}
				return k, "invalid_config"
			}
			S.width = max(largest, n)
			S.others = slices.DeleteFunc(slices.Sorted(slices.Values(ns)), func(m int) bool { return m == n })
		} else if write && !S.ok {
			p := dvCall{}
			if k < len(s.Calls) {
				p = s.Calls[k]
			}
			if actor := fmt.Sprintf("%s~n%d", S.d.Actor, n); p.Method != "put" || p.Key != v.Options.Key || p.Actor != actor || p.Token != f.Token || p.Value != dvMarker(n) {
				bad("call %d: want a put of the marker %q as %s with token %q, got %+v", k+1, dvMarker(n), actor, f.Token, p)
				return len(s.Calls), s.Error
			}
			k++
			if p.Reply != "ok" {
				doubt = doubt || p.Reply == "ambiguous"
				switch {
				case attempt <= v.Options.RetryCount:
					continue
				case p.Reply == "ambiguous":
					return k, "ambiguous_write"
				case doubt: // refused after one in doubt: both
					return k, "ambiguous_write+unavailable"
				}
				return k, "unavailable"
			}
		}
		if write {
			S.ok, S.recheck = true, now.Add(time.Second)
		}
		return k, ""
	}
}

// elsewhere is SPEC.md 6.12's read of the write's transaction on its
// sub-key under each other n the markers name (ascending; none that is the
// write's own sub-key): a state that holds it answers the write, and the
// step ends (done). k counts the step's calls made.
func (S *dvShardedModel) elsewhere(v dvVector, s dvStep, k *int, bad func(string, ...any)) (done bool) {
	own := dvShardOf(s.Txn, S.d.Shards)
	amount := int64(*s.Amount)
	if s.Op == "debit" {
		amount = -amount
	}
	for _, n := range S.others {
		j := dvShardOf(s.Txn, n)
		if j == own {
			continue
		}
		key := v.Options.Key + "/" + strconv.Itoa(j)
		if *k >= len(s.Calls) || s.Calls[*k].Method != "fetch" || s.Calls[*k].Key != key {
			bad("call %d: want a fetch of %q (the transaction's sub-key under %d)", *k+1, key, n)
			return true
		}
		f := s.Calls[*k]
		*k++
		if f.Reply != "ok" {
			if s.Error != "unavailable" || *k != len(s.Calls) {
				bad("a failed read of %s: error %q after %d calls, the model says unavailable after %d", key, s.Error, len(s.Calls), *k)
			}
			return true
		}
		st, err := tpncounter.New(tpncounter.Options{})
		if err != nil {
			bad("%v", err)
			return true
		}
		for _, sb := range f.Siblings {
			c, err := tpncounter.New(tpncounter.Options{})
			if err == nil {
				err = c.UnmarshalBinary(dvUnhex(sb.Value))
			}
			if err == nil {
				err = st.Merge(c)
			}
			if err != nil {
				bad("%s: %v", key, err)
				return true
			}
		}
		out, _, err := st.Known(crdt.TxnID(s.Txn), amount)
		switch {
		case err != nil:
			if s.Error != dvKind(err) || *k != len(s.Calls) {
				bad("error %q after %d calls, the model says %q from %s after %d", s.Error, len(s.Calls), dvKind(err), key, *k)
			}
			return true
		case out != 0:
			if s.Error != "" || s.Outcome != dvOutcome(out) || *k != len(s.Calls) || dvShow(s.Value) != strconv.FormatInt(st.Value(), 10) {
				bad("outcome %q (error %q, value %s) after %d calls, the model says %q from %s (value %d) after %d", s.Outcome, s.Error, dvShow(s.Value), len(s.Calls), dvOutcome(out), key, st.Value(), *k)
			}
			return true
		}
	}
	return false
}

// checkPending compares step s's pending with the model's: whether a
// sub-ledger holds a write in doubt.
func (S *dvShardedModel) checkPending(s dvStep, bad func(string, ...any)) {
	pending := false
	for _, L := range S.subs {
		pending = pending || L.pending
	}
	if s.Pending == nil || *s.Pending != pending {
		bad("pending %v, the model says %v", dvShowB(s.Pending), pending)
	}
}
