package vectors

// Vectors of tpncounter.json: generation (generateFile) and checks (checkFile).
// See shared.go for what every file shares, and SPEC.md section 11.

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/timeid"
	"github.com/counterkit/counterkit/tpncounter"
	"github.com/stretchr/testify/require"
)

// ---------------------------------------------------------------------------
// tpncounter.json (tgcounter and tpncounter)

// TxnJSON is one transaction held in a history or folded record.
type TxnJSON struct {
	Txn    string `json:"txn"`
	Amount I64    `json:"amount"`
}

type tEntry struct {
	Actor   string    `json:"actor"`
	Seq     U64       `json:"seq"`
	Total   I64       `json:"total"`
	Forgot  I64       `json:"forgot"`
	History []TxnJSON `json:"history"`
	Folded  []TxnJSON `json:"folded"`
	// Retired marks a retired entry (SPEC.md 6.10): no history, no folded
	// record.
	Retired bool `json:"retired,omitempty"`
	// RetiredAt is a retired entry's retirement time (Unix ns, version 4;
	// absent: none, SPEC.md 6.10).
	RetiredAt I64 `json:"retired_at,omitempty"`
}

// tBase is a half's base (SPEC.md 6.10): what Fold took out of its
// retired entries. Its total may pass int64 (below 2^126).
type tBase struct {
	Cutoff I64 `json:"cutoff"`
	Total  Int `json:"total"`
	Forgot I64 `json:"forgot"`
}

type tState struct {
	Entries *[]tEntry `json:"entries,omitempty"`
	P       *[]tEntry `json:"p,omitempty"`
	N       *[]tEntry `json:"n,omitempty"`
	// Base (tgcounter), PBase and NBase (tpncounter) are the halves'
	// bases, absent when zero.
	Base   *tBase            `json:"base,omitempty"`
	PBase  *tBase            `json:"p_base,omitempty"`
	NBase  *tBase            `json:"n_base,omitempty"`
	Value  Int               `json:"value"`
	Status map[string]string `json:"status"`
	// Conflicts lists the ids held with more than one signed amount, sorted
	// by id (absent when there is none).
	Conflicts []tConflictJSON `json:"conflicts,omitempty"`
	Hex       string          `json:"hex"`
}

// tCopyJSON is one actor's copy of a transaction: a signed amount in a
// tpncounter (negative for a debit), folded when the actor folded it.
type tCopyJSON struct {
	Actor  string `json:"actor"`
	Amount I64    `json:"amount"`
	Folded bool   `json:"folded"`
}

// tConflictJSON is an id held with more than one signed amount: every copy
// (sorted by actor, a tpncounter's credits first) and the one that counts.
type tConflictJSON struct {
	Txn     string      `json:"txn"`
	Counted tCopyJSON   `json:"counted"`
	Copies  []tCopyJSON `json:"copies"`
}

func conflictsJSON(cs []tpncounter.Conflict) []tConflictJSON {
	var out []tConflictJSON
	cp := func(c tpncounter.Copy) tCopyJSON { return tCopyJSON{string(c.Actor), I64(c.Amount), c.Folded} }
	for _, c := range cs {
		j := tConflictJSON{Txn: string(c.ID), Counted: cp(c.Counted)}
		for _, x := range c.Copies {
			j.Copies = append(j.Copies, cp(x))
		}
		out = append(out, j)
	}
	return out
}

type tOptions struct {
	HistoryLength int `json:"history_length"`
	FoldedLength  int `json:"folded_length"`
	MaxActors     int `json:"max_actors"`
	// MaxEncodedSize caps Apply (SPEC.md 6.3 step 3); 0 is the default.
	MaxEncodedSize int `json:"max_encoded_size,omitempty"`
	// TxnTime is "timeuuid" when transactions are timed by their version 1
	// UUID ids (SPEC.md 6.1), empty otherwise.
	TxnTime string `json:"txn_time,omitempty"`
	// FutureSkewNS and Clock (RFC 3339, the fixed time Clock returns) set
	// Options.FutureSkew and Options.Clock (SPEC.md 6.1).
	FutureSkewNS I64    `json:"future_skew_ns,omitempty"`
	Clock        string `json:"clock,omitempty"`
}

type tScenario struct {
	Name     string   `json:"name"`
	Note     string   `json:"note,omitempty"`
	Type     string   `json:"type"`
	Options  tOptions `json:"options"`
	Replicas []string `json:"replicas"`
	// Initial gives some replicas a starting state other than empty: the
	// state its entries describe, encoded as hex.
	Initial map[string]tInitial `json:"initial,omitempty"`
	Steps   []Step              `json:"steps"`
	Final   map[string]tState   `json:"final,omitempty"`
	// FinalDigest replaces Final in scenarios with generated steps.
	FinalDigest map[string]tDigest `json:"final_digest,omitempty"`
}

// tInitial is a replica's starting state: its entries (tgcounter) or
// halves (tpncounter), without forgotten transactions (each total is the
// sum of its folded record, forgot 0, none retired), the halves' bases
// (absent: none), and their encoding, which the replica decodes.
type tInitial struct {
	Entries *[]tEntry `json:"entries,omitempty"`
	P       *[]tEntry `json:"p,omitempty"`
	N       *[]tEntry `json:"n,omitempty"`
	Base    *tBase    `json:"base,omitempty"`
	PBase   *tBase    `json:"p_base,omitempty"`
	NBase   *tBase    `json:"n_base,omitempty"`
	Hex     string    `json:"hex"`
}

// bases returns the bases of the initial state's halves (nil: none).
func (in tInitial) bases(typ string) []*tBase {
	if typ == "tgcounter" {
		return []*tBase{in.Base}
	}
	return []*tBase{in.PBase, in.NBase}
}

// halves returns the entry lists of the initial state.
func (in tInitial) halves(t *checker, typ string) [][]tEntry {
	if typ == "tgcounter" {
		require.NotNil(t, in.Entries, "initial state of a tgcounter: entries")
		return [][]tEntry{*in.Entries}
	}
	require.True(t, in.P != nil && in.N != nil, "initial state of a tpncounter: p and n")
	return [][]tEntry{*in.P, *in.N}
}

// tDigest is a big final state: the value, the number of txns each
// actor's entry holds (history and folded) and the SHA-256 of the encoding.
type tDigest struct {
	Value     Int            `json:"value"`
	Txns      map[string]int `json:"txns"`
	HexSHA256 string         `json:"hex_sha256"`
}

// tOpts turns a scenario's options into tpncounter.Options.
func tOpts(t *checker, o tOptions) tpncounter.Options {
	opts := tpncounter.Options{HistoryLength: o.HistoryLength, FoldedLength: o.FoldedLength, MaxActors: o.MaxActors, MaxEncodedSize: o.MaxEncodedSize, FutureSkew: time.Duration(o.FutureSkewNS)}
	switch o.TxnTime {
	case "":
	case "timeuuid":
		opts.TxnTime = tpncounter.TimeUUID
	default:
		t.Fatalf("unknown txn_time %q", o.TxnTime)
	}
	if o.Clock != "" {
		now := must(time.Parse(time.RFC3339Nano, o.Clock))
		opts.Clock = func() time.Time { return now }
	}
	return opts
}

type tFile struct {
	Comment   string      `json:"comment"`
	Scenarios []tScenario `json:"scenarios"`
	Version1  []tCompat   `json:"version1"`
	TimeUUIDs []tTimeUUID `json:"timeuuids"`
	Decoded   []tDecoded  `json:"decoded"`
	Malformed []Malformed `json:"malformed"`
	// Generated are tgcounter encodings too big to list, given as entry
	// ranges; see tGenerated.
	Generated []tGenerated      `json:"generated_decodes"`
	Merges    []tGeneratedMerge `json:"generated_merges"`
}

// tGeneratedMerge merges two generated tgcounter states (built as
// tGenerated builds them, each decoded alone, MaxActors 4096, their
// actors disjoint): decoding Into and merging From into it gives Error,
// with Into unchanged, or, when Error is empty, a state of that Value
// whose encoding has the digest HexSHA256.
type tGeneratedMerge struct {
	Name      string        `json:"name"`
	Note      string        `json:"note,omitempty"`
	Into      []tEntryRange `json:"into"`
	From      []tEntryRange `json:"from"`
	Error     string        `json:"error,omitempty"`
	Value     *Int          `json:"value,omitempty"`
	HexSHA256 string        `json:"hex_sha256,omitempty"`
}

// merge merges g's states and returns what it gave.
func (g tGeneratedMerge) merge(t *checker) tGeneratedMerge {
	into := decodeT(t, "tgcounter", tGenerated{Entries: g.Into}.encode())
	from := decodeT(t, "tgcounter", tGenerated{Entries: g.From}.encode())
	before := into.bytes()
	out := g
	out.Value, out.HexSHA256 = nil, ""
	err := into.merge(from)
	if out.Error = kindOf(t, err); err == nil {
		out.Value, out.HexSHA256 = ptr(bigInt(into.value())), sha256Hex(into.bytes())
	} else {
		require.Equal(t, sha256Hex(before), sha256Hex(into.bytes()), "%s: a refused merge changed the state", g.Name)
	}
	return out
}

// tGenerated is a tgcounter encoding built from entry ranges, one entry
// per id of each range, in order (the ids ascend across the ranges): a
// live entry is [id, 1, 0, 0, [[id, 1]], []] (one transaction of amount 1,
// named like its actor), a retired one [id, 1, 1, 0]. The format version
// is 3 when a range is retired, else 2. Decoding it (MaxActors 4096) gives
// Error, or, when Error is empty, a state of that Value whose encoding is
// the input itself (HexSHA256 is its digest).
type tGenerated struct {
	Name      string        `json:"name"`
	Note      string        `json:"note,omitempty"`
	Entries   []tEntryRange `json:"entries"`
	Error     string        `json:"error,omitempty"`
	Value     *Int          `json:"value,omitempty"`
	HexSHA256 string        `json:"hex_sha256"`
}

type tEntryRange struct {
	Range   idRange `json:"range"`
	Retired bool    `json:"retired,omitempty"`
}

func (g tGenerated) encode() []byte {
	var es []tEntry
	for _, r := range g.Entries {
		for _, id := range r.Range.ids() {
			if r.Retired {
				es = append(es, tEntry{Actor: id, Seq: 1, Total: 1, Retired: true})
				continue
			}
			es = append(es, tEntry{Actor: id, Seq: 1, History: []TxnJSON{{Txn: id, Amount: 1}}})
		}
	}
	return refT(es).b
}

// decode decodes g's input and returns what it gave.
func (g tGenerated) decode(t *checker) tGenerated {
	in := g.encode()
	out := g
	out.HexSHA256, out.Value = sha256Hex(in), nil
	err := decodeAs(t, "tgcounter", in)
	if out.Error = kindOf(t, err); err == nil {
		r := decodeT(t, "tgcounter", in)
		out.Value = ptr(bigInt(r.value()))
		require.Equal(t, out.HexSHA256, sha256Hex(r.bytes()), "%s: re-encoding differs from the input", g.Name)
	}
	return out
}

// tDecoded is a valid encoding holding conflicting copies (one id with two
// amounts, or in both halves), as Merge leaves them: the state it decodes
// to, its value and its conflicts.
type tDecoded struct {
	Name      string          `json:"name"`
	Note      string          `json:"note,omitempty"`
	Type      string          `json:"type"`
	Hex       string          `json:"hex"`
	Entries   *[]tEntry       `json:"entries,omitempty"`
	P         *[]tEntry       `json:"p,omitempty"`
	N         *[]tEntry       `json:"n,omitempty"`
	Value     Int             `json:"value"`
	Conflicts []tConflictJSON `json:"conflicts"`
}

// decodeT decodes a tgcounter or tpncounter encoding.
func decodeT(t *checker, typ string, b []byte) tReplica {
	if typ == "tgcounter" {
		g := must(tpncounter.NewGCounter(tpncounter.Options{}))
		require.NoError(t, g.UnmarshalBinary(b))
		return tg{g}
	}
	c := must(tpncounter.New(tpncounter.Options{}))
	require.NoError(t, c.UnmarshalBinary(b))
	return tpn{c}
}

// modelOf is the model holding the listed entries (forgotten copies, which
// an encoding only shows in totals, are not needed for conflicts).
func modelOf(halves ...[]tEntry) *tModel {
	m := newTModel(tOptions{})
	for s, es := range halves {
		for _, e := range es {
			en := &tEnt{seq: uint64(e.Seq)}
			for _, x := range e.Folded {
				en.items = append(en.items, tItem{txn: x.Txn, amt: int64(x.Amount), folded: true})
			}
			for _, x := range e.History {
				en.items = append(en.items, tItem{txn: x.Txn, amt: int64(x.Amount)})
			}
			m.half[s][e.Actor] = en
		}
	}
	return m
}

// tCompat is a format version 1 tpncounter encoding (entries without
// forgot) that decoders still read; it re-encodes as Reencoded.
type tCompat struct {
	Name      string   `json:"name"`
	Hex       string   `json:"hex"`
	P         []tEntry `json:"p"`
	N         []tEntry `json:"n"`
	Reencoded string   `json:"reencoded"`
}

// tTimeUUID is a transaction id and the time TimeUUID gives it (Unix
// nanoseconds), or valid false when it has none.
type tTimeUUID struct {
	ID    string `json:"id"`
	Valid bool   `json:"valid"`
	Nanos I64    `json:"unix_nanos,omitempty"`
}

// tReplica hides the difference between GCounter and Counter.
type tReplica interface {
	apply(a crdt.ActorID, x crdt.TxnID, n int64) (tpncounter.Outcome, error)
	compact(a crdt.ActorID) (bool, error)
	retire(a crdt.ActorID) (bool, error)
	retireAt(a crdt.ActorID, at int64) (bool, error)
	retireAll(as []crdt.ActorID) (bool, error)
	retireLate(as []crdt.ActorID, late []crdt.TxnID, at int64) (bool, error)
	fold(cutoff int64) bool
	merge(o tReplica) error
	bytes() []byte
	value() *big.Int
	status(x crdt.TxnID) tpncounter.Status
	amount(x crdt.TxnID) (int64, bool)
	state() tState
	decodeEqual(t *checker, b []byte) bool
}

type tg struct{ c *tpncounter.GCounter }

func (r tg) apply(a crdt.ActorID, x crdt.TxnID, n int64) (tpncounter.Outcome, error) {
	return r.c.Apply(a, x, n)
}
func (r tg) compact(a crdt.ActorID) (bool, error) { return r.c.Compact(a) }
func (r tg) retire(a crdt.ActorID) (bool, error)  { return r.c.Retire(a) }
func (r tg) retireAt(a crdt.ActorID, at int64) (bool, error) {
	return r.c.RetireAt(time.Unix(0, at), a)
}
func (r tg) retireAll([]crdt.ActorID) (bool, error) {
	panic("retire_all: a tgcounter has no RetireAll")
}
func (r tg) retireLate([]crdt.ActorID, []crdt.TxnID, int64) (bool, error) {
	panic("retire_late: a tgcounter has no RetireLateAt")
}
func (r tg) fold(cutoff int64) bool                { return r.c.Fold(time.Unix(0, cutoff)) > 0 }
func (r tg) merge(o tReplica) error                { return r.c.Merge(o.(tg).c) }
func (r tg) bytes() []byte                         { return must(r.c.MarshalBinary()) }
func (r tg) value() *big.Int                       { return r.c.BigValue() }
func (r tg) status(x crdt.TxnID) tpncounter.Status { return r.c.Status(x) }
func (r tg) amount(x crdt.TxnID) (int64, bool) {
	o, ok := r.c.Owner(x)
	return o.Amount, ok
}
func (r tg) state() tState {
	es := tEntries(r.c)
	return tState{Entries: &es, Base: baseJSON(r.c.Base()), Conflicts: conflictsJSON(r.c.Conflicts())}
}
func (r tg) decodeEqual(t *checker, b []byte) bool {
	d := must(tpncounter.NewGCounter(r.c.Options()))
	require.NoError(t, d.UnmarshalBinary(b))
	return d.Equal(r.c) && d.Value() == r.c.Value()
}

type tpn struct{ c *tpncounter.Counter }

func (r tpn) apply(a crdt.ActorID, x crdt.TxnID, n int64) (tpncounter.Outcome, error) {
	return r.c.Apply(a, x, n)
}
func (r tpn) compact(a crdt.ActorID) (bool, error) { return r.c.Compact(a) }
func (r tpn) retire(a crdt.ActorID) (bool, error)  { return r.c.Retire(a) }
func (r tpn) retireAt(a crdt.ActorID, at int64) (bool, error) {
	return r.c.RetireAllAt(time.Unix(0, at), a)
}
func (r tpn) retireAll(as []crdt.ActorID) (bool, error) { return r.c.RetireAll(as...) }
func (r tpn) retireLate(as []crdt.ActorID, late []crdt.TxnID, at int64) (bool, error) {
	return r.c.RetireLateAt(time.Unix(0, at), late, as...)
}
func (r tpn) fold(cutoff int64) bool                { return r.c.Fold(time.Unix(0, cutoff)) > 0 }
func (r tpn) merge(o tReplica) error                { return r.c.Merge(o.(tpn).c) }
func (r tpn) bytes() []byte                         { return must(r.c.MarshalBinary()) }
func (r tpn) value() *big.Int                       { return r.c.BigValue() }
func (r tpn) status(x crdt.TxnID) tpncounter.Status { return r.c.Status(x) }
func (r tpn) amount(x crdt.TxnID) (int64, bool)     { return r.c.Amount(x) }
func (r tpn) state() tState {
	p, n := tEntries(r.c.Positive()), tEntries(r.c.Negative())
	pb, nb := r.c.Bases()
	return tState{P: &p, N: &n, PBase: baseJSON(pb), NBase: baseJSON(nb), Conflicts: conflictsJSON(r.c.Conflicts())}
}
func (r tpn) decodeEqual(t *checker, b []byte) bool {
	d := must(tpncounter.New(r.c.Options()))
	require.NoError(t, d.UnmarshalBinary(b))
	return d.Equal(r.c) && d.Value() == r.c.Value()
}

// baseJSON is a base as a vector lists it (nil when zero).
func baseJSON(b tpncounter.Base) *tBase {
	if b.Cutoff.IsZero() {
		return nil
	}
	j := &tBase{Cutoff: I64(b.Cutoff.UnixNano()), Total: bigInt(b.BigTotal())}
	if !b.Forgot.IsZero() {
		j.Forgot = I64(b.Forgot.UnixNano())
	}
	return j
}

func tEntries(g *tpncounter.GCounter) []tEntry {
	out := []tEntry{}
	conv := func(l []tpncounter.Txn) []TxnJSON {
		o := []TxnJSON{}
		for _, x := range l {
			o = append(o, TxnJSON{string(x.ID), I64(x.Amount)})
		}
		return o
	}
	for _, a := range g.Actors() {
		e, _ := g.Entry(a)
		var forgot int64
		if !e.Forgot.IsZero() {
			forgot = e.Forgot.UnixNano()
		}
		var at int64
		if !e.RetiredAt.IsZero() {
			at = e.RetiredAt.UnixNano()
		}
		out = append(out, tEntry{Actor: string(a), Seq: U64(e.Seq), Total: I64(e.Total), Forgot: I64(forgot), History: conv(e.History), Folded: conv(e.Folded), Retired: e.Retired, RetiredAt: I64(at)})
	}
	return out
}

var outcomeNames = map[tpncounter.Outcome]string{
	tpncounter.Applied: "applied", tpncounter.Duplicate: "duplicate", tpncounter.DuplicateFolded: "duplicate_folded",
	tpncounter.Superseded: "superseded",
}

var statusNames = map[tpncounter.Status]string{
	tpncounter.Unknown: "unknown", tpncounter.InHistory: "in_history", tpncounter.Folded: "folded",
}

func runT(t *checker, sc *tScenario, fill bool) map[string]tReplica {
	opts := tOpts(t, sc.Options)
	rs := map[string]tReplica{}
	for _, r := range sc.Replicas {
		switch sc.Type {
		case "tgcounter":
			rs[r] = tg{must(tpncounter.NewGCounter(opts))}
		case "tpncounter":
			rs[r] = tpn{must(tpncounter.New(opts))}
		default:
			t.Fatalf("unknown type %q", sc.Type)
		}
		in, ok := sc.Initial[r]
		if !ok {
			continue
		}
		halves, bases := in.halves(t, sc.Type), in.bases(sc.Type)
		if fill {
			in.Hex = refTB(bases, halves...).hex()
			sc.Initial[r] = in
		}
		require.Equal(t, refTB(bases, halves...).hex(), in.Hex, "initial state of %s: reference encoding of the listed entries and bases", r)
		var err error
		switch x := rs[r].(type) {
		case tg:
			err = x.c.UnmarshalBinary(unhex(t, in.Hex))
		case tpn:
			err = x.c.UnmarshalBinary(unhex(t, in.Hex))
		}
		require.NoError(t, err, "initial state of %s", r)
		got := rs[r].state()
		got.Conflicts = nil
		require.Equal(t, tState{Entries: in.Entries, P: in.P, N: in.N, Base: in.Base, PBase: in.PBase, NBase: in.NBase}, got, "initial state of %s: decoded entries and bases", r)
	}
	for i := range sc.Steps {
		st := &sc.Steps[i]
		for k, x := range expandStep(*st) {
			r := rs[x.Replica]
			require.NotNil(t, r, "step %d: replica %q", i, x.Replica)
			var before []byte
			if keepBefore(fill, *st) {
				before = r.bytes()
			}
			var err error
			var outcome string
			var changed *bool
			switch x.Op {
			case "apply":
				var o tpncounter.Outcome
				o, err = r.apply(crdt.ActorID(idOf(t, x.Actor, x.ActorHex)), crdt.TxnID(idOf(t, x.Txn, "")), int64(*x.Amount))
				outcome = outcomeNames[o]
			case "compact", "retire", "retire_at", "retire_all", "retire_late":
				var ch bool
				switch x.Op {
				case "compact":
					ch, err = r.compact(crdt.ActorID(idOf(t, x.Actor, x.ActorHex)))
				case "retire_all", "retire_late":
					as := make([]crdt.ActorID, len(x.Actors))
					for i, a := range x.Actors {
						as[i] = crdt.ActorID(a)
					}
					if x.Op == "retire_all" {
						ch, err = r.retireAll(as)
						break
					}
					late := make([]crdt.TxnID, len(x.Txns))
					for i, id := range x.Txns {
						late[i] = crdt.TxnID(id)
					}
					ch, err = r.retireLate(as, late, int64(*x.Amount))
				case "retire":
					ch, err = r.retire(crdt.ActorID(idOf(t, x.Actor, x.ActorHex)))
				default:
					ch, err = r.retireAt(crdt.ActorID(idOf(t, x.Actor, x.ActorHex)), int64(*x.Amount))
				}
				if err == nil {
					changed = &ch
				}
			case "fold":
				ch := r.fold(int64(*x.Amount))
				changed = &ch
			case "merge":
				err = r.merge(rs[x.From])
			default:
				t.Fatalf("unknown op %q", x.Op)
			}
			fillOrCheck(t, fill, st, k == 0, kindOf(t, err), outcome, changed, func() string { return fmt.Sprintf("%s step %d.%d", sc.Name, i, k) })
			if before != nil && (err != nil || (x.Op == "apply" && outcome != "applied") || (changed != nil && !*changed)) {
				// Refused, recognised (duplicate, duplicate_folded, superseded)
				// or nothing to do: nothing changes.
				require.Equal(t, hex.EncodeToString(before), hex.EncodeToString(r.bytes()), "%s step %d: state changed", sc.Name, i)
			}
		}
	}
	return rs
}

func tApply(r, actor, txn string, n int64) Step {
	s := stepOp(r, "apply", actor, n)
	s.Txn = sp(txn)
	return s
}

func tCompact(r, actor string) Step { s := stepOp(r, "compact", actor, 0); s.Amount = nil; return s }

func tRetire(r, actor string) Step { s := stepOp(r, "retire", actor, 0); s.Amount = nil; return s }

// tRetireAll retires actors together (RetireAll).
func tRetireAll(r string, actors ...string) Step {
	return Step{Replica: r, Op: "retire_all", Actors: actors}
}

// tRetireLate retires actors together at seconds (Unix), the copies of
// late that one entry alone holds leaving uncounted (RetireLateAt).
func tRetireLate(r string, at int64, actors []string, late ...string) Step {
	return Step{Replica: r, Op: "retire_late", Actors: actors, Txns: late, Amount: ip(at * 1e9)}
}

// tRetireAt retires actor with the retirement time at seconds (Unix),
// carried in amount as Unix ns; tFold folds with the cutoff at seconds.
func tRetireAt(r, actor string, at int64) Step { return stepOp(r, "retire_at", actor, at*1e9) }

// sixteen is 16 bytes: first, 14 zeros, last.
func sixteen(first, last byte) []byte {
	b := make([]byte, 16)
	b[0], b[15] = first, last
	return b
}

// twoTo126 is 2^126 + d, near the bound of a base's total (SPEC.md 6.10).
func twoTo126(d int64) *big.Int {
	return new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), 126), big.NewInt(d))
}

func tFold(r string, cutoff int64) Step {
	return Step{Replica: r, Op: "fold", Amount: ip(cutoff * 1e9)}
}

func genTPN(t *checker) any {
	ap, cp, mg := tApply, tCompact, stepMerge
	var seed002 []Step
	for i := 1; i <= 6; i++ {
		seed002 = append(seed002, ap("r", "actor1", fmt.Sprintf("txn%d", i), 10))
	}
	seed002 = append(seed002, cp("r", "actor1"), ap("r", "actor1", "txn2", 10), ap("r", "actor1", "txn5", 10))
	var window []Step
	for i := 1; i <= 6; i++ {
		window = append(window, ap("r", "a", fmt.Sprintf("t%d", i), int64(i)))
	}
	beyond := func(s Step) Step { s.Beyond = true; return s }
	window = append(window, ap("r", "a", "t3", 3), ap("r", "a", "t5", 5), beyond(ap("r", "a", "t2", 2)), beyond(ap("r", "a", "t1", 1)))
	// tu(i) is a version 1 UUID id created i seconds after t0.
	tu := func(i int) string { return vid(float64(i), 1, 1).String() }
	var timedWindow []Step
	for i := 1; i <= 6; i++ {
		timedWindow = append(timedWindow, ap("r", "a", tu(i), int64(i)))
	}
	timedWindow = append(timedWindow, ap("r", "a", tu(3), 3), ap("r", "a", tu(5), 5), beyond(ap("r", "a", tu(2), 2)), beyond(ap("r", "a", tu(1), 1)),
		beyond(ap("r", "b", vid(1.5, 7, 7).String(), 9)), ap("r", "b", tu(7), 7), ap("r", "a", "t8", 8))

	// The window with deferred ids (SPEC.md 6.5 rule 5): p0 and p1 are
	// held by a and b; c retries x after each of a's later transactions.
	deferred := []Step{ap("r1", "a", "p0", 1), ap("r1", "a", "p1", 1), ap("r2", "b", "p0", 1), ap("r2", "b", "p1", 1),
		mg("r1", "r2"), ap("r1", "a", "x", 100), ap("r1", "c", "x", 100)}
	edge := []Step{ap("r", "a", "x", 100), ap("r", "c", "x", 100)}
	for i := 1; i <= 5; i++ {
		y := fmt.Sprintf("y%d", i)
		if i <= 4 {
			deferred = append(deferred, ap("r1", "a", y, 10), ap("r1", "c", "x", 100))
			edge = append(edge, ap("r", "a", y, 10), ap("r", "c", "x", 100))
		} else {
			edge = append(edge, ap("r", "a", y, 10), beyond(ap("r", "c", "x", 100)))
		}
	}

	scs := []tScenario{
		{Name: "empty tgcounter", Type: "tgcounter", Replicas: []string{"r"}},
		{Name: "empty tpncounter", Type: "tpncounter", Replicas: []string{"r"}},
		{Name: "seed 002 history_length example", Type: "tgcounter", Options: tOptions{HistoryLength: 3}, Replicas: []string{"r"}, Steps: seed002,
			Note: "six credits of 10 with history_length 3: value 60, txn1 and txn2 folded, txn3..txn6 in history; Compact (Find) folds txn3; retries are recognised"},
		{Name: "forgetting and the window edge", Type: "tgcounter", Options: tOptions{HistoryLength: 2, FoldedLength: 1}, Replicas: []string{"r"}, Steps: window,
			Note: "t3 is recognised through the folded record, t5 in the history; t2 and t1 have been forgotten, so their retries count again (outside the window, counted twice)"},
		{Name: "retries and rejected input on one replica", Type: "tgcounter", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", "t1", 10), ap("r", "a", "t1", 10), ap("r", "b", "t1", 10), ap("r", "a", "t1", 11),
			ap("r", "a", "", 1), ap("r", "", "t2", 1), ap("r", "a", "t2", 0), ap("r", "a", "t2", -5), ap("r", "a", "t\x002", 1),
			ap("r", "a", strings.Repeat("t", 255), 1)}},
		{Name: "concurrent duplicate on two actors counts once", Type: "tgcounter", Options: tOptions{HistoryLength: 2}, Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 10), ap("r2", "b", "t1", 10), ap("r2", "b", "t2", 5),
			mg("r1", "r2"), mg("r2", "r1"), cp("r2", "b"), cp("r2", "a"), mg("r1", "r2"), mg("r2", "r1")}},
		{Name: "folded by one actor, held by another", Type: "tgcounter", Options: tOptions{HistoryLength: 1}, Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 10), ap("r1", "a", "t2", 20), ap("r1", "a", "t3", 30), ap("r2", "b", "t1", 10),
			mg("r1", "r2"), cp("r1", "b"), ap("r1", "b", "t1", 10), mg("r2", "r1")}},
		{Name: "folded by two actors: the larger id unfolds", Type: "tgcounter", Options: tOptions{HistoryLength: 1}, Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 10), ap("r1", "a", "t2", 20), ap("r1", "a", "t3", 30),
			ap("r2", "b", "t1", 10), ap("r2", "b", "u2", 1), ap("r2", "b", "u3", 2),
			mg("r1", "r2"), cp("r1", "a"), cp("r1", "b"), mg("r2", "r1")}},
		{Name: "forgetting is deferred while another actor holds the id", Type: "tgcounter", Options: tOptions{HistoryLength: 1, FoldedLength: 1}, Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 1), ap("r2", "b", "t1", 1), mg("r1", "r2"),
			ap("r1", "a", "t2", 2), ap("r1", "a", "t3", 3), ap("r1", "a", "t4", 4),
			cp("r1", "b"), ap("r1", "a", "t5", 5), mg("r2", "r1")}},
		{Name: "credits and debits", Type: "tpncounter", Replicas: []string{"r"}, Steps: []Step{
			ap("r", "a", "t1", 10), ap("r", "b", "t2", -4), ap("r", "a", "t2", -4), ap("r", "a", "t2", 4), ap("r", "a", "t1", -10),
			ap("r", "a", "t3", 0), ap("r", "a", "t3", math.MinInt64), ap("r", "a", "", 1), ap("r", "", "t3", 1), ap("r", "c", "t3", -1)}},
		{Name: "overflow: the value and each actor's own sum", Type: "tpncounter", Replicas: []string{"r"},
			Note:  "a credits 2^63-1; a credit of 1 more would make the value 2^63: overflow. b debits 2^63-1 (value 0); a debit of 1 more by b would make b's own sum in N 2^63: overflow. c's debit of 1 applies (value -1) although N's value becomes 2^63: a half may pass int64, an actor's sum and the counter's value may not (SPEC.md 6.3 step 5, 6.6)",
			Steps: []Step{ap("r", "a", "t1", math.MaxInt64), ap("r", "a", "t2", 1), ap("r", "b", "t3", -math.MaxInt64), ap("r", "b", "t4", -1), ap("r", "c", "t5", -1)}},
		{Name: "merges with conflicting amounts: the owner's copy counts", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r1", "a", "t1", 5), ap("r2", "b", "t1", -5), ap("r3", "c", "t1", 6), ap("r3", "c", "t2", 1),
			mg("r1", "r2"), mg("r2", "r1"), mg("r1", "r3"), mg("r3", "r1"),
			ap("r1", "d", "t1", 5), ap("r1", "d", "t1", -5), ap("r1", "d", "t1", 6), ap("r1", "d", "t1", -6)},
			Note: "t1 is written concurrently as a credit of 5 (a), a debit of 5 (b) and a credit of 6 (c): Merge accepts it (no error) and a's copy counts, a being the smallest actor id holding t1 and none having folded it: value 5 + 1; a retry with a losing copy's amount is superseded, with any other amount conflicting_transaction"},
		{Name: "compact: all or nothing across halves", Type: "tpncounter", Options: tOptions{HistoryLength: 1}, Replicas: []string{"r"},
			Initial: map[string]tInitial{"r": {
				P: &[]tEntry{
					{Actor: "a", Seq: 2, History: []TxnJSON{{"c1", 5}, {"c2", 5}}, Folded: []TxnJSON{}},
					{Actor: "b", Seq: 2, History: []TxnJSON{{"c3", 5}, {"c4", 5}}, Folded: []TxnJSON{}},
					{Actor: "c", Seq: 2, History: []TxnJSON{{"c5", 5}, {"c6", 5}}, Folded: []TxnJSON{}}},
				N: &[]tEntry{
					{Actor: "a", Seq: tMaxSeq, History: []TxnJSON{{"d1", 1}, {"d2", 1}}, Folded: []TxnJSON{}},
					{Actor: "b", Seq: 2, History: []TxnJSON{{"d3", 1}, {"d4", 1}}, Folded: []TxnJSON{}},
					{Actor: "c", Seq: tMaxSeq, History: []TxnJSON{{"d5", 1}}, Folded: []TxnJSON{}}}}},
			Note:  "SPEC.md 6.6, history_length 1; r starts from the listed state. a's plans fold c1 (P) and d1 (N), but N's a has seq MaxSeq: overflow, and neither half changes (P's plan is not carried out either). b's plans succeed: both halves fold, each seq increments. c's N entry has seq MaxSeq but nothing to do: only P compacts. A debit by a then overflows too (6.3 step 6), a credit applies",
			Steps: []Step{cp("r", "a"), cp("r", "b"), cp("r", "c"), cp("r", "c"), ap("r", "a", "d7", -1), ap("r", "a", "c7", 5)}},
		{Name: "tgcounter merge with a conflicting amount: the smaller actor's copy counts", Type: "tgcounter", Replicas: []string{"r1", "r2"}, Steps: []Step{
			ap("r1", "a", "t1", 5), ap("r2", "b", "t1", 6), mg("r1", "r2"), mg("r2", "r1")}},
		{Name: "the window: deferred ids do not shorten it", Type: "tgcounter", Options: tOptions{HistoryLength: 2, FoldedLength: 2}, Replicas: []string{"r1", "r2"}, Steps: deferred,
			Note: "a and b both hold p0 and p1, so a defers them (keeps them folded beyond folded_length) while b holds them. After a applies x and then y1..y4, a retry of x by c is recognised after every step (duplicate while x is in a's history, duplicate_folded once folded): x stays known for history_length + folded_length = 4 later transactions of a. Deferred ids take room of their own; under the earlier rule they took folded_length room and x was forgotten after y3"},
		{Name: "the window edge: forgotten after history_length + folded_length + 1 later transactions", Type: "tgcounter", Options: tOptions{HistoryLength: 2, FoldedLength: 2}, Replicas: []string{"r"}, Steps: edge,
			Note: "a applies x and then y1..y5, and c retries x after every step: recognised through y4 (H+F = 4 later transactions), unknown after y5, so the last retry is counted again (outside the window)"},
		{Name: "conflict within a half: the smaller actor counts, the loser is superseded, then dropped", Type: "tgcounter", Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r1", "a", "T", 50), ap("r2", "b", "T", 60), mg("r1", "r2"), mg("r3", "r1"),
			ap("r1", "c", "T", 60), ap("r1", "c", "T", 7), ap("r1", "c", "T", 50),
			cp("r1", "b"), ap("r1", "c", "T", 60), ap("r1", "c", "T", 50), mg("r2", "r1")},
			Note: "a and b write T concurrently with 50 and 60; merged, a's 50 counts (smallest actor, neither folded) and T is listed as a conflict (r3 keeps that state). A retry of 60 is superseded, of 7 conflicting_transaction, of 50 duplicate. When b compacts it drops its losing copy: the conflict is gone and the value is unchanged; a retry of 60 is now conflicting_transaction. r2 converges on the same state"},
		{Name: "conflict across halves: credit against debit", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r1", "b", "T", 50), ap("r1", "a", "U", 5), ap("r2", "a", "T", -30), ap("r2", "a", "U", -5),
			mg("r1", "r2"), mg("r3", "r1"),
			ap("r1", "c", "T", 50), ap("r1", "c", "T", -30), ap("r1", "c", "T", 30), ap("r1", "c", "U", 5), ap("r1", "c", "U", -5),
			cp("r1", "b"), cp("r1", "a"), ap("r1", "c", "T", 50), ap("r1", "c", "U", -5), mg("r2", "r1")},
			Note: "T: a credit of 50 by b and a debit of 30 by a, neither folded: a is the smaller actor, so the debit counts (-30) and b's credit counts nothing. U: a credit and a debit of 5 by one actor, a: the credit wins the tie. Value -30 + 5 = -25 with both listed as conflicts (r3). Retries: the losing copy's signed amount is superseded, the counting one duplicate, any other conflicting_transaction. Compacting b drops its credit of T and compacting a drops its debit of U (copies that lose across halves); the conflicts are gone and the value is unchanged"},
		{Name: "conflict: a folded copy beats a history copy of a smaller actor", Type: "tgcounter", Options: tOptions{HistoryLength: 1}, Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r2", "b", "T", 60), ap("r2", "b", "u1", 1), ap("r2", "b", "u2", 2), ap("r1", "a", "T", 50),
			mg("r1", "r2"), mg("r3", "r1"), ap("r1", "c", "T", 60), ap("r1", "c", "T", 50), ap("r1", "c", "T", 7),
			cp("r1", "a"), ap("r1", "c", "T", 50), mg("r2", "r1")},
			Note: "b folded T (60) before it saw a's concurrent T (50, in a's history): the folded copy counts although a < b, so the value is 60 + 1 + 2 (r3). A retry of 60 is duplicate_folded, of 50 superseded. When a compacts it drops its history copy"},
		{Name: "three replicas converge", Type: "tpncounter", Options: tOptions{HistoryLength: 2, FoldedLength: 2}, Replicas: []string{"r1", "r2", "r3"}, Steps: []Step{
			ap("r1", "a", "x1", 100), ap("r1", "a", "x2", -30), ap("r2", "b", "x2", -30), ap("r2", "b", "x3", 7),
			ap("r3", "c", "x1", 100), ap("r3", "c", "x4", -1), ap("r3", "c", "x5", 2), ap("r3", "c", "x6", 3),
			mg("r1", "r3"), ap("r1", "a", "x7", 9), mg("r2", "r1"), cp("r2", "b"), mg("r3", "r2"), cp("r3", "c"),
			mg("r1", "r3"), mg("r2", "r1"), mg("r3", "r2")}},
		{Name: "max actors", Type: "tgcounter", Options: tOptions{MaxActors: 2}, Replicas: []string{"r1", "r2"},
			Note: "c is refused on r1 (2 live actors), yet merging r2's c in is accepted: MaxActors bounds Apply, not Merge (SPEC.md 6.5)", Steps: []Step{
				ap("r1", "a", "t1", 1), ap("r1", "b", "t2", 1), ap("r1", "c", "t3", 1), ap("r2", "c", "t3", 1), mg("r1", "r2")}},
		{Name: "timed: a retry outside the window is refused", Type: "tgcounter", Options: tOptions{HistoryLength: 2, FoldedLength: 1, TxnTime: "timeuuid"},
			Replicas: []string{"r"}, Steps: timedWindow,
			Note: "the forgetting-and-window-edge scenario with timed ids: t1 and t2 are forgotten (forgot = t2's time); their retries, and a new id no later than t2, are refused with outside_window instead of counted again; an untimed id is invalid_txn"},
		{Name: "timed: the horizon travels with the entry", Type: "tpncounter", Options: tOptions{HistoryLength: 1, FoldedLength: 1, TxnTime: "timeuuid"},
			Replicas: []string{"r1", "r2"}, Steps: []Step{
				ap("r1", "a", tu(1), 10), ap("r1", "a", tu(2), 20), ap("r1", "a", tu(3), 30), ap("r1", "a", tu(4), -5),
				cp("r1", "a"), mg("r2", "r1"), beyond(ap("r2", "b", tu(1), 10)), beyond(ap("r2", "b", vid(0.5, 3, 3).String(), -1)),
				beyond(ap("r2", "b", tu(1), -10)), ap("r2", "b", vid(1.5, 3, 3).String(), -1), ap("r2", "b", tu(6), 1)},
			Note: "r1 forgets the credit at t=1 s; r2 merges r1's entry and refuses a retry of it. An unknown transaction is checked against the later of both halves' horizons: a debit no later than t=1 s is refused too, although the debit half has forgotten nothing (the losing write of a credit/debit conflict may have been forgotten in the other half); a debit after it is accepted"},
	}
	// The Apply cap's edge (SPEC.md 6.3 step 3): after a credit by a and a
	// debit by b, c's credit "zz" with MaxEncodedSize at B + 1 + 2 + 59 +
	// 64 (applied) and one byte less (too_large), B the state's bodies.
	capEdge := func(d int) tScenario {
		c, err := tpncounter.New(tpncounter.Options{})
		if err != nil {
			panic(err)
		}
		for _, x := range []struct {
			a, t string
			n    int64
		}{{"a", "t1", 1}, {"b", "t2", -1}} {
			if _, err := c.Apply(crdt.ActorID(x.a), crdt.TxnID(x.t), x.n); err != nil {
				panic(err)
			}
		}
		enc, err1 := c.MarshalBinary()
		empty, err2 := (&tpncounter.Counter{}).MarshalBinary()
		if err := errors.Join(err1, err2); err != nil {
			panic(err)
		}
		limit := len(enc) - (len(empty) - 2) + 1 + 2 + 59 + 64 + d
		name := map[int]string{0: "size cap: at the edge", -1: "size cap: one byte short"}[d]
		return tScenario{Name: name, Type: "tpncounter",
			Options: tOptions{MaxEncodedSize: limit}, Replicas: []string{"r"},
			Note:  fmt.Sprintf("SPEC.md 6.3 step 3: c's Apply of zz is refused (too_large, nothing changes) iff B + len(actor) + len(txn) + 59 > MaxEncodedSize - 64, where B is the length of the state's two bodies (its encoding less the envelope and the array header of the two bodies): here B + 1 + 2 + 59 + 64 is %d", limit-d),
			Steps: []Step{ap("r", "a", "t1", 1), ap("r", "b", "t2", -1), ap("r", "c", "zz", 1)}}
	}
	scs = append(scs, capEdge(0), capEdge(-1))
	// The owner is the smallest actor id in byte order (SPEC.md 6.4), for
	// ids of any lengths: not shorter first, not UTF-16 order.
	owner := func(name, note, typ, a1 string, n1 int64, a2 string, n2 int64) tScenario {
		return tScenario{Name: name, Note: note, Type: typ, Replicas: []string{"r1", "r2"},
			Steps: []Step{ap("r1", a1, "T", n1), ap("r2", a2, "T", n2), mg("r1", "r2"), mg("r2", "r1"), ap("r1", a1, "T", n1), ap("r1", a2, "T", n2)}}
	}
	scs = append(scs,
		owner("owner: a shorter id is not smaller", "b and ab write T concurrently with 60 and 50: ab < b in byte order, so ab's 50 counts (comparing lengths first would pick b's 60); a retry of 60 is superseded, of 50 duplicate",
			"tgcounter", "b", 60, "ab", 50),
		owner("owner: a prefix is smaller", "ab and a write T concurrently with 60 and 50: a, a prefix of ab, is smaller, so a's 50 counts",
			"tgcounter", "ab", 60, "a", 50),
		owner("owner: byte order, not UTF-16 order", "U+10000 (f0 90 80 80) and U+FB01 (ef ac 81) write T with 70 and 80: in byte order U+FB01 is smaller and its 80 counts; in UTF-16 order (d800 dc00 < fb01) U+10000's 70 would",
			"tgcounter", "\U00010000", 70, "\ufb01", 80),
		owner("owner across halves: a shorter id is not smaller", "b credits T with 60 and ab debits it with 50 concurrently: ab < b, so the debit counts and the value is -50",
			"tpncounter", "b", 60, "ab", -50),
	)
	scs = append(scs, tScenario{Name: "status is the larger of the halves", Type: "tpncounter", Options: tOptions{HistoryLength: 1, FoldedLength: 4},
		Replicas: []string{"r1", "r2", "r3", "r4"},
		Note:     "r1: b's credit T is in P's history and c's debit T folded in N; r3: c's credit W folded in P and b's debit W in N's history. On both, after the merge, the status is folded (the larger), whichever half is read first",
		Steps: []Step{ap("r2", "c", "T", -5), ap("r2", "c", "U", -1), ap("r2", "c", "V", -1), ap("r1", "b", "T", 5), mg("r1", "r2"),
			ap("r3", "c", "W", 5), ap("r3", "c", "X", 1), ap("r3", "c", "Y", 1), ap("r4", "b", "W", -5), mg("r3", "r4")}})
	scs = append(scs,
		tScenario{Name: "conflict across halves: the losing folded copy is unfolded", Type: "tpncounter", Options: tOptions{HistoryLength: 1, FoldedLength: 4}, Replicas: []string{"r1", "r2"},
			Note: "a folds its credit x (r1), b folds its debit x (r2: a retry of -5 there is duplicate_folded); merged, both copies are folded and a, the smaller id, owns x: a retry of 5 is duplicate_folded, of -5 superseded. When b compacts it unfolds its copy: x leaves b's folded record and total, and a retry of -5 is now conflicting_transaction; the value stays 5 + 1 + 1 - 1 - 1",
			Steps: []Step{ap("r1", "a", "x", 5), ap("r1", "a", "y", 1), ap("r1", "a", "z", 1), ap("r2", "b", "x", -5), ap("r2", "b", "v", -1), ap("r2", "b", "w", -1),
				ap("r2", "c", "x", -5), mg("r1", "r2"), ap("r1", "c", "x", 5), ap("r1", "c", "x", -5), cp("r1", "b"), ap("r1", "c", "x", -5), cp("r1", "a")}},
		tScenario{Name: "conflict across halves: a folded debit owner answers duplicate_folded", Type: "tpncounter", Options: tOptions{HistoryLength: 1, FoldedLength: 4}, Replicas: []string{"r1", "r2"},
			Note: "a folds its debit x (r1), b credits x (r2); merged, a's folded debit owns x: a retry of -5 is duplicate_folded (the owner is folded, in N), of 5 superseded; the value is -5 - 1 - 1",
			Steps: []Step{ap("r1", "a", "x", -5), ap("r1", "a", "y", -1), ap("r1", "a", "z", -1), ap("r2", "b", "x", 5), mg("r1", "r2"),
				ap("r1", "c", "x", -5), ap("r1", "c", "x", 5)}},
		tScenario{Name: "conflict across halves: forgetting waits for the other half", Type: "tpncounter", Options: tOptions{HistoryLength: 1, FoldedLength: 1}, Replicas: []string{"r1", "r2"},
			Note: "a credits x and b debits x concurrently; merged, a's credit owns x (both in histories, a < b). a's later writes fold x and would forget it, but N still holds b's copy, so a keeps x: were it forgotten, b's debit would count",
			Steps: []Step{ap("r1", "a", "x", 5), ap("r2", "b", "x", -5), mg("r1", "r2"),
				ap("r1", "a", "y1", 1), ap("r1", "a", "y2", 1), ap("r1", "a", "y3", 1), ap("r1", "a", "y4", 1), cp("r1", "a")}},
	)
	// The years TxnTime may give (SPEC.md 6.2): TimeUUID gives these ids a
	// time, but one in 2262 is no time for a timed counter.
	at := func(ts string) string { return timeid.FromParts(must(time.Parse(time.RFC3339Nano, ts)), 1, 1).String() }
	scs = append(scs, tScenario{Name: "timed: a time in 2262 is no time", Type: "tgcounter", Options: tOptions{TxnTime: "timeuuid"}, Replicas: []string{"r"},
		Note:  "TimeUUID gives each id a time (timeuuids lists them); the one in the last 100 ns of 2261 is accepted, those at the start of 2262 and at its last TimeUUID time (2262-04-11T23:47:16.8547758Z) are invalid_txn",
		Steps: []Step{ap("r", "a", at("2261-12-31T23:59:59.9999999Z"), 1), ap("r", "a", at("2262-01-01T00:00:00Z"), 2), ap("r", "a", at("2262-04-11T23:47:16.8547758Z"), 3)}})
	// Merge order after seq (SPEC.md 6.5): one actor ran twice at once, so
	// two replicas hold entries of equal seq; each scenario is built so that
	// skipping the tie-breaker in question picks the other entry.
	tv := func(sec float64) string { return vid(sec, 1, 1).String() }
	scs = append(scs,
		tScenario{Name: "merge order: total", Type: "tgcounter", Options: tOptions{HistoryLength: 1, FoldedLength: 1}, Replicas: []string{"r1", "r2"},
			Note: "equal seq 3; r2's entry has the larger total (5 > 1) and wins, although r1's history compares larger (t2 > a2)",
			Steps: []Step{ap("r1", "a", "t1", 1), ap("r1", "a", "t2", 1), ap("r1", "a", "t3", 1), ap("r2", "a", "a1", 5), ap("r2", "a", "a2", 1), ap("r2", "a", "a3", 1),
				mg("r1", "r2"), mg("r2", "r1")}},
		tScenario{Name: "merge order: forgot", Type: "tgcounter", Options: tOptions{HistoryLength: 1, FoldedLength: 1, TxnTime: "timeuuid"}, Replicas: []string{"r1", "r2"},
			Note: "equal seq 4 and total 2; r2 forgot a later transaction (t=5 s against t=1 s) and wins, although r1's history compares larger",
			Steps: []Step{ap("r1", "a", tv(1), 1), ap("r1", "a", tv(2), 1), ap("r1", "a", tv(3), 1), ap("r1", "a", tv(4), 1),
				ap("r2", "a", tv(5), 1), ap("r2", "a", tv(0.5), 1), ap("r2", "a", tv(0.6), 1), ap("r2", "a", tv(0.7), 1),
				mg("r1", "r2"), mg("r2", "r1")}},
		tScenario{Name: "merge order: history", Type: "tgcounter", Replicas: []string{"r1", "r2", "r3", "r4"},
			Note: "equal seq 1, totals and forgot: the history decides, compared as a list of (txn bytes, amount): alpha > Zed (bytes 0x61 > 0x5a), then (x, 2) > (x, 1)",
			Steps: []Step{ap("r1", "a", "Zed", 1), ap("r2", "a", "alpha", 1), ap("r3", "a", "x", 1), ap("r4", "a", "x", 2),
				mg("r1", "r2"), mg("r2", "r1"), mg("r3", "r4"), mg("r4", "r3")}},
		tScenario{Name: "merge order: folded", Type: "tgcounter", Options: tOptions{HistoryLength: 1, FoldedLength: 1}, Replicas: []string{"r1", "r2"},
			Note: "equal seq 3, total 1, forgot 0 and history [h2, h3]: the folded record decides (g1 > f1)",
			Steps: []Step{ap("r1", "a", "f1", 1), ap("r1", "a", "h2", 1), ap("r1", "a", "h3", 1), ap("r2", "a", "g1", 1), ap("r2", "a", "h2", 1), ap("r2", "a", "h3", 1),
				mg("r1", "r2"), mg("r2", "r1")}},
		tScenario{Name: "merge past int64", Type: "tgcounter", Replicas: []string{"r1", "r2"},
			Note:  "the merged value is 2^63: Merge accepts it in either order (SPEC.md 6.5 step 3), the value is listed exactly, and any further apply is overflow",
			Steps: []Step{ap("r1", "a", "t1", math.MaxInt64), ap("r2", "b", "t2", 1), mg("r1", "r2"), mg("r2", "r1"), ap("r1", "c", "t3", 1)}},
		tScenario{Name: "merge past MaxActors is accepted", Type: "tgcounter", Options: tOptions{MaxActors: 2}, Replicas: []string{"r1", "r2"},
			Note: "MaxActors 2: merging r2 into r1 holds 3 live actors and is accepted (SPEC.md 6.5 step 2: siblings each within the cap always merge). A new actor d is too_large while 2 or more are live; b, an existing actor, writes; once b and c are retired d writes (SPEC.md 6.3 step 4)",
			Steps: []Step{ap("r1", "a", "t1", 1), ap("r2", "b", "t2", 1), ap("r2", "c", "t3", 1), mg("r1", "r2"), ap("r1", "d", "t4", 1), ap("r1", "b", "t5", 1),
				tRetire("r1", "c"), ap("r1", "d", "t4", 1), tRetire("r1", "b"), ap("r1", "d", "t4", 1)}},
		tScenario{Name: "merge past int64 in one half", Type: "tpncounter", Replicas: []string{"r1", "r2"},
			Note:  "merged, N's value is 2^63 and P's 7: the value -2^63 + 7 fits, and Merge accepts it in either order (SPEC.md 6.6). A debit of 7 by c applies (value -2^63); a further debit of 6 would make it -2^63 - 6: overflow",
			Steps: []Step{ap("r1", "a", "t1", -math.MaxInt64), ap("r2", "b", "t2", -1), ap("r2", "c", "t3", 7), mg("r1", "r2"), mg("r2", "r1"), ap("r1", "c", "d1", -7), ap("r1", "c", "d2", -6)}},
		tScenario{Name: "three writers past int64: a debit moves it back", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3"},
			Note: "three writers that could not see each other credit 2^63-3 each: merged, the value is about 3 * 2^63. A credit is overflow (it moves the value away from int64); a debit of 2^63-1 applies although the value stays past int64, since it moves it back (SPEC.md 6.3 step 5)",
			Steps: []Step{ap("r1", "a", "t1", math.MaxInt64-2), ap("r2", "b", "t2", math.MaxInt64-2), ap("r3", "c", "t3", math.MaxInt64-2), mg("r1", "r2"), mg("r1", "r3"),
				ap("r1", "d", "c1", 1), ap("r1", "d", "d1", -math.MaxInt64), ap("r1", "e", "d2", -math.MaxInt64)}},
		tScenario{Name: "timed: FutureSkew", Type: "tgcounter", Options: tOptions{TxnTime: "timeuuid", FutureSkewNS: I64(5 * time.Second), Clock: t0.Add(10 * time.Second).Format(time.RFC3339Nano)},
			Replicas: []string{"r"},
			Note:     "the clock reads t0+10 s and FutureSkew is 5 s: a txn at t0+15 s is accepted, one 100 ns later is outside_window; an untimed id is invalid_txn first (SPEC.md 6.3 step 1)",
			Steps:    []Step{ap("r", "a", tv(15), 1), ap("r", "a", tv(15.0000001), 1), ap("r", "a", "untimed", 1), ap("r", "a", tv(3), 1), ap("r", "a", tv(15), 1)}},
	)
	// Retirement (SPEC.md 6.10) and the version 3 encoding of UUID ids.
	rt := tRetire
	u4 := func(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i) }
	scs = append(scs,
		tScenario{Name: "retire: a retired actor writing again counts against MaxActors", Type: "tgcounter", Options: tOptions{MaxActors: 2},
			Replicas: []string{"r"},
			Note:     "MaxActors 2: a and b credit, a is retired, c credits (live b and c: 2). a writing again would bring its entry back as a third live one: too_large, nothing changes. Once b is retired, a writes again (live a and c)",
			Steps: []Step{ap("r", "a", "t1", 1), ap("r", "b", "t2", 2), rt("r", "a"), ap("r", "c", "t3", 4), ap("r", "a", "t4", 8),
				rt("r", "b"), ap("r", "a", "t4", 8)}},
		tScenario{Name: "retire: an idle actor's entry keeps its total, loses its records", Type: "tpncounter", Options: tOptions{HistoryLength: 2, FoldedLength: 1},
			Replicas: []string{"r"},
			Note:     "a makes four credits and a debit (one credit folded, one forgotten); b one credit. Retiring a keeps seq and value: total = every amount a counted, no history, no folded record, and the state encodes in version 3 (a retired entry has four fields). Retiring again, or an actor without an entry, changes nothing; an invalid actor is invalid_actor. An untimed retry of a's transaction counts again (the documented limit)",
			Steps: []Step{ap("r", "a", "t1", 1), ap("r", "a", "t2", 2), ap("r", "a", "t3", 4), ap("r", "a", "t4", 8), ap("r", "a", "d1", -16), ap("r", "b", "t5", 32),
				rt("r", "a"), rt("r", "a"), rt("r", "z"), rt("r", ""), beyond(ap("r", "b", "t4", 8))}},
		tScenario{Name: "retire: both halves or neither", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3", "r4"},
			Note: "r1: a credits t1 (held by a alone) and debits t2, which b also debited (merged from r2): retiring a is declined and neither of a's entries changes, although its P entry alone could retire; x, holding nothing shared, retires in both halves. r3: c credits t3 and d debits t3 (merged from r4: one id in both halves): retiring c or d is declined",
			Steps: []Step{ap("r1", "a", "t1", 5), ap("r1", "a", "t2", -3), ap("r2", "b", "t2", -3), mg("r1", "r2"), ap("r1", "x", "t4", 7), ap("r1", "x", "t5", -2),
				rt("r1", "a"), rt("r1", "x"),
				ap("r3", "c", "t3", 4), ap("r4", "d", "t3", -4), mg("r3", "r4"), rt("r3", "c"), rt("r3", "d")}},
		tScenario{Name: "retire: declined while another actor holds one of its transactions", Type: "tgcounter", Replicas: []string{"r1", "r2"},
			Note: "a and b both hold x (delivered to both at once); retiring either is declined (changed false) until b drops its copy (a, the smaller id, owns x), after which b can be retired, not a",
			Steps: []Step{ap("r1", "a", "x", 5), ap("r1", "a", "y", 1), ap("r2", "b", "x", 5), mg("r1", "r2"),
				rt("r1", "a"), rt("r1", "b"), cp("r1", "b"), rt("r1", "a"), rt("r1", "b")}},
		tScenario{Name: "retire: retirements agree, win over the entry they retired, lose to the actor's next write", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3", "r4"},
			Note: "r2 and r3 retire a concurrently: equal entries. Merged with r1's live entry of the same seq, the retirement wins in either order. a then writes again on r1, from a state that never saw the retirement: its entry (seq + 1) wins and every amount counts once. a writing on r4, on top of its retirement, makes it live again",
			Steps: []Step{ap("r1", "a", "t1", 10), ap("r1", "a", "t2", -3), ap("r1", "b", "t3", 100), mg("r2", "r1"), mg("r3", "r1"), mg("r4", "r1"),
				rt("r2", "a"), rt("r3", "a"), mg("r2", "r3"), mg("r3", "r1"), mg("r4", "r2"),
				ap("r1", "a", "t4", 1000), mg("r2", "r1"), mg("r1", "r3"), ap("r4", "a", "t5", 10000)}},
		tScenario{Name: "retire: the retired entry wins its seq when nothing else tells them apart", Type: "tgcounter", Options: tOptions{HistoryLength: 1},
			Replicas: []string{"r1", "r2", "r3"},
			Note:     "z folds x1, then drops x2 and x3 from its history because a (a smaller id) holds them: z's live entry has total 1, an empty history and x1 folded. Its retirement has the same seq, total and forgot and an empty history; only the retired rule (SPEC.md 6.5) makes it win over the live entry, in either merge order",
			Steps: []Step{ap("r1", "z", "x1", 1), ap("r1", "z", "x2", 2), ap("r1", "z", "x3", 4), ap("r2", "a", "x2", 2), ap("r2", "a", "x3", 4),
				mg("r1", "r2"), cp("r1", "z"), mg("r3", "r1"), rt("r3", "z"), mg("r1", "r3"), mg("r2", "r1")}},
		tScenario{Name: "retire: timed, a retired transaction's retry is refused", Type: "tpncounter", Options: tOptions{TxnTime: "timeuuid"}, Replicas: []string{"r"},
			Note: "forgot of the retired entry is the newest time among its transactions (t=3 s), so the horizon refuses a retry of any of them, and a new transaction no later than it, with outside_window; a later one is accepted. Ids are version 1 UUIDs: version 3 writes them as 16 bytes",
			Steps: []Step{ap("r", "a", tu(1), 1), ap("r", "a", tu(3), -2), ap("r", "a", tu(2), 4), ap("r", "b", tu(4), 8), rt("r", "a"),
				beyond(ap("r", "b", tu(2), 4)), beyond(ap("r", "b", tu(3), -2)), beyond(ap("r", "b", vid(2.5, 9, 9).String(), 1)), ap("r", "b", tu(5), 16)}},
		tScenario{Name: "retire: a copy that does not count leaves while the owner's is folded", Type: "tpncounter", Options: tOptions{HistoryLength: 1, FoldedLength: 4},
			Replicas: []string{"r1", "r2"},
			Note:     "a applies x then y and compacts (history length 1: a folds x); z, a larger id, applies x too (merged from r2). a's folded copy of x counts, and a defers forgetting x while z holds it. Retiring a is declined (its copy counts and z holds one); retiring z succeeds: its copy leaves without counting (total 0), a keeps x, the value is unchanged. b applies w, also held by c (merged from r2): both copies in histories, so retiring c is declined until c's compaction drops its copy. a's next compaction forgets nothing while x is within its folded length",
			Steps: []Step{ap("r1", "a", "x", 5), ap("r1", "a", "y", 1), ap("r2", "z", "x", 5), ap("r1", "b", "w", 7), ap("r2", "c", "w", 7), mg("r1", "r2"),
				cp("r1", "a"), rt("r1", "a"), rt("r1", "z"), rt("r1", "c"), cp("r1", "a"), ap("r1", "a", "v", 2)}},
		tScenario{Name: "retire: RetireAll counts each shared transaction once, by its owner", Type: "tpncounter", Options: tOptions{HistoryLength: 1, FoldedLength: 4},
			Replicas: []string{"r1", "r2", "r3", "r4"},
			Note:     "r1: a and b both hold x (5) in their histories, a also y (1), b also z (2), and b debits w (3), held by b alone. Retire declines each; RetireAll of a, b and an actor without an entry (passed over) retires a and b in both halves: x counts in a's total (a, the smaller id, owns it) and not in b's (P totals 6 and 2, N 3), the value unchanged; again, nothing is left to retire. r3: a folds x, y and b folds x, z (history length 1): RetireAll takes x out of b's total, where it was folded but a's folded copy counts (P totals 8 and 7 - 5 + 4). r4: c also holds x, outside the group: RetireAll of a and b is declined; an invalid id is invalid_actor; with c the three retire (c's copy of x counts nothing, b's folded one counts). d credits v and e debits v (merged from r2: one id in both halves): RetireAll of d and e is declined",
			Steps: []Step{ap("r1", "a", "x", 5), ap("r1", "a", "y", 1), ap("r2", "b", "x", 5), ap("r2", "b", "z", 2), ap("r2", "b", "w", -3), mg("r1", "r2"),
				rt("r1", "a"), rt("r1", "b"), tRetireAll("r1", "a", "b", "nobody"), tRetireAll("r1", "a", "b"),
				ap("r3", "a", "x", 5), ap("r3", "a", "y", 1), ap("r3", "a", "y2", 2), cp("r3", "a"), ap("r2", "b", "z2", 4), cp("r2", "b"), mg("r3", "r2"), tRetireAll("r3", "a", "b"),
				ap("r4", "c", "x", 5), mg("r4", "r2"), tRetireAll("r4", "a", "b"), tRetireAll("r4", "a", "b", ""), tRetireAll("r4", "a", "b", "c"),
				ap("r4", "d", "v", 7), ap("r2", "e", "v", -7), mg("r4", "r2"), tRetireAll("r4", "d", "e")}},
		tScenario{Name: "retire: a late copy leaves without counting", Type: "tpncounter", Options: tOptions{HistoryLength: 1, FoldedLength: 1},
			Replicas: []string{"r1", "r2", "r3", "r4"},
			Note:     "r1: b credits x (5) and debits u (2), then applies and compacts until it has forgotten both (counted in its totals). r2: a's copies of x and u land late, beside a's own w (3) and v (7), which c (r4) holds too. Merged into r1, x and u count twice. RetireLateAt of a with x, u, v and an id a does not hold is declined while c holds v (a's copy of v counts, c's is in a history), as RetireAll is; of a and c together it retires both: x and u leave a's totals (its copies were the only ones, and late), w counts, v counts once (in a's retired total, the owner's), and the value counts x and u once. r3: the same late list on a state where b still holds x in its history: the owner rule decides, as RetireAll's (a alone is declined; a and b retire with x counted once), and the list changes nothing",
			Steps: []Step{ap("r1", "b", "x", 5), ap("r1", "b", "u", -2), ap("r1", "b", "y", 1), cp("r1", "b"), ap("r1", "b", "y2", 1), cp("r1", "b"), ap("r1", "b", "y3", 1), cp("r1", "b"),
				ap("r1", "b", "d1", -1), cp("r1", "b"), ap("r1", "b", "d2", -1), cp("r1", "b"), ap("r1", "b", "d3", -1), cp("r1", "b"),
				ap("r2", "a", "x", 5), ap("r2", "a", "u", -2), ap("r2", "a", "w", 3), ap("r2", "a", "v", 7), ap("r4", "c", "v", 7), mg("r1", "r2"), mg("r1", "r4"),
				tRetireLate("r1", 100, []string{"a"}, "x", "u", "v", "nothing"), tRetireLate("r1", 100, []string{"a", "c"}, "x", "u", "v", "nothing"),
				ap("r3", "b", "x", 5), mg("r3", "r2"), tRetireLate("r3", 100, []string{"a"}, "x"), tRetireLate("r3", 100, []string{"a", "b", "c"}, "x")}},
	)
	// Retirement times and bases (SPEC.md 6.10, format version 4).
	ra, fo := tRetireAt, tFold
	scs = append(scs,
		tScenario{Name: "fold: entries retired before the cutoff move into the base", Type: "tpncounter", Replicas: []string{"r"},
			Note: "a credits 5 and debits 2, b credits 7, c credits 11; a is retired at 1 s and b at 3 s (version 4: retired_at), c without a time. fold(1 s) changes nothing (retired at the cutoff is not before it); fold(2 s) moves a into both bases (P 5, N 2) and sets their cutoffs; again, nothing; fold(100 s) moves b into P's base (cutoff 100 s) and leaves c, retired without a time, for ever. The value never changes",
			Steps: []Step{ap("r", "a", "t1", 5), ap("r", "a", "d1", -2), ap("r", "b", "t2", 7), ap("r", "c", "t3", 11),
				ra("r", "a", 1), ra("r", "b", 3), rt("r", "c"), fo("r", 1), fo("r", 2), fo("r", 2), fo("r", 100)}},
		tScenario{Name: "fold: a retirement before the base's cutoff is written at the cutoff", Type: "tgcounter", Replicas: []string{"r"},
			Note:  "a retired at 1 s and folded at 5 s; b retired at 2 s (a clock behind the one that folded) is written with retired_at 5 s, the cutoff: never inside the base",
			Steps: []Step{ap("r", "a", "t1", 1), ap("r", "b", "t2", 2), ra("r", "a", 1), fo("r", 5), ra("r", "b", 2)}},
		tScenario{Name: "fold: merge keeps the later cutoff and drops the retired entries under it", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3"},
			Note: "every replica holds a (credit 5, debit 1) retired at 1 s and b (credit 7) retired at 3 s, and c live. r1 folds at 2 s (a), r2 at 4 s (a and b). r1 merging r2 takes r2's bases and drops b, retired before 4 s; r3, which never folded, merging r2 drops a and b; r2 merging r3 (a state that did not fold) takes nothing from it. All three end equal, every amount once",
			Steps: []Step{ap("r1", "a", "t1", 5), ap("r1", "a", "d1", -1), ap("r1", "b", "t2", 7), ap("r1", "c", "t3", 11), ra("r1", "a", 1), ra("r1", "b", 3),
				mg("r2", "r1"), mg("r3", "r1"), fo("r1", 2), fo("r2", 4), mg("r1", "r2"), mg("r3", "r2"), mg("r2", "r3")}},
		tScenario{Name: "fold: equal cutoffs, the larger total wins", Type: "tgcounter", Replicas: []string{"r1", "r2", "r3", "r4"},
			Note:  "r1 folds a and b (retired at 1 s) at 2 s, r2 only a (it never saw b): equal cutoffs, totals 3 and 1. Merged in either order (r3: r1 then r2; r4: r2 then r1), the base of total 3 wins",
			Steps: []Step{ap("r1", "a", "t1", 1), ap("r1", "b", "t2", 2), mg("r2", "r1"), ra("r1", "a", 1), ra("r1", "b", 1), ra("r2", "a", 1), fo("r1", 2), fo("r2", 2), mg("r3", "r1"), mg("r3", "r2"), mg("r4", "r2"), mg("r4", "r1")}},
		tScenario{Name: "fold: a base past int64", Type: "tgcounter", Replicas: []string{"r1", "r2", "r3"},
			Note:  "a credits 2^63-1 and is retired at 1 s; r3 copies that state. r1 merges b's credit of 1, also retired at 1 s: folding both at 2 s makes the base's total 2^63, past int64, written as a bin 8 of 16 bytes (SPEC.md 6.7, 6.10); r3 folds a alone, a total written as an integer. r3 merging r1 takes its base (equal cutoffs, the larger total)",
			Steps: []Step{ap("r1", "a", "t1", math.MaxInt64), ra("r1", "a", 1), mg("r3", "r1"), ap("r2", "b", "t2", 1), ra("r2", "b", 1), mg("r1", "r2"), fo("r1", 2), fo("r3", 2), mg("r3", "r1")}},
		tScenario{Name: "fold: bases past int64 merge alike in either order", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3", "r4"},
			Note: "a credits 2^63-1 and debits it back, b credits and debits 2 (r1); r2 copies that and c credits and debits 1 there. a and b are retired at 1 s on r1, which r2 merges, and c at 1 s on r2. r1 folds at 2 s (each base 2^63 + 1), r2 at 2 s too (2^63 + 2): equal cutoffs, totals that differ only past int64. r3 merges r1 then r2, r4 r2 then r1: both take the larger total, whose base holds c, and end equal to r2 (SPEC.md 6.10)",
			Steps: []Step{ap("r1", "a", "t1", math.MaxInt64), ap("r1", "a", "d1", -math.MaxInt64), ap("r1", "b", "t2", 2), ap("r1", "b", "d2", -2), mg("r2", "r1"),
				ap("r2", "c", "t3", 1), ap("r2", "c", "d3", -1), ra("r1", "a", 1), ra("r1", "b", 1), mg("r2", "r1"), ra("r2", "c", 1), fo("r1", 2), fo("r2", 2),
				mg("r3", "r1"), mg("r3", "r2"), mg("r4", "r2"), mg("r4", "r1"), mg("r2", "r1")}},
		tScenario{Name: "fold: nothing when the base would reach 2^126", Type: "tpncounter", Replicas: []string{"r1", "r2"},
			Initial: map[string]tInitial{
				"r1": {P: &[]tEntry{}, N: &[]tEntry{}, PBase: &tBase{Cutoff: I64(1e9), Total: bigInt(twoTo126(-1))}, NBase: &tBase{Cutoff: I64(1e9), Total: bigInt(twoTo126(-1))}},
				"r2": {P: &[]tEntry{}, N: &[]tEntry{}, PBase: &tBase{Cutoff: I64(1e9), Total: bigInt(twoTo126(-2))}, NBase: &tBase{Cutoff: I64(1e9), Total: bigInt(twoTo126(-2))}}},
			Note:  "r1 starts with both bases at 2^126 - 1 (cutoff 1 s), r2 at 2^126 - 2 (value 0). On each, a credits 1 and is retired at 2 s; folding at 3 s would take r1's credit base to 2^126, so nothing is folded, while r2's reaches 2^126 - 1 (SPEC.md 6.10). r1 merging r2 takes its later base and drops a, which that base holds",
			Steps: []Step{ap("r1", "a", "t1", 1), ra("r1", "a", 2), fo("r1", 3), ap("r2", "a", "t1", 1), ra("r2", "a", 2), fo("r2", 3), mg("r1", "r2")}},
		tScenario{Name: "fold: two retirements of one entry, the earlier wins", Type: "tpncounter", Replicas: []string{"r1", "r2", "r3", "r4"},
			Note:  "a, credited on r1, is retired at 5 s on r1, at 3 s on r2 and without a time on r3. Merged in any order the retirement of 3 s wins: a state that folded it must drop the others. r4 merges r3 then r1: the time of 5 s wins over none",
			Steps: []Step{ap("r1", "a", "t1", 5), mg("r2", "r1"), mg("r3", "r1"), ra("r1", "a", 5), ra("r2", "a", 3), rt("r3", "a"), mg("r4", "r3"), mg("r4", "r1"), mg("r1", "r2"), mg("r2", "r1"), mg("r3", "r1")}},
	)
	scs = append(scs,
		tScenario{Name: "uuid ids: 16 bytes in version 3, other ids as text", Type: "tgcounter", Replicas: []string{"r"},
			Note:  "ids that are UUIDs in canonical lowercase text are written as bin 8 of 16 bytes (the state then needs version 3); an uppercase UUID, or any other id, stays a str",
			Steps: []Step{ap("r", "a", u4(1), 1), ap("r", "a", strings.ToUpper(u4(2)), 2), ap("r", "a", "plain", 4), ap("r", "b", u4(1), 1)}},
	)
	// Generated: the 4096-transaction cap of one entry on Apply (SPEC.md
	// 6.3 step 6). a and b both apply t00001..t02049 (H = F = 1024, so each
	// holds all 2049); once r holds b's entry, a's old transactions are
	// deferred (b holds them) and a grows by one per new transaction until
	// it would hold 4097.
	tr := func(r, actor, prefix string, first, count int) Step {
		return Step{Replica: r, Op: "apply", Actor: sp(actor), TxnRange: &idRange{Prefix: prefix, First: first, Count: count, Width: 5}, Amount: ip(1)}
	}
	scs = append(scs, tScenario{Name: "4096 transactions in one entry", Type: "tgcounter", Options: tOptions{HistoryLength: 1024, FoldedLength: 1024}, Replicas: []string{"r", "s"},
		Note:  "a and b apply t00001..t02049; r merges b's entry; a then applies u00001..u02047 (holding 4096: 1025 in history, 3071 folded, 2049 of them deferred because b holds them) and u02048 is too_large",
		Steps: []Step{tr("r", "a", "t", 1, 2049), tr("s", "b", "t", 1, 2049), mg("r", "s"), tr("r", "a", "u", 1, 2047), ap("r", "a", "u02048", 1), ap("r", "a", "t00001", 1)}})
	for i := range scs {
		sc := &scs[i]
		rs := runT(t, sc, true)
		if generated(sc.Steps) {
			require.Equal(t, "tgcounter", sc.Type, "generated tpncounter scenarios are not supported")
			sc.FinalDigest = map[string]tDigest{}
			for name, r := range rs {
				d := tDigest{Value: bigInt(r.value()), Txns: map[string]int{}, HexSHA256: sha256Hex(r.bytes())}
				for _, e := range *r.state().Entries {
					d.Txns[e.Actor] = len(e.History) + len(e.Folded)
				}
				sc.FinalDigest[name] = d
			}
			continue
		}
		sc.Final = map[string]tState{}
		for name, r := range rs {
			st := r.state()
			st.Value, st.Hex, st.Status = bigInt(r.value()), hex.EncodeToString(r.bytes()), map[string]string{}
			for _, x := range scenarioTxns(sc) {
				st.Status[x] = statusNames[r.status(crdt.TxnID(x))]
			}
			sc.Final[name] = st
		}
	}
	g, p := "tgcounter", "tpncounter"
	entry := func(e refEnc, actor string, seq uint64, total int64, hist, folded [][2]any) refEnc {
		e = e.arr(6).str(actor).uint(seq).int(total).int(0)
		for _, l := range [][][2]any{hist, folded} {
			e = e.arr(len(l))
			for _, x := range l {
				e = e.arr(2).str(x[0].(string)).int(int64(x[1].(int)))
			}
		}
		return e
	}
	t1 := [][2]any{{"t1", 5}}
	var compat []tCompat
	for _, c := range []struct {
		name string
		p, n []tEntry
	}{
		{"empty", []tEntry{}, []tEntry{}},
		{"credits and a debit", []tEntry{
			{Actor: "a", Seq: 4, Total: 3, History: []TxnJSON{{"t3", 3}, {"t4", 4}}, Folded: []TxnJSON{{"t1", 1}, {"t2", 2}}},
			{Actor: "b", Seq: 1, History: []TxnJSON{{"t5", 5}}, Folded: []TxnJSON{}}},
			[]tEntry{{Actor: "a", Seq: 1, History: []TxnJSON{{"d1", 7}}, Folded: []TxnJSON{}}}},
	} {
		v1 := refTBodyV(refTBodyV(env(p, 1).arr(2), c.p, 1), c.n, 1)
		dec := must(tpncounter.New(tpncounter.Options{}))
		require.NoError(t, dec.UnmarshalBinary(v1.b), c.name)
		compat = append(compat, tCompat{Name: c.name, Hex: v1.hex(), P: c.p, N: c.n, Reencoded: hex.EncodeToString(must(dec.MarshalBinary()))})
	}
	var tus []tTimeUUID
	for _, id := range []string{tu(1), "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6ba7b810-9dad-41d1-80b4-00c04fd430c8",
		"6ba7b8109dad11d180b400c04fd430c8", "6BA7B810-9DAD-11D1-80B4-00C04FD430C8", "urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8", "t1",
		"00000000-0000-1000-8000-000000000000", "ffffffff-ffff-1fff-8000-000000000000", "6ba7b810-9dad-11d1-00b4-00c04fd430c8",
		timeid.FromParts(time.Date(2261, 12, 31, 23, 59, 59, 999999900, time.UTC), 1, 1).String(),
		timeid.FromParts(time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC), 1, 1).String(),
		timeid.FromParts(time.Date(2262, 4, 11, 23, 47, 16, 854775800, time.UTC), 1, 1).String()} {
		at, ok := tpncounter.TimeUUID(crdt.TxnID(id))
		c := tTimeUUID{ID: id, Valid: ok}
		if ok {
			c.Nanos = I64(at.UnixNano())
		}
		tus = append(tus, c)
	}
	var decoded []tDecoded
	h := func(txn string, amt int64) []TxnJSON { return []TxnJSON{{txn, I64(amt)}} }
	none := []TxnJSON{}
	for _, d := range []struct {
		name, note string
		p, n       []tEntry
	}{
		{"tgcounter: one id with two amounts", "a < b and neither folded t1: a's 5 counts",
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 5), Folded: none}, {Actor: "b", Seq: 1, History: h("t1", 6), Folded: none}}, nil},
		{"tgcounter: a folded copy counts over a smaller actor's history copy", "b folded t1 (total 6): its copy counts, a's 5 in a history counts nothing",
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 5), Folded: none}, {Actor: "b", Seq: 2, Total: 6, History: none, Folded: h("t1", 6)}}, nil},
		{"tgcounter: two folded copies", "a and b both folded t1 with 5 and 6: the smaller actor's fold counts, b's is subtracted from the sum of the totals (5 + 6 - 6)",
			[]tEntry{{Actor: "a", Seq: 2, Total: 5, History: none, Folded: h("t1", 5)}, {Actor: "b", Seq: 2, Total: 6, History: none, Folded: h("t1", 6)}}, nil},
		{"tpncounter: one id with two amounts and one in both halves", "t1 is credited 5 by a and 6 by b: a's 5 counts; t2 is credited 3 by a and debited 3 by c: a < c, the credit counts; value 5 + 3",
			[]tEntry{{Actor: "a", Seq: 2, History: []TxnJSON{{"t1", 5}, {"t2", 3}}, Folded: none}, {Actor: "b", Seq: 1, History: h("t1", 6), Folded: none}},
			[]tEntry{{Actor: "c", Seq: 1, History: h("t2", 3), Folded: none}}},
		{"tpncounter: in both halves, the folded debit counts", "t1 is credited 5 by a (history) and debited 7 by b (folded): the folded copy counts, value -7",
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 5), Folded: none}},
			[]tEntry{{Actor: "b", Seq: 2, Total: 7, History: none, Folded: h("t1", 7)}}},
		{"tpncounter: in both halves, one actor", "a credited and debited t1: the credit wins the tie, value 4",
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 4), Folded: none}},
			[]tEntry{{Actor: "a", Seq: 1, History: h("t1", 4), Folded: none}}},
	} {
		dv := tDecoded{Name: d.name, Note: d.note}
		var enc refEnc
		if d.n == nil {
			dv.Type, dv.Entries, enc = g, &d.p, refT(d.p)
		} else {
			dv.Type, dv.P, dv.N, enc = p, &d.p, &d.n, refT(d.p, d.n)
		}
		r := decodeT(t, dv.Type, enc.b)
		dv.Hex, dv.Value, dv.Conflicts = enc.hex(), bigInt(r.value()), r.state().Conflicts
		decoded = append(decoded, dv)
	}
	er := func(prefix string, count int, retired bool) tEntryRange {
		return tEntryRange{Range: idRange{Prefix: prefix, First: 1, Count: count, Width: 5}, Retired: retired}
	}
	var gens []tGenerated
	for _, g := range []tGenerated{
		{Name: "4097 live entries and one retired", Entries: []tEntryRange{er("a", 4097, false), er("r", 1, true)},
			Note: "past MaxActors (4096): the decoder does not check it, a merge of siblings may pass it (SPEC.md 6.7)"},
		{Name: "65537 retired entries", Entries: []tEntryRange{er("r", 65537, true)},
			Note: "what retiring 65537 actors one by one writes: it decodes (SPEC.md 6.10)"},
		{Name: "65536 live entries and 65536 retired", Entries: []tEntryRange{er("a", 65536, false), er("r", 65536, true)},
			Note: "131072 entries: the bound (SPEC.md 6.7)"},
		{Name: "65536 live entries and 65537 retired", Entries: []tEntryRange{er("a", 65536, false), er("r", 65537, true)},
			Note: "131073 entries: too_large from the header"},
	} {
		gens = append(gens, g.decode(t))
	}
	var merges []tGeneratedMerge
	for _, g := range []tGeneratedMerge{
		{Name: "80000 retired entries from two states", Into: []tEntryRange{er("r", 40000, true)},
			From: []tEntryRange{{Range: idRange{Prefix: "r", First: 40001, Count: 40000, Width: 5}, Retired: true}},
			Note: "two siblings of 40000 retired entries each merge: the bound counts entries, live or retired (SPEC.md 6.5 step 2)"},
		{Name: "4097 live entries from two states", Into: []tEntryRange{er("a", 4096, false)}, From: []tEntryRange{er("b", 1, false)},
			Note: "past MaxActors (4096): accepted"},
		{Name: "131073 entries from two states", Into: []tEntryRange{er("a", 65536, false), er("r", 32768, true)},
			From: []tEntryRange{{Range: idRange{Prefix: "r", First: 32769, Count: 32769, Width: 5}, Retired: true}},
			Note: "one more than MaxActorsLimit + MaxRetired: too_large, and the receiver is unchanged"},
		{Name: "131072 entries from two states", Into: []tEntryRange{er("a", 65536, false), er("r", 32768, true)},
			From: []tEntryRange{{Range: idRange{Prefix: "r", First: 32769, Count: 32768, Width: 5}, Retired: true}}},
	} {
		merges = append(merges, g.merge(t))
	}
	return tFile{
		Merges:    merges,
		Generated: gens,
		Comment:   "Transactional counters (SPEC.md section 6). Encodings in format version 4 where a half has a base or a retired entry a retirement time, version 3 where a state holds a retired entry or a UUID transaction id, version 2 otherwise (SPEC.md 6.7). tgcounter body: array of entries [actor, seq uint, total int, forgot int (Unix ns), history [[txn, amount]...], folded [[txn, amount]...]] sorted by actor, after the base [cutoff, total, forgot] when the half has one (version 4; a total past int64, below 2^126, is a bin 8 of its 16 bytes, big-endian); a retired entry is [actor, seq, total, forgot] or [actor, seq, total, forgot, retired_at]; tpncounter body: [P body, N body]. Steps retire_at and fold carry the retirement time and the cutoff (Unix ns) in amount. A scenario's initial gives some replicas a starting state to decode (hex) instead of the empty one. version1 lists version 1 encodings (entries without forgot) that decoders still read; timeuuids gives TimeUUID's answer for sample ids; decoded lists valid encodings holding conflicting copies of one id (two amounts, or both halves) with the value the owner rule gives them; generated_decodes are tgcounter encodings built from entry ranges and what decoding them gives.",
		Scenarios: scs,
		Version1:  compat,
		TimeUUIDs: tus,
		Decoded:   decoded,
		Malformed: []Malformed{
			mal("actors out of order", g, entry(entry(env(g, 2).arr(2), "b", 1, 0, t1, nil), "a", 1, 0, [][2]any{{"t2", 1}}, nil).b, t,
				"format version 2, entries of 6 fields: only the actor order is wrong"),
			mal("duplicate actor", g, entry(entry(env(g, 2).arr(2), "a", 1, 0, t1, nil), "a", 1, 0, [][2]any{{"t2", 1}}, nil).b, t,
				"format version 2: actors must be strictly increasing"),
			mal("tpncounter N half actors out of order", p, entry(entry(env(p, 2).arr(2).arr(0).arr(2), "b", 1, 0, t1, nil), "a", 1, 0, [][2]any{{"t2", 1}}, nil).b, t,
				"each half is checked like a tgcounter body"),
			mal("seq 0", g, entry(env(g, 2).arr(1), "a", 0, 0, t1, nil).b, t),
			mal("negative total", g, entry(env(g, 2).arr(1), "a", 1, -1, t1, nil).b, t),
			mal("zero amount", g, entry(env(g, 2).arr(1), "a", 1, 0, [][2]any{{"t1", 0}}, nil).b, t),
			mal("negative amount", g, entry(env(g, 2).arr(1), "a", 1, 0, [][2]any{{"t1", -5}}, nil).b, t),
			mal("one actor holds a txn twice", g, entry(env(g, 2).arr(1), "a", 2, 5, t1, t1).b, t),
			mal("invalid txn id", g, entry(env(g, 2).arr(1), "a", 1, 0, [][2]any{{"", 1}}, nil).b, t),
			mal("invalid actor id", g, entry(env(g, 2).arr(1), "a\x1b", 1, 0, t1, nil).b, t),
			mal("entry of five fields", g, env(g, 2).arr(1).arr(5).str("a").uint(1).int(0).arr(0).arr(0).b, t,
				"a version 1 entry under version 2"),
			mal("entry of seven fields", g, env(g, 2).arr(1).arr(7).str("a").uint(1).int(0).int(0).arr(0).arr(0).nil().b, t),
			mal("negative forgot", g, env(g, 2).arr(1).arr(6).str("a").uint(1).int(0).int(-1).arr(0).arr(0).b, t),
			mal("more than 131072 entries", g, env(g, 2).arr(131073).b, t,
				"MaxActorsLimit + MaxRetired, whatever MaxActors: too_large from the header"),
			mal("131072 entries, bytes missing", g, env(g, 2).arr(131072).b, t, "within the bound: the missing bytes are corrupt"),
			mal("more than 4096 txns in one entry", g, env(g, 2).arr(1).arr(6).str("a").uint(1).int(0).int(0).arr(4097).b, t),
			mal("seq 2^63", g, env(g, 2).arr(1).arr(6).str("a").uint(1<<63).int(0).int(0).arr(1).arr(2).str("t1").int(5).arr(0).b, t,
				"seq is a uint on the wire but at most 2^63-1"),
			mal("seq 2^64-1", g, env(g, 2).arr(1).arr(6).str("a").uint(math.MaxUint64).int(0).int(0).arr(1).arr(2).str("t1").int(5).arr(0).b, t),
			mal("v3: retired entry of seq 2^63", g, env(g, 3).arr(1).arr(4).str("a").uint(1<<63).int(5).int(0).b, t),
			mal("folded longer than 4096 minus the history", g, env(g, 2).arr(1).arr(6).str("a").uint(2).int(5).int(0).arr(1).arr(2).str("t1").int(5).raw(0xdc, 0x10, 0x00).b, t,
				"one txn read, then a folded header of 4096 (above 4095) with nothing after it: too_large from the header"),
			mal("folded of 4095 after one txn, bytes missing", g, env(g, 2).arr(1).arr(6).str("a").uint(2).int(5).int(0).arr(1).arr(2).str("t1").int(5).raw(0xdc, 0x0f, 0xff).b, t,
				"4095 is within the cap: the header passes, and the missing bytes are corrupt"),
			mal("v4: more than a base and 131072 entries", g, env(g, 4).arr(131074).b, t),
			mal("v4: a base and 131072 entries, bytes missing", g, env(g, 4).arr(131073).b, t,
				"version 4 adds one for the base: the missing bytes are corrupt"),
			mal("seq as negative int", g, env(g, 2).arr(1).arr(6).str("a").int(-1).int(0).int(0).arr(0).arr(0).b, t),
			mal("tpncounter of one half", p, env(p, 2).arr(1).arr(0).b, t),
			mal("tpncounter of three halves", p, env(p, 2).arr(3).arr(0).arr(0).arr(0).b, t),
			mal("tgcounter envelope as tpncounter", p, env(g, 2).arr(0).b, t),
			mal("version 5", g, env(g, 5).arr(0).b, t),
			mal("v2: retired entry (four fields)", g, env(g, 2).arr(1).arr(4).str("a").uint(1).int(5).int(0).b, t,
				"retired entries exist from version 3"),
			mal("v3: entry of five fields", g, env(g, 3).arr(1).arr(5).str("a").uint(1).int(5).int(0).arr(0).b, t),
			mal("v3: retired entry with a negative total", g, env(g, 3).arr(1).arr(4).str("a").uint(1).int(-1).int(0).b, t),
			mal("v3: retired entry of seq 0", g, env(g, 3).arr(1).arr(4).str("a").uint(0).int(5).int(0).b, t),
			mal("v3: UUID id written as text", g, env(g, 3).arr(1).arr(6).str("a").uint(1).int(0).int(0).arr(1).arr(2).str("6ba7b810-9dad-11d1-80b4-00c04fd430c8").int(5).arr(0).b, t,
				"a UUID in canonical lowercase text has one encoding from version 3: 16 bytes"),
			mal("v3: id of 15 bytes", g, env(g, 3).arr(1).arr(6).str("a").uint(1).int(0).int(0).arr(1).arr(2).bin(make([]byte, 15)).int(5).arr(0).b, t),
			mal("v3: id of 16 bytes in bin 16", g, env(g, 3).arr(1).arr(6).str("a").uint(1).int(0).int(0).arr(1).arr(2).raw(0xc5, 0, 16).raw(make([]byte, 16)...).int(5).arr(0).b, t),
			mal("v2: id as bin", g, env(g, 2).arr(1).arr(6).str("a").uint(1).int(0).int(0).arr(1).arr(2).bin(make([]byte, 16)).int(5).arr(0).b, t),
			mal("trailing bytes", g, append(env(g, 2).arr(0).b, 0xc0), t),
			// Entries no writer produces (SPEC.md 6.7, invariants).
			mal("v3: retired entry with forgot 2^63-1", p, env(p, 3).arr(2).arr(1).arr(4).str("ghost").uint(1).int(1).int(math.MaxInt64).arr(0).b, t,
				"invariant forgot-within-txn-times: a forgot after 2262-01-02T00:00:00Z, later than any time a transaction may have; it would refuse every timed transaction"),
			mal("forgot after the latest transaction time", g, env(g, 2).arr(1).arr(6).str("a").uint(1).int(0).int(maxForgotNanos+1).arr(1).arr(2).str("t1").int(5).arr(0).b, t,
				"invariant forgot-within-txn-times: 2262-01-02T00:00:00.000000001Z"),
			mal("seq below the transactions held", g, entry(env(g, 2).arr(1), "a", 2, 5, [][2]any{{"t1", 1}, {"t2", 1}}, [][2]any{{"t3", 5}}).b, t,
				"invariant seq-counts-items: each transaction an entry holds was appended by a write of its own"),
			mal("total below the folded record", g, entry(env(g, 2).arr(1), "a", 3, 9, [][2]any{{"t1", 5}}, [][2]any{{"t2", 5}, {"t3", 5}}).b, t,
				"invariant total-covers-folded: folding adds an item to the total and the record; unfolding takes it out of both"),
			mal("total and history past int64", g, entry(env(g, 2).arr(1), "a", 2, math.MaxInt64-1, [][2]any{{"t1", 1}, {"t2", 1}}, nil).b, t,
				"invariant sum-fits: Apply keeps an actor's total plus its history within int64 (SPEC.md 6.3 step 5)"),
			mal("history beyond MaxHistoryLength + 1", g, entry(env(g, 2).arr(1), "a", 1026, 0, manyTxns(1026), nil).b, t,
				"invariant history-within-cap: Apply folds the history down to HistoryLength (at most 1024), then appends one"),
			// A state is written in the lowest version that holds it (SPEC.md 3.2, 6.7).
			mal("v3: empty tgcounter", g, env(g, 3).arr(0).b, t, "version above the state's: an empty state is written in version 2"),
			mal("v4: empty tgcounter", g, env(g, 4).arr(0).b, t),
			mal("v3: empty tpncounter", p, env(p, 3).arr(2).arr(0).arr(0).b, t),
			mal("v4: empty tpncounter", p, env(p, 4).arr(2).arr(0).arr(0).b, t),
			mal("v3: a live entry with a plain id", g, entry(env(g, 3).arr(1), "a", 1, 0, [][2]any{{"t1", 5}}, nil).b, t,
				"version 3 is for retired entries and UUID ids"),
			// Version 4: bases and retirement times (SPEC.md 6.7, 6.10).
			mal("v3: retired entry with a retirement time", g, env(g, 3).arr(1).arr(5).str("a").uint(1).int(1).int(0).int(1e9).b, t,
				"retirement times exist from version 4"),
			mal("v3: base", g, env(g, 3).arr(1).arr(3).int(1e9).int(1).int(0).b, t),
			mal("v4: base of cutoff 0", g, env(g, 4).arr(1).arr(3).int(0).int(1).int(0).b, t,
				"invariant base-cutoff: a half that never folded writes no base"),
			mal("v4: base cutoff after 2262-01-02", g, env(g, 4).arr(1).arr(3).int(maxForgotNanos+1).int(1).int(0).b, t,
				"invariant base-cutoff"),
			mal("v4: base after an entry", g, env(g, 4).arr(2).arr(4).str("a").uint(1).int(1).int(0).arr(3).int(1e9).int(1).int(0).b, t,
				"the base is the first element of its body"),
			mal("v4: base with a negative total", g, env(g, 4).arr(1).arr(3).int(1e9).int(-1).int(0).b, t),
			// A base's total past int64 is a bin 8 of 16 bytes (SPEC.md 6.7).
			mal("v4: base total 5 in 16 bytes", g, env(g, 4).arr(1).arr(3).int(1e9).bin(sixteen(0, 5)).int(0).b, t,
				"a total that fits in int64 is written as an integer: one encoding per value"),
			mal("v4: base total 2^63-1 in 16 bytes", g, env(g, 4).arr(1).arr(3).int(1e9).bin(append(make([]byte, 8), 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)).int(0).b, t),
			mal("v4: base total of 15 bytes", g, env(g, 4).arr(1).arr(3).int(1e9).bin(sixteen(1, 0)[:15]).int(0).b, t),
			mal("v4: base total of 17 bytes", g, env(g, 4).arr(1).arr(3).int(1e9).bin(append([]byte{0}, sixteen(1, 0)...)).int(0).b, t,
				"its first 16 bytes, 2^112, would be a valid total"),
			mal("v4: base total of 16 bytes in a bin 16", g, env(g, 4).arr(1).arr(3).int(1e9).raw(0xc5, 0, 16).raw(sixteen(1, 0)...).int(0).b, t),
			mal("v4: negative base total in 16 bytes", g, env(g, 4).arr(1).arr(3).int(1e9).wide(new(big.Int).Sub(big.NewInt(math.MinInt64), big.NewInt(1))).int(0).b, t),
			mal("v4: base total of 2^126", g, env(g, 4).arr(1).arr(3).int(1e9).wide(twoTo126(0)).int(0).b, t,
				"invariant base-total: Fold keeps a base's total below 2^126"),
			mal("v4: retirement time 0", g, env(g, 4).arr(1).arr(5).str("a").uint(1).int(1).int(0).int(0).b, t,
				"invariant retired-after-cutoff: an entry retired without a time has four fields"),
			mal("v4: retired before the base's cutoff", g, env(g, 4).arr(2).arr(3).int(2e9).int(1).int(0).arr(5).str("a").uint(1).int(1).int(0).int(1e9).b, t,
				"invariant retired-after-cutoff: Fold and Merge remove an entry retired before the cutoff (the base holds it)"),
			mal("v1: entry of six fields", g, env(g, 1).arr(1).arr(6).str("a").uint(1).int(0).int(0).arr(0).arr(0).b, t),
			mal("v1: entry of four fields", g, env(g, 1).arr(1).arr(4).str("a").uint(1).int(0).arr(0).b, t),
			mal("v1: seq 0", g, env(g, 1).arr(1).arr(5).str("a").uint(0).int(0).arr(1).arr(2).str("t1").int(5).arr(0).b, t),
		},
	}
}

// maxForgotNanos is the latest forgot a decoder accepts: 2262-01-02T00:00Z
// (SPEC.md 6.7).
var maxForgotNanos = time.Date(2262, 1, 2, 0, 0, 0, 0, time.UTC).UnixNano()

// manyTxns returns n transactions x0, x1, ... of amount 1.
func manyTxns(n int) [][2]any {
	out := make([][2]any, n)
	for i := range out {
		out[i] = [2]any{fmt.Sprintf("x%d", i), 1}
	}
	return out
}

// scenarioTxns lists the transaction ids a scenario names, sorted.
func scenarioTxns(sc *tScenario) []string {
	set := map[string]bool{}
	for _, st := range sc.Steps {
		if st.Txn != nil && validID(*st.Txn) {
			set[*st.Txn] = true
		}
	}
	for _, in := range sc.Initial {
		for _, es := range []*[]tEntry{in.Entries, in.P, in.N} {
			if es != nil {
				for _, e := range *es {
					for _, x := range append(slices.Clone(e.History), e.Folded...) {
						set[x.Txn] = true
					}
				}
			}
		}
	}
	return sortedKeys(set)
}

// tModel is SPEC.md section 6 written plainly, sharing nothing with the
// package: per half (credits, debits) and per actor an ordered list of the
// copies the actor holds, folds, or has forgotten, and the rules as the
// specification states them. Every copy that is not the owner's is dropped
// or unfolded by its holder; the oldest history items beyond history_length
// are folded; of the folded items older than the newest folded_length, those
// no other copy shares are forgotten (the others are deferred). The value
// counts each distinct transaction once, by its owner's copy: the smallest
// actor id among the holders that folded it, else among those holding it in
// a history; across halves the owners compare the same way, a credit
// winning a tie of one actor.
type tModel struct {
	h, f    int
	timed   bool
	skew    int64               // FutureSkew (ns); 0: unchecked
	now     int64               // the Clock's reading (Unix ns)
	half    [2]map[string]*tEnt // credits, debits (magnitudes)
	recount [2]int64            // amounts counted a second time: a retry after the window
	base    [2]tBase            // what fold took out of each half (SPEC.md 6.10)
}

// tEnt is one actor's entry in one half of the model.
type tEnt struct {
	seq     uint64
	items   []tItem // oldest first: forgotten and folded items, then the history
	retired bool    // every item gone (SPEC.md 6.10)
	at      int64   // retirement time (Unix ns), 0: none
}

type tItem struct {
	txn    string
	amt    int64 // magnitude
	folded bool
	gone   bool // forgotten: still counted by the actor's total, no longer held
}

// tHeld is one held copy of a transaction.
type tHeld struct {
	actor  string
	amt    int64 // magnitude
	folded bool
}

func newTModel(o tOptions) *tModel {
	h := o.HistoryLength
	if h == 0 {
		h = 10
	}
	f := o.FoldedLength
	if f == 0 {
		f = h
	}
	m := &tModel{h: h, f: f, timed: o.TxnTime != "", skew: int64(o.FutureSkewNS), half: [2]map[string]*tEnt{{}, {}}}
	if o.Clock != "" {
		m.now = must(time.Parse(time.RFC3339Nano, o.Clock)).UnixNano()
	}
	return m
}

// load sets half s to the listed entries, which forgot nothing: every
// total is the sum of the folded record.
func (m *tModel) load(t *checker, s int, es []tEntry) {
	for _, e := range es {
		require.True(t, !e.Retired && e.Forgot == 0, "initial entry %s: retired or forgot", e.Actor)
		en := &tEnt{seq: uint64(e.Seq)}
		var folded int64
		for _, x := range e.Folded {
			en.items = append(en.items, tItem{txn: x.Txn, amt: int64(x.Amount), folded: true})
			folded += int64(x.Amount)
		}
		require.EqualValues(t, folded, e.Total, "initial entry %s: total other than the folded record's sum", e.Actor)
		for _, x := range e.History {
			en.items = append(en.items, tItem{txn: x.Txn, amt: int64(x.Amount)})
		}
		m.half[s][e.Actor] = en
	}
}

// tMaxSeq is the largest sequence number (SPEC.md 6.2).
const tMaxSeq = 1<<63 - 1

func (m *tModel) clone() *tModel {
	c := *m
	for s := range c.half {
		c.half[s] = map[string]*tEnt{}
		for a, e := range m.half[s] {
			c.half[s][a] = &tEnt{seq: e.seq, items: slices.Clone(e.items), retired: e.retired, at: e.at}
		}
	}
	return &c
}

// held lists the copies of x held in half s, sorted by actor.
func (m *tModel) held(s int, x string) []tHeld {
	var out []tHeld
	for _, a := range sortedKeys(m.half[s]) {
		for _, it := range m.half[s][a].items {
			if it.txn == x && !it.gone {
				out = append(out, tHeld{a, it.amt, it.folded})
			}
		}
	}
	return out
}

// retireGroup is SPEC.md 6.10 RetireAll of group (at: the retirement time
// of retire_at, else nil). It declines when an actor outside the group
// holds one of the group's txns (unless the copy that counts is folded
// and not the member's: that member's copy leaves without counting), or
// one of them is held in both halves. Otherwise each live entry is
// retired: a history copy counts in its retired total only when it is the
// owner's, and a folded copy (already in the total) leaves it when it is
// not.
func (m *tModel) retireGroup(halves int, group map[string]bool, at *int64, late map[string]bool) bool {
	retiring := false
	for a := range group {
		for s := 0; s < halves; s++ {
			e := m.half[s][a]
			if e == nil || e.retired {
				continue
			}
			for _, it := range e.items {
				if it.gone {
					continue
				}
				held := m.held(s, it.txn)
				if o, _ := ownerOf(held); o.actor == a || !o.folded {
					for _, h := range held {
						if !group[h.actor] {
							return false
						}
					}
				}
				if halves == 2 && len(m.held(1-s, it.txn)) > 0 {
					return false
				}
			}
			retiring = true
		}
	}
	if !retiring {
		return false
	}
	owners := [2]map[string]tHeld{{}, {}}
	sole := [2]map[string]bool{{}, {}} // held by one entry, before any retires
	for s := 0; s < halves; s++ {
		for _, x := range m.txnsOf(s) {
			if o, ok := ownerOf(m.held(s, x)); ok {
				owners[s][x] = o
			}
			sole[s][x] = len(m.held(s, x)) == 1
		}
	}
	for s := 0; s < halves; s++ {
		for a := range group {
			e := m.half[s][a]
			if e == nil || e.retired {
				continue
			}
			var kept []tItem
			for _, it := range e.items {
				if !it.gone && (owners[s][it.txn].actor != a || late[it.txn] && sole[s][it.txn]) {
					continue // another copy counts, or counted: out of this total
				}
				it.gone = true
				kept = append(kept, it)
			}
			e.items, e.retired = kept, true
			if at != nil {
				e.at = max(*at, int64(m.base[s].Cutoff))
			}
		}
	}
	return true
}

// ownerOf is the owner rule: folded first, then the smallest actor id
// (Go compares strings by bytes).
func ownerOf(cs []tHeld) (tHeld, bool) {
	var o tHeld
	for i, c := range cs {
		if i == 0 || (c.folded && !o.folded) || (c.folded == o.folded && c.actor < o.actor) {
			o = c
		}
	}
	return o, len(cs) > 0
}

// counted returns the copy of x that counts and its half, if x is held.
func (m *tModel) counted(x string) (tHeld, int, bool) {
	po, pok := ownerOf(m.held(0, x))
	no, nok := ownerOf(m.held(1, x))
	switch {
	case !pok && !nok:
		return tHeld{}, 0, false
	case !nok:
		return po, 0, true
	case !pok:
		return no, 1, true
	case po.folded != no.folded:
		if no.folded {
			return no, 1, true
		}
		return po, 0, true
	case no.actor < po.actor:
		return no, 1, true
	default:
		return po, 0, true
	}
}

func signed(s int, a int64) int64 {
	if s == 1 {
		return -a
	}
	return a
}

// goneAmt is the amount of a forgotten copy of x in half s, if any.
func (m *tModel) goneAmt(s int, x string) (int64, bool) {
	for _, a := range sortedKeys(m.half[s]) {
		for _, it := range m.half[s][a].items {
			if it.txn == x && it.gone {
				return it.amt, true
			}
		}
	}
	return 0, false
}

// txnsOf lists every id half s holds or forgot, sorted.
func (m *tModel) txnsOf(s int) []string {
	set := map[string]bool{}
	for _, e := range m.half[s] {
		for _, it := range e.items {
			set[it.txn] = true
		}
	}
	return sortedKeys(set)
}

// halfValue is what half s counts on its own: each id once, by the half's
// owner copy or else by its forgotten copy, plus the second countings.
func (m *tModel) halfValue(s int) *big.Int {
	v := big.NewInt(m.recount[s])
	v.Add(v, m.base[s].Total.big())
	for _, x := range m.txnsOf(s) {
		if o, ok := ownerOf(m.held(s, x)); ok {
			v.Add(v, big.NewInt(o.amt))
		} else if a, ok := m.goneAmt(s, x); ok {
			v.Add(v, big.NewInt(a))
		}
	}
	return v
}

// value is P − N, an id held in both halves counting once, by its owner.
func (m *tModel) value() *big.Int {
	v := new(big.Int).Sub(m.halfValue(0), m.halfValue(1))
	for _, x := range m.txnsOf(0) {
		po, pok := ownerOf(m.held(0, x))
		no, nok := ownerOf(m.held(1, x))
		if !pok || !nok {
			continue
		}
		if _, s, _ := m.counted(x); s == 0 {
			v.Add(v, big.NewInt(no.amt)) // the debit's copy counts nothing
		} else {
			v.Sub(v, big.NewInt(po.amt))
		}
	}
	return v
}

func (m *tModel) status(x string) string {
	st := "unknown"
	for s := range m.half {
		for _, c := range m.held(s, x) {
			if c.folded {
				return "folded"
			}
			st = "in_history"
		}
	}
	return st
}

// conflicts lists the ids held with two amounts or in both halves.
func (m *tModel) conflicts() []tConflictJSON {
	var out []tConflictJSON
	set := map[string]bool{}
	for s := range m.half {
		for _, x := range m.txnsOf(s) {
			set[x] = true
		}
	}
	for _, x := range sortedKeys(set) {
		var all []tCopyJSON
		amts := map[int64]bool{}
		for s := range m.half {
			for _, c := range m.held(s, x) {
				all = append(all, tCopyJSON{c.actor, I64(signed(s, c.amt)), c.folded})
				amts[signed(s, c.amt)] = true
			}
		}
		if len(amts) > 1 {
			o, s, _ := m.counted(x)
			out = append(out, tConflictJSON{x, tCopyJSON{o.actor, I64(signed(s, o.amt)), o.folded}, all})
		}
	}
	return out
}

// plan is actor a's housekeeping of its entry in half s, read from the
// state before any of it is done: the entry's items afterwards, and whether
// they changed.
func (m *tModel) plan(s int, a string) ([]tItem, bool) {
	e := m.half[s][a]
	if e == nil {
		return nil, false
	}
	var out []tItem
	changed := false
	for _, it := range e.items {
		if !it.gone {
			if o, os, _ := m.counted(it.txn); os != s || o.actor != a {
				changed = true // not the owner's copy: dropped or unfolded
				continue
			}
		}
		out = append(out, it)
	}
	hist := 0
	for _, it := range out {
		if !it.gone && !it.folded {
			hist++
		}
	}
	for i := range out {
		if hist <= m.h {
			break
		}
		if !out[i].gone && !out[i].folded {
			out[i].folded, changed = true, true
			hist--
		}
	}
	var folded []int
	for i, it := range out {
		if it.folded && !it.gone {
			folded = append(folded, i)
		}
	}
	for _, i := range folded[:max(0, len(folded)-m.f)] {
		if len(m.held(0, out[i].txn))+len(m.held(1, out[i].txn)) == 1 {
			out[i].gone, changed = true, true
		}
	}
	return out, changed
}

// step predicts st's error, and the outcome of an apply or whether a
// compaction changes anything; it updates the model.
func (m *tModel) step(t *checker, typ string, ms map[string]*tModel, st Step) (errKind, outcome string, changed bool) {
	halves := 1
	if typ == "tpncounter" {
		halves = 2
	}
	switch st.Op {
	case "compact":
		a := idOf(t, st.Actor, st.ActorHex)
		if !validID(a) {
			return "invalid_actor", "", false
		}
		// SPEC.md 6.6: both plans first, each on the state before
		// either is carried out; a half with a non-empty plan and seq
		// MaxSeq fails the whole compaction.
		var plans [2][]tItem
		var ch [2]bool
		for s := 0; s < halves; s++ {
			plans[s], ch[s] = m.plan(s, a)
			if ch[s] && m.half[s][a].seq >= tMaxSeq {
				return "overflow", "", false
			}
		}
		for s := 0; s < halves; s++ {
			if ch[s] {
				e := m.half[s][a]
				e.items = plans[s]
				e.seq++
			}
		}
		return "", "", ch[0] || ch[1]
	case "fold":
		// SPEC.md 6.10: the retired entries retired before the cutoff
		// leave, their totals and forgot into the base, unless the
		// base's total would reach 2^126.
		c := int64(*st.Amount)
		any := false
		for s := 0; s < halves; s++ {
			cut := min(max(c, int64(m.base[s].Cutoff)), maxForgotNanos)
			total, forgot := m.base[s].Total.big(), m.base[s].Forgot
			var gone []string
			for _, a := range sortedKeys(m.half[s]) {
				e := m.half[s][a]
				if !e.retired || e.at == 0 || e.at >= cut {
					continue
				}
				en := m.entry(a, e)
				total.Add(total, big.NewInt(int64(en.Total)))
				forgot = max(forgot, en.Forgot)
				gone = append(gone, a)
			}
			if len(gone) == 0 || total.Cmp(new(big.Int).Lsh(big.NewInt(1), 126)) >= 0 {
				continue
			}
			for _, a := range gone {
				delete(m.half[s], a)
			}
			m.base[s] = tBase{Cutoff: I64(cut), Total: bigInt(total), Forgot: forgot}
			any = true
		}
		return "", "", any
	case "retire", "retire_at":
		// SPEC.md 6.10: Retire is RetireAll of the actor alone.
		a := idOf(t, st.Actor, st.ActorHex)
		if !validID(a) {
			return "invalid_actor", "", false
		}
		var at *int64
		if st.Op == "retire_at" {
			at = new(int64)
			*at = int64(*st.Amount)
		}
		return "", "", m.retireGroup(halves, map[string]bool{a: true}, at, nil)
	case "retire_all", "retire_late":
		group := map[string]bool{}
		for _, a := range st.Actors {
			if !validID(a) {
				return "invalid_actor", "", false
			}
			group[a] = true
		}
		if st.Op == "retire_all" {
			return "", "", m.retireGroup(halves, group, nil, nil)
		}
		// SPEC.md 6.10 RetireLateAt: RetireAllAt, and a copy of a late
		// transaction that one entry alone holds leaves without counting.
		at, late := int64(*st.Amount), map[string]bool{}
		for _, x := range st.Txns {
			late[x] = true
		}
		return "", "", m.retireGroup(halves, group, &at, late)
	case "merge":
		// SPEC.md 6.10: the larger base (cutoff, total, forgot) wins; per
		// actor the larger entry, gone when retired before its cutoff.
		next := m.clone()
		from := ms[st.From]
		for s := range next.half {
			if b := from.base[s]; cmpBase(b, next.base[s]) > 0 {
				next.base[s] = b
			}
			cut := int64(next.base[s].Cutoff)
			for a, e := range from.half[s] {
				if mine := next.half[s][a]; mine == nil || cmpEntries(m.entry(a, e), m.entry(a, mine)) > 0 {
					next.half[s][a] = &tEnt{seq: e.seq, items: slices.Clone(e.items), retired: e.retired, at: e.at}
				}
			}
			for a, e := range next.half[s] {
				if e.retired && e.at != 0 && e.at < cut {
					delete(next.half[s], a)
				}
			}
		}
		*m = *next // SPEC.md 6.5: Merge never refuses overflow
		return "", "", false
	case "apply":
	default:
		t.Fatalf("unknown op %q", st.Op)
	}
	a, x, n := idOf(t, st.Actor, st.ActorHex), idOf(t, st.Txn, ""), int64(*st.Amount)
	if typ == "tpncounter" && (n == 0 || n == math.MinInt64) {
		return "invalid_amount", "", false
	}
	switch {
	case !validID(a):
		return "invalid_actor", "", false
	case !validID(x):
		return "invalid_txn", "", false
	case n <= 0 && typ == "tgcounter":
		return "invalid_amount", "", false
	case m.timed && !refHasTime(x):
		return "invalid_txn", "", false
	case m.timed && m.skew > 0 && int64(refTimeUUID(x).Nanos) > m.now+m.skew:
		return "outside_window", "", false
	}
	s, mag := 0, n
	if n < 0 {
		s, mag = 1, -n
	}
	if _, _, known := m.counted(x); known {
		require.False(t, st.Beyond, "a beyond_window step retries %s, which is still known", x)
		o, os, _ := m.counted(x)
		switch {
		case signed(os, o.amt) == n && m.status(x) == "folded":
			return "", "duplicate_folded", false
		case signed(os, o.amt) == n:
			return "", "duplicate", false
		case slices.ContainsFunc(m.held(s, x), func(c tHeld) bool { return c.amt == mag }):
			return "", "superseded", false
		default:
			return "conflicting_transaction", "", false
		}
	}
	if m.timed && st.Beyond {
		// Unknown, and its time is not after the horizon: refused.
		return "outside_window", "", false
	}
	next := m.clone()
	if st.Beyond {
		// Forgotten and retried: the forgotten copy stays counted in its
		// holder's total, and the retry counts again.
		g, ok := next.goneAmt(s, x)
		require.True(t, ok, "a beyond_window step retries %s, which this half never forgot", x)
		next.recount[s] += g
	}
	e := next.half[s][a]
	// SPEC.md 6.3 step 5: the actor's own sum (total and history, before
	// its compaction) fits, and so does the value, unless it did not and
	// the change moves it towards int64.
	sum := big.NewInt(mag)
	if e != nil {
		for _, it := range e.items {
			sum.Add(sum, big.NewInt(it.amt))
		}
	}
	before := m.value()
	after := new(big.Int).Add(before, big.NewInt(n))
	if !sum.IsInt64() || (!after.IsInt64() && (before.IsInt64() || before.Sign() == after.Sign() && after.CmpAbs(before) > 0)) {
		return "overflow", "", false
	}
	if e == nil {
		e = &tEnt{}
		next.half[s][a] = e
	} else if e.seq >= tMaxSeq {
		return "overflow", "", false // SPEC.md 6.3 step 6
	} else {
		e.items, _ = next.plan(s, a)
	}
	e.items = append(e.items, tItem{txn: x, amt: mag})
	e.seq++
	e.retired = false
	*m = *next
	return "", "applied", false
}

// entries is the model's half s as listed in a vector: held items, and
// total = every folded or forgotten amount (an unfolded copy leaves the
// list, and with it the total).
func (m *tModel) entries(s int) []tEntry {
	out := []tEntry{}
	for _, a := range sortedKeys(m.half[s]) {
		out = append(out, m.entry(a, m.half[s][a]))
	}
	return out
}

// entry is one model entry as a vector lists it.
func (m *tModel) entry(a string, e *tEnt) tEntry {
	en := tEntry{Actor: a, Seq: U64(e.seq), History: []TxnJSON{}, Folded: []TxnJSON{}, Retired: e.retired, RetiredAt: I64(e.at)}
	for _, it := range e.items {
		switch {
		case it.gone:
			if tu := refTimeUUID(it.txn); m.timed && tu.Valid {
				en.Forgot = max(en.Forgot, tu.Nanos)
			}
		case it.folded:
			en.Folded = append(en.Folded, TxnJSON{it.txn, I64(it.amt)})
		default:
			en.History = append(en.History, TxnJSON{it.txn, I64(it.amt)})
		}
		if it.gone || it.folded {
			en.Total += I64(it.amt)
		}
	}
	return en
}

// cmpEntries is SPEC.md 6.5's merge order: seq, total, forgot, then
// history and folded compared as lists of (txn bytes, amount).
func cmpEntries(a, b tEntry) int {
	list := func(x, y []TxnJSON) int {
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := strings.Compare(x[i].Txn, y[i].Txn); c != 0 {
				return c
			}
			if c := cmpInt64(int64(x[i].Amount), int64(y[i].Amount)); c != 0 {
				return c
			}
		}
		return cmpInt(len(x), len(y))
	}
	switch {
	case a.Seq != b.Seq:
		if a.Seq < b.Seq {
			return -1
		}
		return 1
	case a.Total != b.Total:
		return cmpInt64(int64(a.Total), int64(b.Total))
	case a.Retired != b.Retired:
		// A retirement wins over the live entry of its seq (SPEC.md 6.10).
		if a.Retired {
			return 1
		}
		return -1
	case a.Forgot != b.Forgot:
		return cmpInt64(int64(a.Forgot), int64(b.Forgot))
	case a.Retired && a.RetiredAt != b.RetiredAt:
		// Two retirements of one entry: the earlier time wins; none
		// counts as the latest (SPEC.md 6.10).
		late := func(at I64) int64 {
			if at == 0 {
				return math.MaxInt64
			}
			return int64(at)
		}
		return cmpInt64(late(b.RetiredAt), late(a.RetiredAt))
	}
	if c := list(a.History, b.History); c != 0 {
		return c
	}
	return list(a.Folded, b.Folded)
}

// cmpBase is SPEC.md 6.10's order of bases: cutoff, then total, then
// forgot.
func cmpBase(a, b tBase) int {
	switch {
	case a.Cutoff != b.Cutoff:
		return cmpInt64(int64(a.Cutoff), int64(b.Cutoff))
	case a.Total != b.Total:
		return a.Total.big().Cmp(b.Total.big())
	}
	return cmpInt64(int64(a.Forgot), int64(b.Forgot))
}

// baseOf is the model's base of half s as a vector lists it.
func (m *tModel) baseOf(s int) *tBase {
	if m.base[s].Cutoff == 0 {
		return nil
	}
	b := m.base[s]
	return &b
}

// refTValue is the value SPEC.md gives a tgcounter (n nil) or tpncounter
// read from its listed entries alone: per half, the sum of the totals plus,
// for every id held, its owner's amount when the owner holds it in a
// history, or, when the owner folded it (its total counts it), minus the
// amount of every other folded copy; across halves, the losing half's owner
// copy counts nothing.
func refTValue(p, n []tEntry) *big.Int {
	half := func(es []tEntry) (*big.Int, map[string]tHeld) {
		v := new(big.Int)
		copies := map[string][]tHeld{}
		for _, e := range es {
			v.Add(v, big.NewInt(int64(e.Total)))
			for _, x := range e.History {
				copies[x.Txn] = append(copies[x.Txn], tHeld{e.Actor, int64(x.Amount), false})
			}
			for _, x := range e.Folded {
				copies[x.Txn] = append(copies[x.Txn], tHeld{e.Actor, int64(x.Amount), true})
			}
		}
		owners := map[string]tHeld{}
		for x, cs := range copies {
			o, _ := ownerOf(cs)
			owners[x] = o
			if !o.folded {
				v.Add(v, big.NewInt(o.amt))
				continue
			}
			for _, c := range cs {
				if c.folded && c.actor != o.actor {
					v.Sub(v, big.NewInt(c.amt))
				}
			}
		}
		return v, owners
	}
	pv, po := half(p)
	nv, no := half(n)
	v := new(big.Int).Sub(pv, nv)
	for x, a := range po {
		b, ok := no[x]
		if !ok {
			continue
		}
		if (b.folded && !a.folded) || (a.folded == b.folded && b.actor < a.actor) {
			v.Sub(v, big.NewInt(a.amt)) // the debit counts
		} else {
			v.Add(v, big.NewInt(b.amt))
		}
	}
	return v
}

// refT is the reference encoding of a tgcounter (one list of entries) or a
// tpncounter (p, n), in the oldest format version that expresses it
// (SPEC.md 6.8): 3 when an entry is retired or an id is a UUID in
// canonical lowercase text, 2 otherwise.
func refT(halves ...[]tEntry) refEnc { return refTB(nil, halves...) }

// refTB is refT with the halves' bases (bases[i] for halves[i]; nil or
// missing: none): version 4 when a half has a base or an entry a
// retirement time.
func refTB(bases []*tBase, halves ...[]tEntry) refEnc {
	v := 2
	for i, es := range halves {
		if i < len(bases) && bases[i] != nil {
			v = 4
		}
		for _, en := range es {
			if en.Retired {
				v = max(v, 3)
			}
			if en.RetiredAt != 0 {
				v = 4
			}
			for _, l := range [][]TxnJSON{en.History, en.Folded} {
				for _, x := range l {
					if _, ok := refUUID(x.Txn); ok {
						v = max(v, 3)
					}
				}
			}
		}
	}
	tag := "tgcounter"
	e := env(tag, uint64(v))
	if len(halves) == 2 {
		tag = "tpncounter"
		e = env(tag, uint64(v)).arr(2)
	}
	for i, es := range halves {
		if i < len(bases) && bases[i] != nil {
			b := bases[i]
			e = e.arr(len(es) + 1).arr(3).int(int64(b.Cutoff)).wide(b.Total.big()).int(int64(b.Forgot))
			e = refTEntriesV(e, es, v)
			continue
		}
		e = refTBodyV(e, es, v)
	}
	return e
}

// refUUID returns the 16 bytes of a UUID in canonical lowercase text
// (8-4-4-4-12 hex digits), read here without the codec's parser.
func refUUID(s string) ([]byte, bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' || strings.ToLower(s) != s {
		return nil, false
	}
	b, err := hex.DecodeString(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36])
	if err != nil {
		return nil, false
	}
	return b, true
}

// refTBodyV is a tgcounter body in format version v: entries of six fields
// in version 2, five (no forgot) in version 1.
func refTBodyV(e refEnc, es []tEntry, v int) refEnc {
	return refTEntriesV(e.arr(len(es)), es, v)
}

// refTEntriesV is the entries of a body (its header written).
func refTEntriesV(e refEnc, es []tEntry, v int) refEnc {
	for _, en := range es {
		switch {
		case v == 1:
			e = e.arr(5).str(en.Actor).uint(uint64(en.Seq)).int(int64(en.Total))
		case en.Retired && en.RetiredAt != 0:
			e = e.arr(5).str(en.Actor).uint(uint64(en.Seq)).int(int64(en.Total)).int(int64(en.Forgot)).int(int64(en.RetiredAt))
			continue
		case en.Retired:
			e = e.arr(4).str(en.Actor).uint(uint64(en.Seq)).int(int64(en.Total)).int(int64(en.Forgot))
			continue
		default:
			e = e.arr(6).str(en.Actor).uint(uint64(en.Seq)).int(int64(en.Total)).int(int64(en.Forgot))
		}
		for _, l := range [][]TxnJSON{en.History, en.Folded} {
			e = e.arr(len(l))
			for _, x := range l {
				if u, ok := refUUID(x.Txn); ok && v >= 3 {
					e = e.arr(2).bin(u).int(int64(x.Amount))
				} else {
					e = e.arr(2).str(x.Txn).int(int64(x.Amount))
				}
			}
		}
	}
	return e
}

func checkTPN(t *checker, raw []byte) {
	var f tFile
	readJSON(t, raw, &f)
	require.NotEmpty(t, f.Scenarios)
	for i := range f.Scenarios {
		sc := &f.Scenarios[i]
		t.Run(sc.Name, func(t *checker) {
			rs := runT(t, sc, false)
			ms := map[string]*tModel{}
			for _, r := range sc.Replicas {
				ms[r] = newTModel(sc.Options)
				if in, ok := sc.Initial[r]; ok {
					bases := in.bases(sc.Type)
					for s, es := range in.halves(t, sc.Type) {
						ms[r].load(t, s, es)
						if bases[s] != nil {
							ms[r].base[s] = *bases[s]
						}
					}
				}
			}
			if generated(sc.Steps) {
				checkTDigest(t, sc, rs)
				return
			}
			for j, st := range sc.Steps {
				if st.Beyond && sc.Options.TxnTime == "" {
					require.Len(t, sc.Replicas, 1, "untimed beyond_window steps are only modelled on one replica")
				}
				if st.Error == "too_large" {
					// Size limits are not part of the model; the step
					// changed nothing (checked by runT).
					continue
				}
				wantErr, outcome, changed := ms[st.Replica].step(t, sc.Type, ms, st)
				require.Equal(t, wantErr, st.Error, "model disagrees with vector at step %d", j)
				if st.Error == "" {
					switch st.Op {
					case "apply":
						require.Equal(t, outcome, st.Outcome, "model disagrees with vector at step %d", j)
					case "compact", "retire", "retire_at", "retire_all", "retire_late", "fold":
						require.NotNil(t, st.Changed, "step %d", j)
						require.Equal(t, changed, *st.Changed, "model disagrees with vector at step %d", j)
					}
				}
			}
			require.Len(t, sc.Final, len(rs))
			for name, want := range sc.Final {
				r, m := rs[name], ms[name]
				require.Equal(t, want.Hex, hex.EncodeToString(r.bytes()), "%s encoding", name)
				var ref refEnc
				total := func(b *tBase) *big.Int {
					if b == nil {
						return new(big.Int)
					}
					return b.Total.big()
				}
				if sc.Type == "tgcounter" {
					require.NotNil(t, want.Entries)
					ref = refTB([]*tBase{want.Base}, *want.Entries)
					require.Equal(t, *want.Entries, m.entries(0), "%s: entries vs model", name)
					require.Equal(t, want.Base, m.baseOf(0), "%s: base vs model", name)
					require.Equal(t, want.Value, bigInt(new(big.Int).Add(refTValue(*want.Entries, nil), total(want.Base))), "%s: value of the listed entries and base", name)
				} else {
					require.NotNil(t, want.P)
					ref = refTB([]*tBase{want.PBase, want.NBase}, *want.P, *want.N)
					require.Equal(t, *want.P, m.entries(0), "%s: credit entries vs model", name)
					require.Equal(t, *want.N, m.entries(1), "%s: debit entries vs model", name)
					require.Equal(t, want.PBase, m.baseOf(0), "%s: credit base vs model", name)
					require.Equal(t, want.NBase, m.baseOf(1), "%s: debit base vs model", name)
					v := new(big.Int).Add(refTValue(*want.P, *want.N), total(want.PBase))
					require.Equal(t, want.Value, bigInt(v.Sub(v, total(want.NBase))), "%s: value of the listed entries and bases", name)
				}
				require.Equal(t, want.Hex, ref.hex(), "%s: reference encoding of the listed entries", name)
				got := r.state()
				got.Value, got.Hex, got.Status = want.Value, want.Hex, want.Status
				require.Equal(t, want, got, "%s structured state", name)
				require.Equal(t, want.Conflicts, m.conflicts(), "%s: conflicts vs model", name)
				require.Equal(t, bigInt(m.value()), want.Value, "%s: value vs model", name)
				require.Equal(t, want.Value, bigInt(r.value()))
				require.True(t, r.decodeEqual(t, unhex(t, want.Hex)), "%s: decode(hex) != state", name)
				for x, s := range want.Status {
					require.Equal(t, s, statusNames[r.status(crdt.TxnID(x))], "%s status of %s", name, x)
					require.Equal(t, s, m.status(x), "%s status of %s vs model", name, x)
					if s != "unknown" {
						a, ok := r.amount(crdt.TxnID(x))
						require.True(t, ok)
						o, os, _ := m.counted(x)
						require.Equal(t, signed(os, o.amt), a, "%s amount of %s vs model", name, x)
					}
				}
			}
		})
	}
	require.NotEmpty(t, f.Version1)
	for _, c := range f.Version1 {
		t.Run("version 1/"+c.Name, func(t *checker) {
			require.Equal(t, c.Hex, refTBodyV(refTBodyV(env("tpncounter", 1).arr(2), c.P, 1), c.N, 1).hex(), "reference version 1 encoding")
			dec := must(tpncounter.New(tpncounter.Options{}))
			require.NoError(t, dec.UnmarshalBinary(unhex(t, c.Hex)))
			require.Equal(t, c.P, tEntries(dec.Positive()))
			require.Equal(t, c.N, tEntries(dec.Negative()))
			require.Equal(t, c.Reencoded, hex.EncodeToString(must(dec.MarshalBinary())))
			require.Equal(t, c.Reencoded, refT(c.P, c.N).hex(), "reference version 2 encoding")
		})
	}
	require.NotEmpty(t, f.TimeUUIDs)
	for _, c := range f.TimeUUIDs {
		require.Equal(t, c, refTimeUUID(c.ID), "reference TimeUUID of %q", c.ID)
		at, ok := tpncounter.TimeUUID(crdt.TxnID(c.ID))
		require.Equal(t, c.Valid, ok, c.ID)
		if ok {
			require.EqualValues(t, c.Nanos, at.UnixNano(), c.ID)
		}
	}
	require.NotEmpty(t, f.Decoded)
	for _, d := range f.Decoded {
		t.Run("decoded/"+d.Name, func(t *checker) {
			r := decodeT(t, d.Type, unhex(t, d.Hex))
			var ref refEnc
			var m *tModel
			if d.Type == "tgcounter" {
				require.NotNil(t, d.Entries)
				ref, m = refT(*d.Entries), modelOf(*d.Entries)
				require.Equal(t, d.Value, bigInt(refTValue(*d.Entries, nil)), "value of the listed entries")
			} else {
				require.NotNil(t, d.P)
				ref, m = refT(*d.P, *d.N), modelOf(*d.P, *d.N)
				require.Equal(t, d.Value, bigInt(refTValue(*d.P, *d.N)), "value of the listed entries")
			}
			require.Equal(t, d.Hex, ref.hex(), "reference encoding of the listed entries")
			require.Equal(t, d.Hex, hex.EncodeToString(r.bytes()), "re-encoding")
			got := r.state()
			require.Equal(t, d.Entries, got.Entries)
			require.Equal(t, d.P, got.P)
			require.Equal(t, d.N, got.N)
			require.Equal(t, d.Value, bigInt(r.value()))
			require.NotEmpty(t, d.Conflicts)
			require.Equal(t, d.Conflicts, got.Conflicts)
			require.Equal(t, d.Conflicts, m.conflicts(), "conflicts vs model")
		})
	}
	checkMalformed(t, f.Malformed)
	require.NotEmpty(t, f.Generated)
	checkGeneratedMerges(t, f.Merges)
	for _, g := range f.Generated {
		t.Run("generated decode/"+g.Name, func(t *checker) {
			// The model: at most 131072 entries, live or retired (not
			// MaxActors); each entry counts 1.
			var live, retired int
			for _, r := range g.Entries {
				if r.Retired {
					retired += r.Range.Count
				} else {
					live += r.Range.Count
				}
			}
			want := ""
			if live+retired > 131072 {
				want = "too_large"
			}
			require.Equal(t, want, g.Error, "model disagrees with the vector")
			got := g.decode(t)
			require.Equal(t, g.HexSHA256, got.HexSHA256, "input digest")
			requireKind(t, g.Error, errorOf(got.Error))
			if g.Error == "" {
				require.NotNil(t, g.Value)
				require.Equal(t, bigInt(big.NewInt(int64(live+retired))), *g.Value, "value vs model")
				require.Equal(t, *g.Value, *got.Value, "value decoded")
			}
		})
	}
}

// checkGeneratedMerges checks generated_merges against the real merge and
// a model: at most 4096 live entries and 65536 retired ones in the union.
func checkGeneratedMerges(t *checker, ms []tGeneratedMerge) {
	require.NotEmpty(t, ms)
	for _, g := range ms {
		t.Run("generated merge/"+g.Name, func(t *checker) {
			live, retired := map[string]bool{}, map[string]bool{}
			for _, rs := range [][]tEntryRange{g.Into, g.From} {
				for _, r := range rs {
					for _, id := range r.Range.ids() {
						require.False(t, live[id] || retired[id], "%s: actor %s in both states", g.Name, id)
						if r.Retired {
							retired[id] = true
						} else {
							live[id] = true
						}
					}
				}
			}
			want := ""
			if len(live)+len(retired) > 131072 {
				want = "too_large"
			}
			require.Equal(t, want, g.Error, "model disagrees with the vector")
			got := g.merge(t)
			requireKind(t, g.Error, errorOf(got.Error))
			if g.Error == "" {
				require.NotNil(t, g.Value)
				require.Equal(t, bigInt(big.NewInt(int64(len(live)+len(retired)))), *g.Value, "value vs model")
				require.Equal(t, *g.Value, *got.Value, "value merged")
				require.Equal(t, g.HexSHA256, got.HexSHA256, "merged encoding")
			}
		})
	}
}

// refTimeUUID is SPEC.md 6.1's TimeUUID, written from the RFC 4122 layout:
// 36 characters 8-4-4-4-12 of hex digits, version nibble 1, variant 10xx;
// the time is the 60-bit count of 100 ns intervals since 1582-10-15.
func refTimeUUID(id string) tTimeUUID {
	out := tTimeUUID{ID: id}
	if len(id) != 36 || id[8] != '-' || id[13] != '-' || id[18] != '-' || id[23] != '-' {
		return out
	}
	b, err := hex.DecodeString(strings.ReplaceAll(id, "-", ""))
	if err != nil || len(b) != 16 || b[6]>>4 != 1 || b[8]&0xc0 != 0x80 {
		return out
	}
	ticks := uint64(b[6]&0x0f)<<56 | uint64(b[7])<<48 | uint64(b[4])<<40 | uint64(b[5])<<32 |
		uint64(b[0])<<24 | uint64(b[1])<<16 | uint64(b[2])<<8 | uint64(b[3])
	const gregorianToUnix = 122192928000000000 // 100 ns intervals from 1582-10-15 to 1970-01-01
	if ticks <= gregorianToUnix || ticks-gregorianToUnix > math.MaxInt64/100 {
		return out // before 1970 or after 2262: outside the Unix-nanosecond range
	}
	out.Valid, out.Nanos = true, I64((int64(ticks)-gregorianToUnix)*100)
	return out
}

// refHasTime is SPEC.md 6.2's rule for a timed counter: an id has a time
// only when TimeUUID gives one in the years 1970 to 2261 (a TimeUUID time
// in 2262 is no time).
func refHasTime(id string) bool {
	tu := refTimeUUID(id)
	return tu.Valid && tu.Nanos > 0 && time.Unix(0, int64(tu.Nanos)).UTC().Year() <= 2261
}

// checkTDigest checks a generated scenario's digests against the replicas
// and against the plainest model, "every distinct transaction once": each
// replica's value is the sum of the amounts of the distinct txns applied to
// it or to a replica it merged (the full model is quadratic in the number
// of txns an entry holds, too slow for thousands).
func checkTDigest(t *checker, sc *tScenario, rs map[string]tReplica) {
	require.Empty(t, sc.Final)
	require.Equal(t, "tgcounter", sc.Type)
	applied := map[string]map[string]int64{}
	for _, r := range sc.Replicas {
		applied[r] = map[string]int64{}
	}
	for _, st := range expandSteps(sc.Steps) {
		switch {
		case st.Op == "apply" && st.Outcome == "applied":
			_, dup := applied[st.Replica][*st.Txn]
			require.False(t, dup, "%s applied twice", *st.Txn)
			applied[st.Replica][*st.Txn] = int64(*st.Amount)
		case st.Op == "apply" && (st.Outcome == "duplicate" || st.Outcome == "duplicate_folded"):
			require.Contains(t, applied[st.Replica], *st.Txn)
		case st.Op == "merge" && st.Error == "":
			for x, n := range applied[st.From] {
				applied[st.Replica][x] = n
			}
		}
	}
	require.Len(t, sc.FinalDigest, len(rs))
	for name, want := range sc.FinalDigest {
		r := rs[name]
		require.Equal(t, want.HexSHA256, sha256Hex(r.bytes()), "%s encoding", name)
		es := *r.state().Entries
		require.Equal(t, want.HexSHA256, sha256Hex(refT(es).b), "%s: reference encoding of the entries", name)
		require.Len(t, want.Txns, len(es))
		for _, e := range es {
			require.Equal(t, want.Txns[e.Actor], len(e.History)+len(e.Folded), "%s: txns of %s", name, e.Actor)
			require.LessOrEqual(t, want.Txns[e.Actor], 4096, "MaxEntriesPerActor")
		}
		var sum int64
		for _, n := range applied[name] {
			sum += n
		}
		require.Equal(t, bigInt(big.NewInt(sum)), want.Value, "%s: value vs every distinct transaction once", name)
		require.Equal(t, want.Value, bigInt(r.value()))
		require.Equal(t, want.Value, bigInt(refTValue(es, nil)), "%s: value of the entries", name)
	}
}
