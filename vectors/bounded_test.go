package vectors

// Vectors of the bounded counter (SPEC.md section 13):
// testdata/vectors/bounded.json. They are generated from the scenarios
// below by running them on package bounded, and checked by replaying every
// step against package bounded and, separately, against boundedModel, a
// plain model written from SPEC.md 13 with its own msgpack writer, which
// must reach every step's expectations and every final state and encoding
// on its own. Decode vectors are checked against package bounded's decoder
// (a valid one must re-encode to the same bytes); the model has no decoder:
// a scenario's initial state lists its entries, which the model loads and
// encodes, next to the hex that package bounded decodes.
//
//	go test ./vectors -run 'TestVectors/bounded' -update   # regenerate
//	go test ./vectors -run 'TestVectors/bounded'           # check

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/bounded"
	"github.com/counterkit/counterkit/crdt"
)

func init() {
	vectorFiles["bounded.json"] = struct {
		gen   func(t *testing.T) any
		check func(t *testing.T, raw []byte)
	}{genBoundedVectors, checkBoundedVectors}
}

type bvFile struct {
	Comment          string        `json:"comment"`
	Scenarios        []bvScenario  `json:"scenarios"`
	Decode           []bvDecode    `json:"decode"`
	GeneratedDecodes []bvGenerated `json:"generated_decodes"`
}

// bvGenerated is an encoding too big to list: bound 0, and one entry
// [id, 1, 0, 0, 1, [], []] (an actor that asked for 1 right) per id of
// each range, the ranges in order (their ids ascend). Decoding it gives
// Error or, when there is none, a state of Value that re-encodes to the
// same bytes (HexSHA256 is their digest).
type bvGenerated struct {
	Name      string    `json:"name"`
	Note      string    `json:"note,omitempty"`
	Entries   []bvRange `json:"entries"`
	Error     string    `json:"error,omitempty"`
	Value     string    `json:"value,omitempty"`
	HexSHA256 string    `json:"hex_sha256"`
}

// encode builds g's bytes with the model's msgpack writer.
func (g bvGenerated) encode() []byte {
	var ids []string
	for _, r := range g.Entries {
		ids = append(ids, r.ids()...)
	}
	var w bmWriter
	w.array(3)
	w.str("bounded")
	w.int(1)
	w.array(3)
	w.int(0)
	w.str("")
	w.array(len(ids))
	for _, a := range ids {
		w.array(7)
		w.str(a)
		for _, v := range []int64{1, 0, 0, 1} {
			w.int(v)
		}
		w.array(0)
		w.array(0)
	}
	return w.b
}

// decode decodes g's bytes with package bounded and returns what it gave.
func (g bvGenerated) decode(t *testing.T) bvGenerated {
	b := g.encode()
	g.HexSHA256 = sha256Hex(b)
	c, err := bounded.Decode(b, 0)
	g.Error, g.Value = bvKind(err), ""
	if err == nil {
		g.Value = c.BigValue().String()
		again, err := c.MarshalBinary()
		require.NoError(t, err)
		require.Equal(t, g.HexSHA256, sha256Hex(again), "%s: the re-encoding differs", g.Name)
	}
	return g
}

// bvGeneratedDecodes are the decodes at and beyond the actor cap.
func bvGeneratedDecodes() []bvGenerated {
	return []bvGenerated{
		{Name: "4096 entries", Note: "SPEC.md 13.2: at most 4096 entries an operation leaves; at that cap the state decodes",
			Entries: []bvRange{{Prefix: "a", First: 1, Count: 4096, Width: 4}}},
		{Name: "4097 entries", Note: "SPEC.md 13.2: past the cap of what an operation leaves, a merge's union decodes",
			Entries: []bvRange{{Prefix: "a", First: 1, Count: 4096, Width: 4}, {Prefix: "b", First: 1, Count: 1, Width: 1}}},
		{Name: "65536 entries", Note: "SPEC.md 13.4: at most 65,536 entries; at the cap the state decodes",
			Entries: []bvRange{{Prefix: "a", First: 1, Count: 65536, Width: 5}}},
		{Name: "65537 entries", Note: "one past the cap: too_large from the array header (3.2), before the entries are read",
			Entries: []bvRange{{Prefix: "a", First: 1, Count: 65536, Width: 5}, {Prefix: "b", First: 1, Count: 1, Width: 1}}},
	}
}

type bvScenario struct {
	Name     string   `json:"name"`
	Note     string   `json:"note,omitempty"`
	Bound    string   `json:"bound"`
	Origin   string   `json:"origin,omitempty"`
	Window   int      `json:"window"`
	Replicas []string `json:"replicas"`
	// ReplicaOptions gives some replicas another bound and origin than
	// the scenario's.
	ReplicaOptions map[string]bvReplicaOptions `json:"replica_options,omitempty"`
	// Initial gives some replicas a state to start from instead of the
	// empty one: its hex is decoded (SPEC.md 13.4), the other fields
	// describe it.
	Initial map[string]bvState `json:"initial,omitempty"`
	Steps   []bvStep           `json:"steps"`
	Final   map[string]bvState `json:"final,omitempty"`
	// FinalDigest replaces Final in a scenario with an actor_range step.
	FinalDigest map[string]bvDigest `json:"final_digest,omitempty"`
}

// bvDigest is a big final state: its value, its number of entries and the
// SHA-256 of its encoding.
type bvDigest struct {
	Value     string `json:"value"`
	Entries   int    `json:"entries"`
	HexSHA256 string `json:"hex_sha256"`
}

// bvRange is a generated list of ids (SPEC.md section 11): prefix followed
// by first, first+1, ... (count of them) in decimal, left-padded with zeros
// to width digits.
type bvRange struct {
	Prefix string `json:"prefix"`
	First  int    `json:"first"`
	Count  int    `json:"count"`
	Width  int    `json:"width"`
}

func (r bvRange) ids() []string {
	out := make([]string, r.Count)
	for i := range out {
		out[i] = fmt.Sprintf("%s%0*d", r.Prefix, r.Width, r.First+i)
	}
	return out
}

// expand returns the steps s stands for: itself, or one step per id of its
// actor_range or to_range, each with s's other fields and expectations.
func (s bvStep) expand() []bvStep {
	var ids []string
	var set func(x *bvStep, id string)
	switch {
	case s.ActorRange != nil:
		ids, set = s.ActorRange.ids(), func(x *bvStep, id string) { x.ActorRange, x.Actor = nil, id }
	case s.ToRange != nil:
		ids, set = s.ToRange.ids(), func(x *bvStep, id string) { x.ToRange, x.To = nil, id }
	default:
		return []bvStep{s}
	}
	out := make([]bvStep, len(ids))
	for k, id := range ids {
		out[k] = s
		set(&out[k], id)
	}
	return out
}

func (sc bvScenario) generated() bool {
	return slices.ContainsFunc(sc.Steps, func(s bvStep) bool { return s.ActorRange != nil || s.ToRange != nil })
}

type bvReplicaOptions struct {
	Bound  string `json:"bound"`
	Origin string `json:"origin,omitempty"`
}

// replicaConfig returns the bound and origin of replica r.
func (sc bvScenario) replicaConfig(r string) (bound, origin string) {
	if o, ok := sc.ReplicaOptions[r]; ok {
		return o.Bound, o.Origin
	}
	return sc.Bound, sc.Origin
}

type bvStep struct {
	Replica string `json:"replica"`
	Op      string `json:"op"` // apply, transfer, request, withdraw, retract, merge
	Actor   string `json:"actor,omitempty"`
	// ActorRange stands for one step per generated actor id (ToRange below
	// per recipient id).
	ActorRange *bvRange `json:"actor_range,omitempty"`
	Txn        string   `json:"txn,omitempty"`
	To         string   `json:"to,omitempty"`
	// ToRange (transfer) stands for one step per generated recipient id.
	ToRange *bvRange `json:"to_range,omitempty"`
	From    string   `json:"from,omitempty"` // merge: the replica merged in
	Amount  string   `json:"amount,omitempty"`
	// Expectations.
	Outcome   string `json:"outcome,omitempty"` // apply: applied, duplicate
	Changed   *bool  `json:"changed,omitempty"` // request, withdraw, retract
	Error     string `json:"error,omitempty"`
	Available string `json:"available,omitempty"` // insufficient_rights: what the actor may debit now
}

type bvState struct {
	Value       string            `json:"value"`
	Rights      map[string]string `json:"rights"`
	Outstanding map[string]string `json:"outstanding,omitempty"`
	Entries     []bvEntry         `json:"entries"`
	Hex         string            `json:"hex"`
}

type bvEntry struct {
	Actor   string            `json:"actor"`
	Seq     string            `json:"seq"`
	Credits string            `json:"credits"`
	Debits  string            `json:"debits"`
	Asked   string            `json:"asked"`
	Sent    map[string]string `json:"sent,omitempty"`
	Recent  [][2]string       `json:"recent"` // [txn, signed amount], oldest first
}

type bvDecode struct {
	Name  string `json:"name"`
	Hex   string `json:"hex"`
	Error string `json:"error,omitempty"`
	// Invariant names the invariant of SPEC.md 13.4 a well-formed state
	// breaks (bounded.InvariantError), when that is why it is refused.
	Invariant string `json:"invariant,omitempty"`
	Value     string `json:"value,omitempty"`
}

// bvInvariant returns the invariant err names, or "".
func bvInvariant(err error) string {
	var ie *bounded.InvariantError
	if errors.As(err, &ie) {
		return ie.Invariant
	}
	return ""
}

// Scenario programs: steps without expectations.
func bvPrograms() []bvScenario {
	ap := func(r, a, txn string, amt int64) bvStep {
		return bvStep{Replica: r, Op: "apply", Actor: a, Txn: txn, Amount: i64(amt)}
	}
	tr := func(r, a, to string, amt int64) bvStep {
		return bvStep{Replica: r, Op: "transfer", Actor: a, To: to, Amount: i64(amt)}
	}
	rq := func(r, a string, amt int64) bvStep {
		return bvStep{Replica: r, Op: "request", Actor: a, Amount: i64(amt)}
	}
	rqr := func(r string, ids bvRange, amt int64) bvStep {
		return bvStep{Replica: r, Op: "request", ActorRange: &ids, Amount: i64(amt)}
	}
	trr := func(r, a string, ids bvRange, amt int64) bvStep {
		return bvStep{Replica: r, Op: "transfer", Actor: a, ToRange: &ids, Amount: i64(amt)}
	}
	rt := func(r, a, txn string) bvStep { return bvStep{Replica: r, Op: "retract", Actor: a, Txn: txn} }
	wd := func(r, a string) bvStep { return bvStep{Replica: r, Op: "withdraw", Actor: a} }
	mg := func(r, from string) bvStep { return bvStep{Replica: r, Op: "merge", From: from} }
	return []bvScenario{
		{Name: "empty", Replicas: []string{"r"}},
		{Name: "credits and debits within rights", Replicas: []string{"r"}, Steps: []bvStep{
			ap("r", "a", "c1", 10), ap("r", "a", "d1", -4), ap("r", "a", "d2", -6), ap("r", "b", "c2", 3)}},
		{Name: "debit beyond rights refused", Note: "the error says what the actor may debit now; nothing changes",
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", 10), ap("r", "a", "d1", -11), ap("r", "b", "d2", -1), ap("r", "a", "d1", -10)}},
		{Name: "retries", Note: "a retry on any actor is a duplicate; another amount or sign conflicts",
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", 10), ap("r", "b", "c1", 10), ap("r", "b", "c1", 9), ap("r", "a", "c1", -10)}},
		{Name: "transfers", Replicas: []string{"r"}, Steps: []bvStep{
			ap("r", "a", "c1", 10), tr("r", "a", "b", 4), tr("r", "a", "b", 7), tr("r", "b", "c", 4),
			tr("r", "a", "a", 1), tr("r", "a", "b", 0), ap("r", "b", "d1", -1), ap("r", "c", "d2", -4)}},
		{Name: "requests", Note: "asked becomes received + n; outstanding = asked − received",
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", 10), rq("r", "b", 5), rq("r", "b", 3), tr("r", "a", "b", 2), rq("r", "b", 3), tr("r", "a", "b", 3), rq("r", "b", 0),
				rq("r", "b", 4), wd("r", "b"), wd("r", "b"), wd("r", "a"), wd("r", "")}},
		{Name: "negative bound", Note: "the origin holds −bound rights at the start",
			Bound: "-50", Origin: "bank", Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "bank", "d1", -30), tr("r", "bank", "a", 20), ap("r", "a", "d2", -20), ap("r", "bank", "d3", -1), ap("r", "a", "c1", 5)}},
		{Name: "concurrent debits on every actor", Note: "each within its own rights: the join stays at or above the bound",
			Replicas: []string{"r1", "r2", "r3"}, Steps: []bvStep{
				ap("r1", "a", "c1", 10), tr("r1", "a", "b", 4), mg("r2", "r1"), mg("r3", "r1"),
				ap("r1", "a", "d1", -6), ap("r2", "b", "d2", -4), ap("r3", "b", "d3", -1), ap("r3", "a", "d4", -1),
				mg("r1", "r2"), mg("r1", "r3"), mg("r2", "r1"), mg("r3", "r2")}},
		{Name: "merge keeps the newer entry", Replicas: []string{"r1", "r2"}, Steps: []bvStep{
			ap("r1", "a", "c1", 5), mg("r2", "r1"), ap("r1", "a", "c2", 5), mg("r1", "r2"), mg("r2", "r1"), mg("r2", "r2")}},
		{Name: "fork: one sequence number, two contents", Note: "only an actor running twice at once writes this; the larger content wins on both sides",
			Replicas: []string{"r1", "r2"}, Steps: []bvStep{
				ap("r1", "a", "c1", 5), ap("r2", "a", "c2", 7), mg("r1", "r2"), mg("r2", "r1")}},
		{Name: "one transaction held by two actors counts twice", Replicas: []string{"r1", "r2"}, Steps: []bvStep{
			ap("r1", "a", "x", 5), ap("r2", "b", "x", 5), mg("r1", "r2"), ap("r1", "c", "x", 5), rt("r1", "b", "x")}},
		{Name: "retract", Replicas: []string{"r"}, Steps: []bvStep{
			ap("r", "a", "c1", 10), ap("r", "a", "d1", -8), rt("r", "a", "c1"), rt("r", "a", "d1"), rt("r", "a", "c1"), rt("r", "a", "c1")}},
		{Name: "window", Note: "window 2: a retry after two later transactions of the holder counts again",
			Window: 2, Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "x", 5), ap("r", "a", "y", 1), ap("r", "b", "x", 5), ap("r", "a", "z", 1), ap("r", "b", "x", 5)}},
		{Name: "merge past int64", Note: "SPEC.md 13.1, 13.2: r1's a credits 2^63-1 (a credit of 1 by b or a more is overflow); r2's b, which could not see it, credits 2. Both merges succeed: the value is 2^63+1, kept. On r1 a credit of 1 by c is overflow (further past int64) and a retry of b's credit a duplicate; b's debit of 1 (to 2^63, towards int64) applies, c's credit is still overflow, b's debit of 1 more brings the value to 2^63-1; c's credit of 1 is overflow (2^63) until a debits 1, then it applies",
			Replicas: []string{"r1", "r2"}, Steps: []bvStep{
				ap("r1", "a", "c1", math.MaxInt64), ap("r1", "b", "c2", 1), ap("r1", "a", "c3", 1),
				ap("r2", "b", "c4", 2), mg("r2", "r1"), mg("r1", "r2"),
				ap("r1", "c", "c5", 1), ap("r1", "b", "c4", 2), ap("r1", "b", "d1", -1), ap("r1", "c", "c5", 1), ap("r1", "b", "d2", -1),
				ap("r1", "c", "c5", 1), ap("r1", "a", "d3", -1), ap("r1", "c", "c5", 1)}},
		{Name: "received and rights past int64", Note: "SPEC.md 13.1, 13.2: a on r1 and b on r2, which could not see each other, each credit 2^62+10 and give it to c; the merge holds a value, received(c) and rights(c) of 2^63+20 (rights, as an int64, read 2^63-1). c's request of 1 is overflow (asked would pass int64) and so is a's credit of 1 (the value further out); c's transfer of 5 to d applies (the value stays where it is, c's rights move back), and so does c's debit of 15 (value 2^63+5); d's transfer of 1 back to c, c's received and rights further out, is overflow; r2 merges r1",
			Replicas: []string{"r1", "r2"}, Steps: []bvStep{
				ap("r1", "a", "c1", 1<<62+10), tr("r1", "a", "c", 1<<62+10), ap("r2", "b", "c2", 1<<62+10), tr("r2", "b", "c", 1<<62+10),
				mg("r1", "r2"), rq("r1", "c", 1), ap("r1", "a", "c3", 1), tr("r1", "c", "d", 5), ap("r1", "c", "d1", -15), tr("r1", "d", "c", 1), mg("r2", "r1")}},
		{Name: "overflow of rights under a negative bound", Bound: "-10", Origin: "o", Replicas: []string{"r"}, Steps: []bvStep{
			ap("r", "a", "c1", math.MaxInt64), tr("r", "o", "a", 10), tr("r", "o", "b", 10)}},
		{Name: "available is never negative", Note: "a ran twice at once: r1's a gave b 10, which b spent; r2's a (same seq, larger credits) wins the merge, so b's rights are -10; a debit by b reports available 0, not -10",
			Replicas: []string{"r1", "r2"}, Steps: []bvStep{
				ap("r1", "a", "c1", 10), mg("r2", "r1"), tr("r1", "a", "b", 10), ap("r1", "b", "d1", -10), ap("r2", "a", "c2", 20),
				mg("r1", "r2"), ap("r1", "b", "d2", -1), tr("r1", "b", "a", 1)}},
		{Name: "request after a grant beyond what was asked", Note: "b asked 5 and received 7: a request of 1 sets asked to received + 1 = 8 (not asked + 1); a request of 0 more than received changes nothing",
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", 20), rq("r", "b", 5), tr("r", "a", "b", 7), rq("r", "b", 1), rq("r", "b", 1), wd("r", "b")}},
		{Name: "overflow of a request", Note: "b received 2^63-1: any request overflows received + n",
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", math.MaxInt64), tr("r", "a", "b", math.MaxInt64), rq("r", "b", 1), rq("r", "a", 1)}},
		{Name: "overflow of what one actor received", Note: "b received 2^63-1 from a and debits 1; the origin's grant of 1 more would make received(b) 2^63 although b's rights (2^63-1) would fit: overflow, nothing changes",
			Bound: "-1", Origin: "o", Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", math.MaxInt64), tr("r", "a", "b", math.MaxInt64), ap("r", "b", "d1", -1), tr("r", "o", "b", 1), tr("r", "o", "c", 1)}},
		{Name: "rights computed exactly", Note: "SPEC.md 13.1: only the result must fit. The origin o grants b 100; b credits 2^63-101 and gives a 2^63-1; o grants b 50 more: b's credits + received is 2^63+49, beyond int64, but its rights (minus what it gave) are 50, so the grant is accepted and b may debit 50. A credit of 1 by a, whose rights are 2^63-1, would make them 2^63: overflow, nothing changes",
			Bound: i64(-math.MaxInt64), Origin: "o", Replicas: []string{"r"}, Steps: []bvStep{
				tr("r", "o", "b", 100), ap("r", "b", "c1", math.MaxInt64-100), tr("r", "b", "a", math.MaxInt64), tr("r", "o", "b", 50),
				ap("r", "b", "d1", -51), ap("r", "b", "d1", -50), ap("r", "a", "c2", 1)}},
		// Forks decided by each field of the merge order in turn; each is
		// built so that skipping or reordering that field picks the other.
		{Name: "fork decided by debits", Note: "equal seq and credits: r2's a debited 4 (> 3) and wins, although r1's recent compares larger (z > a)",
			Replicas: []string{"r1", "r2"}, Steps: []bvStep{
				ap("r1", "a", "c1", 10), mg("r2", "r1"), ap("r1", "a", "z", -3), ap("r2", "a", "a", -4), mg("r1", "r2"), mg("r2", "r1")}},
		{Name: "fork decided by asked", Note: "equal seq, credits and debits: r1's a asked 5 (> 3) and wins",
			Replicas: []string{"r1", "r2"}, Steps: []bvStep{
				ap("r1", "a", "c1", 10), mg("r2", "r1"), rq("r1", "a", 5), rq("r2", "a", 3), mg("r1", "r2"), mg("r2", "r1")}},
		{Name: "fork decided by sent", Note: "equal seq, credits, debits and asked: sent compares as (recipient, amount) pairs, so r1's [(c, 1)] beats r2's [(b, 2)], although r2 gave more",
			Replicas: []string{"r1", "r2"}, Steps: []bvStep{
				ap("r1", "a", "c1", 10), mg("r2", "r1"), tr("r1", "a", "c", 1), tr("r2", "a", "b", 2), mg("r1", "r2"), mg("r2", "r1")}},
		{Name: "fork decided by recent", Note: "equal seq, credits, debits, asked and sent: recent compares as (id, amount) pairs oldest first, so r2's [c0, (y, 2), (x, 2)] beats r1's [c0, (x, 3), (y, 1)] (y > x), although r1's compares larger by amount first or sorted by id",
			Replicas: []string{"r1", "r2"}, Steps: []bvStep{
				ap("r1", "a", "c0", 1), mg("r2", "r1"), ap("r1", "a", "x", 3), ap("r1", "a", "y", 1), ap("r2", "a", "y", 2), ap("r2", "a", "x", 2), mg("r1", "r2"), mg("r2", "r1")}},
		{Name: "merge refuses another bound or origin", Note: "z has bound 0; o10 bound -10 with origin o; p10 bound -10 with origin p; o20 bound -20 with origin o. Every merge between two of them is invalid_config and changes nothing; o10 merges o10b, of its own bound and origin",
			Bound: "-10", Origin: "o", Replicas: []string{"z", "o10", "p10", "o20", "o10b"},
			ReplicaOptions: map[string]bvReplicaOptions{"z": {Bound: "0"}, "p10": {Bound: "-10", Origin: "p"}, "o20": {Bound: "-20", Origin: "o"}},
			Steps: []bvStep{
				ap("z", "a", "c1", 5), tr("o10", "o", "a", 3), tr("p10", "p", "a", 4), tr("o20", "o", "a", 6), ap("o10b", "b", "c2", 1),
				mg("z", "o10"), mg("o10", "z"), mg("o10", "p10"), mg("o10", "o20"), mg("o20", "o10"), mg("o10", "o10b")}},
		{Name: "4096 actors", Note: "SPEC.md 13.2: a new actor beyond 4096 is too_large; a merge whose union holds more than 4096 is accepted (writers that could not see each other), and its actors write. r1's 4096 actors a0001..a4096 each ask for 1 right; at the cap an entry still changes and b may receive rights (a recipient has no entry) but not spend them (its transfer would add an entry); r2 holds a0001..a4095 and b",
			Replicas: []string{"r1", "r2", "r3", "r4"}, Steps: []bvStep{
				rqr("r1", bvRange{Prefix: "a", First: 1, Count: 4096, Width: 4}, 1),
				rq("r1", "b", 1), ap("r1", "b", "t1", 5), ap("r1", "a4096", "t2", 5), tr("r1", "a4096", "b", 2), tr("r1", "b", "a0001", 1),
				rqr("r2", bvRange{Prefix: "a", First: 1, Count: 4095, Width: 4}, 1), rq("r2", "b", 1),
				mg("r1", "r2"), mg("r2", "r1"), mg("r3", "r1"), ap("r4", "b", "t3", 2), mg("r4", "r2"), mg("r4", "r1")}},
		{Name: "4096 recipients", Note: "SPEC.md 13.2 Transfer: an entry gives rights to at most 4096 recipients, the encoding's cap (13.4). a credits 5000 and gives 1 right to each of b0001..b4096; a 4097th recipient c is too_large and changes nothing, while a recipient it already gave to still receives more, and another actor may give to c",
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "t1", 5000), trr("r", "a", bvRange{Prefix: "b", First: 1, Count: 4096, Width: 4}, 1),
				tr("r", "a", "c", 1), tr("r", "a", "b0001", 2), ap("r", "d", "t2", 1), tr("r", "d", "c", 1)}},
		{Name: "invalid input", Replicas: []string{"r"}, Steps: []bvStep{
			ap("r", "", "t", 1), ap("r", "a", "", 1), ap("r", "a", "t", 0), ap("r", "a", "t", math.MinInt64),
			tr("r", "a", "", 1), rq("r", "", 1), ap("r", "a\x01", "t", 1)}},
		// Overflow of each total on its own (SPEC.md 13.1, 13.2), at the
		// limit accepted and one past it refused.
		{Name: "overflow of credits", Note: "a's credits reach 2^63-1, accepted; a debits 1, c credits 1 and debits 1. A credit of 1 by a would make its credits 2^63 although the value (2^63-1) and a's rights would fit: overflow, nothing changes",
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", math.MaxInt64-1), ap("r", "a", "c2", 1), ap("r", "a", "d1", -1), ap("r", "c", "c3", 1), ap("r", "c", "d2", -1), ap("r", "a", "c4", 1)}},
		{Name: "overflow of debits", Note: "a credits 2^63-1 and debits as much: its debits reach 2^63-1, accepted. b credits 1 and gives it to a; a debit of 1 by a, within its rights, would make its debits 2^63 although the value would fit: overflow, nothing changes",
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", math.MaxInt64), ap("r", "a", "d1", -(math.MaxInt64 - 1)), ap("r", "a", "d2", -1), ap("r", "b", "c2", 1), tr("r", "b", "a", 1), ap("r", "a", "d3", -1)}},
		{Name: "overflow of what one actor gave another", Note: "a credits 2^63-1 and gives b 2^63-2, then 1: sent[b] reaches 2^63-1, accepted. The origin o gives a 1; a transfer of 1 more from a to b would make sent[b] 2^63: overflow, nothing changes. (So is one to c: a's total given would be 2^63; a total given that fits keeps every sent amount within int64)",
			Bound: "-1", Origin: "o", Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", math.MaxInt64), tr("r", "a", "b", math.MaxInt64-1), tr("r", "a", "b", 1), tr("r", "o", "a", 1), tr("r", "a", "b", 1), tr("r", "a", "c", 1)}},
		{Name: "overflow of the total one actor gave", Note: "bound -150. o gives b 100; b credits 2^63-101 and gives a 2^63-1 (its rights are then 0); o gives b 50. b's total given is 2^63-1: a transfer of 1 to c would make it 2^63 although every sent amount, received total and rights would fit: overflow, nothing changes (what one entry gave must fit: a merge never adds to it); b may still debit its 50",
			Bound: "-150", Origin: "o", Replicas: []string{"r"}, Steps: []bvStep{
				tr("r", "o", "b", 100), ap("r", "b", "c1", math.MaxInt64-100), tr("r", "b", "a", math.MaxInt64), tr("r", "o", "b", 50),
				tr("r", "b", "c", 1), ap("r", "b", "d1", -50)}},
		{Name: "overflow of the value", Note: "a credits 2^63-1; a credit of 1 by b would take the value past int64 (2^63) although b's credits and rights (1) would fit: overflow, nothing changes; after a debit of 1 by a it is accepted. (A merge may take the value past int64: \"merge past int64\")",
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c1", math.MaxInt64), ap("r", "b", "c2", 1), ap("r", "a", "d1", -1), ap("r", "b", "c2", 1)}},
		{Name: "sequence number at its limit", Note: "r starts from a decoded state whose entry a is at seq 2^63-1: every change of a (apply, transfer, request, retract) is overflow and changes nothing; a retry of a's transaction is a duplicate and a withdraw with nothing outstanding changes nothing, neither writing; b still writes",
			Initial:  map[string]bvState{"r": {Entries: []bvEntry{{Actor: "a", Seq: i64(math.MaxInt64), Credits: "5", Debits: "0", Asked: "0", Recent: [][2]string{{"c1", "5"}}}}}},
			Replicas: []string{"r"}, Steps: []bvStep{
				ap("r", "a", "c2", 1), ap("r", "a", "d1", -1), tr("r", "a", "b", 1), rq("r", "a", 1), rt("r", "a", "c1"), ap("r", "a", "c1", 5), wd("r", "a"),
				ap("r", "b", "c3", 2), tr("r", "b", "a", 1)}},
		{Name: "fork decided by credits", Note: "equal seq: r1's a credited 7 (> 5) and wins, although r2's recent compares larger (z > a)",
			Replicas: []string{"r1", "r2"}, Steps: []bvStep{
				ap("r1", "a", "a", 7), ap("r2", "a", "z", 5), mg("r1", "r2"), mg("r2", "r1")}},
	}
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

func p64(t *testing.T, s string) int64 {
	t.Helper()
	if s == "" {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return v
}

// bvKind names an error's kind (SPEC.md 2.3).
func bvKind(err error) string {
	if err == nil {
		return ""
	}
	for _, k := range []struct {
		s error
		n string
	}{{crdt.ErrInsufficientRights, "insufficient_rights"}, {crdt.ErrInvalidActor, "invalid_actor"},
		{crdt.ErrInvalidTxnID, "invalid_txn"}, {crdt.ErrInvalidAmount, "invalid_amount"},
		{crdt.ErrOverflow, "overflow"}, {crdt.ErrConflictingTransaction, "conflicting_transaction"},
		{crdt.ErrInvalidConfig, "invalid_config"}, {crdt.ErrTooLarge, "too_large"},
		{crdt.ErrCorruptEncoding, "corrupt"}, {crdt.ErrUnsupportedVersion, "unsupported_version"},
		{crdt.ErrTypeMismatch, "type_mismatch"}} {
		if errors.Is(err, k.s) {
			return k.n
		}
	}
	return "unknown: " + err.Error()
}

// bvRun applies one step to the Go type and returns its expectations.
func bvRun(t *testing.T, reps map[string]*bounded.Counter, s bvStep) bvStep {
	c := reps[s.Replica]
	out := s
	out.Outcome, out.Changed, out.Error, out.Available = "", nil, "", ""
	var err error
	switch s.Op {
	case "apply":
		var o bounded.Outcome
		o, err = c.Apply(crdt.ActorID(s.Actor), crdt.TxnID(s.Txn), p64(t, s.Amount))
		if err == nil {
			out.Outcome = o.String()
		}
	case "transfer":
		err = c.Transfer(crdt.ActorID(s.Actor), crdt.ActorID(s.To), p64(t, s.Amount))
	case "request":
		var ch bool
		ch, err = c.Request(crdt.ActorID(s.Actor), p64(t, s.Amount))
		if err == nil {
			out.Changed = &ch
		}
	case "withdraw":
		var ch bool
		ch, err = c.Withdraw(crdt.ActorID(s.Actor))
		if err == nil {
			out.Changed = &ch
		}
	case "retract":
		var ch bool
		ch, err = c.Retract(crdt.ActorID(s.Actor), crdt.TxnID(s.Txn))
		if err == nil {
			out.Changed = &ch
		}
	case "merge":
		err = c.Merge(reps[s.From])
	default:
		t.Fatalf("unknown op %q", s.Op)
	}
	out.Error = bvKind(err)
	var short *bounded.InsufficientRightsError
	if errors.As(err, &short) {
		out.Available = i64(short.Available)
	}
	return out
}

func bvActors(c *bounded.Counter) []string {
	set := map[string]bool{}
	for _, a := range c.Actors() {
		set[string(a)] = true
		e, _ := c.Entry(a)
		for to := range e.Sent {
			set[string(to)] = true
		}
	}
	if o := c.Options().Origin; o != "" {
		set[string(o)] = true
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

func bvStateOf(t *testing.T, c *bounded.Counter) bvState {
	st := bvDescribe(c)
	b, err := c.MarshalBinary()
	require.NoError(t, err)
	st.Hex = hex.EncodeToString(b)
	return st
}

// bvDescribe is c as a vector shows it, without its bytes: the value, every
// actor's rights, the outstanding requests and the entries.
func bvDescribe(c *bounded.Counter) bvState {
	st := bvState{Value: c.BigValue().String(), Rights: map[string]string{}, Entries: []bvEntry{}}
	for _, a := range bvActors(c) {
		st.Rights[a] = i64(c.Rights(crdt.ActorID(a)))
		if o := c.Outstanding(crdt.ActorID(a)); o > 0 {
			if st.Outstanding == nil {
				st.Outstanding = map[string]string{}
			}
			st.Outstanding[a] = i64(o)
		}
	}
	for _, a := range c.Actors() {
		e, _ := c.Entry(a)
		be := bvEntry{Actor: string(a), Seq: strconv.FormatUint(e.Seq, 10), Credits: i64(e.Credits), Debits: i64(e.Debits), Asked: i64(e.Asked), Recent: [][2]string{}}
		for to, n := range e.Sent {
			if be.Sent == nil {
				be.Sent = map[string]string{}
			}
			be.Sent[string(to)] = i64(n)
		}
		for _, x := range e.Recent {
			be.Recent = append(be.Recent, [2]string{string(x.ID), i64(x.Amount)})
		}
		st.Entries = append(st.Entries, be)
	}
	return st
}

func bvOptions(t *testing.T, sc bvScenario, r string) bounded.Options {
	bound, origin := sc.replicaConfig(r)
	return bounded.Options{Bound: p64(t, bound), Origin: crdt.ActorID(origin), Window: sc.Window}
}

// bvReplica returns replica r of sc before its steps: empty, or decoded
// from its initial state, which the decoded counter must show.
func bvReplica(t *testing.T, sc bvScenario, r string) *bounded.Counter {
	opts := bvOptions(t, sc, r)
	st, ok := sc.Initial[r]
	if !ok {
		c, err := bounded.New(opts)
		require.NoError(t, err)
		return c
	}
	b, err := hex.DecodeString(st.Hex)
	require.NoError(t, err)
	c, err := bounded.Decode(b, sc.Window)
	require.NoError(t, err, "replica %s's initial state", r)
	require.Equal(t, opts.Bound, c.Options().Bound, "replica %s's initial state: bound", r)
	require.Equal(t, opts.Origin, c.Options().Origin, "replica %s's initial state: origin", r)
	require.Equal(t, st, bvStateOf(t, c), "replica %s's initial state on the Go type", r)
	return c
}

func genBoundedVectors(t *testing.T) any {
	f := bvFile{Comment: "Bounded (escrow) counter (SPEC.md section 13). Each scenario runs its steps in order on named replicas (all with the scenario's bound, origin and window, except that replica_options gives some replicas another bound and origin; window 0 means 64); a step's outcome, changed, error and available are what it must return; a failed step changes nothing. final gives every replica's value (exact: a merge may take it past int64), rights of every actor with an entry, a grant or the origin role (2^63-1 where they pass int64), outstanding requests, entries and encoding. A step with actor_range (or, for a transfer, to_range) stands for one step per generated id (SPEC.md section 11) as its actor (or recipient), each with the step's expectations; such a scenario gives final_digest (value, number of entries, SHA-256 of the encoding) instead of final. initial, when present, gives some replicas a state to start from instead of the empty one: decode its hex (SPEC.md 13.4); its other fields describe it. generated_decodes are encodings too big to list: bound 0 and one entry [id, 1, 0, 0, 1, [], []] per id of each range, in order."}
	for _, sc := range bvPrograms() {
		for r, st := range sc.Initial {
			bound, origin := sc.replicaConfig(r)
			m := newBoundedModel(p64(t, bound), origin, sc.Window)
			m.load(t, st.Entries)
			sc.Initial[r] = m.state()
		}
		reps := map[string]*bounded.Counter{}
		for _, r := range sc.Replicas {
			reps[r] = bvReplica(t, sc, r)
		}
		if sc.Bound == "" {
			sc.Bound = "0"
		}
		for i, s := range sc.Steps {
			for k, x := range s.expand() {
				got := bvRun(t, reps, x)
				if k == 0 {
					sc.Steps[i] = got
					sc.Steps[i].Actor, sc.Steps[i].ActorRange = s.Actor, s.ActorRange
					sc.Steps[i].To, sc.Steps[i].ToRange = s.To, s.ToRange
				} else {
					got.Actor, got.ActorRange = sc.Steps[i].Actor, sc.Steps[i].ActorRange
					got.To, got.ToRange = sc.Steps[i].To, sc.Steps[i].ToRange
					require.Equal(t, sc.Steps[i], got, "%s step %d.%d: a range step's expectations differ between its ids", sc.Name, i, k)
				}
			}
		}
		if sc.generated() {
			sc.FinalDigest = map[string]bvDigest{}
			for _, r := range sc.Replicas {
				sc.FinalDigest[r] = bvStateOf(t, reps[r]).digest()
			}
		} else {
			sc.Final = map[string]bvState{}
			for _, r := range sc.Replicas {
				sc.Final[r] = bvStateOf(t, reps[r])
			}
		}
		f.Scenarios = append(f.Scenarios, sc)
	}
	// Decodings: the valid ones re-encode to themselves; each invalid one
	// breaks one rule of SPEC.md 13.4.
	env := "93a7626f756e64656401"
	entry := func(actor, rest string) string { return "97" + hex.EncodeToString(msgpackStr(actor)) + rest }
	for _, d := range []bvDecode{
		{Name: "empty", Hex: env + "9300a090"},
		{Name: "one entry", Hex: env + "9300a091" + entry("a", "01"+"0a0400"+"90"+"92"+"92a2633105"+"92a264317c")},
		{Name: "negative bound with origin", Hex: env + "93ffa16f90"},
		{Name: "not an envelope", Hex: "c0"},
		{Name: "another tag", Hex: "93a9706e636f756e7465720290"},
		{Name: "a newer version", Hex: "93a7626f756e6465640290"},
		{Name: "bound above zero", Hex: env + "9301a090"},
		{Name: "negative bound without origin", Hex: env + "93ffa090"},
		{Name: "origin with bound zero", Hex: env + "9300a16f90"},
		{Name: "sequence number zero", Hex: env + "9300a091" + entry("a", "00"+"000000"+"9090")},
		{Name: "negative credits", Hex: env + "9300a091" + entry("a", "01"+"ff0000"+"9090")},
		{Name: "gives rights to itself", Hex: env + "9300a091" + entry("a", "01"+"050000"+"91"+"92a16101"+"90")},
		{Name: "gives nothing", Hex: env + "9300a091" + entry("a", "01"+"050000"+"91"+"92a16200"+"90")},
		{Name: "recipients out of order", Hex: env + "9300a091" + entry("a", "01"+"050000"+"92"+"92a16301"+"92a16201"+"90")},
		{Name: "recent credits above the total", Hex: env + "9300a091" + entry("a", "01"+"010000"+"90"+"91"+"92a17805")},
		{Name: "a transaction held twice by one entry", Hex: env + "9300a091" + entry("a", "01"+"020000"+"90"+"92"+"92a17801"+"92a17801")},
		{Name: "a zero amount", Hex: env + "9300a091" + entry("a", "01"+"010000"+"90"+"91"+"92a17800")},
		{Name: "entries out of order", Hex: env + "9300a092" + entry("b", "01010000"+"9090") + entry("a", "01010000"+"9090")},
		{Name: "an integer not in its smallest form", Hex: env + "9300a091" + entry("a", "01"+"cc050000"+"9090")},
		{Name: "value beyond int64", Hex: env + "9300a092" + entry("a", "01"+"cf7fffffffffffffff"+"0000"+"9090") + entry("b", "01010000"+"9090")},
		{Name: "received and rights beyond int64", Hex: env + "9300a092" + entry("a", "02"+"cf7fffffffffffffff"+"0000"+"91"+"92a163cf7fffffffffffffff"+"90") + entry("b", "02010000"+"91"+"92a16301"+"90")},
		// States no writer following SPEC.md 13 produces (13.4, invariants).
		{Name: "value below the bound", Hex: env + "9300a091" + entry("a", "01"+"010500"+"9090")},
		{Name: "rights below zero", Hex: env + "9300a091" + entry("a", "02"+"050000"+"91"+"92a16206"+"90")},
		{Name: "origin's rights below zero", Hex: env + "93fda16f91" + entry("o", "01"+"000000"+"91"+"92a16104"+"90")},
		{Name: "origin's rights at zero", Hex: env + "93fda16f91" + entry("o", "01"+"000000"+"91"+"92a16103"+"90")},
		{Name: "rights given beyond int64", Hex: env + "9300a091" + entry("b", "03"+"cf7fffffffffffffff"+"0000"+"92"+"92a161cf7fffffffffffffff"+"92a163cf7fffffffffffffff"+"90")},
		{Name: "sequence number below the writes shown", Hex: env + "9300a091" + entry("a", "01"+"030000"+"90"+"92"+"92a17801"+"92a17902")},
		{Name: "sequence number equal to the writes shown", Hex: env + "9300a091" + entry("a", "05"+"090401"+"91"+"92a16202"+"91"+"92a17801")},
		{Name: "an invalid recipient", Hex: env + "9300a091" + entry("a", "02"+"050000"+"91"+"92a10001"+"90")},
		{Name: "an invalid transaction id", Hex: env + "9300a091" + entry("a", "01"+"050000"+"90"+"91"+"92a1ff05")},
		// Caps (13.4): an array header over its cap is too_large before
		// the bytes it claims are read (3.2).
		{Name: "more than 4096 recipients", Hex: env + "9300a091" + entry("a", "01"+"050000"+"dc1001")},
		{Name: "more than 4096 recipients as array32", Hex: env + "9300a091" + entry("a", "01"+"050000"+"dd00001001")},
		{Name: "more than 1024 recent transactions", Hex: env + "9300a091" + entry("a", "01"+"050000"+"90"+"dc0401")},
		{Name: "trailing byte", Hex: env + "9300a09000"},
		{Name: "truncated", Hex: env + "9300a091"},
	} {
		b, err := hex.DecodeString(d.Hex)
		require.NoError(t, err)
		c, err := bounded.Decode(b, 0)
		d.Error = bvKind(err)
		d.Invariant = bvInvariant(err)
		if err == nil {
			d.Value = c.BigValue().String()
		}
		f.Decode = append(f.Decode, d)
	}
	for _, g := range bvGeneratedDecodes() {
		f.GeneratedDecodes = append(f.GeneratedDecodes, g.decode(t))
	}
	return f
}

// digest summarises a state as a generated scenario's final_digest does.
func (st bvState) digest() bvDigest {
	b, _ := hex.DecodeString(st.Hex)
	return bvDigest{Value: st.Value, Entries: len(st.Entries), HexSHA256: sha256Hex(b)}
}

func checkBoundedVectors(t *testing.T, raw []byte) {
	var f bvFile
	require.NoError(t, json.Unmarshal(raw, &f))
	require.NotEmpty(t, f.Scenarios)
	for _, sc := range f.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			reps := map[string]*bounded.Counter{}
			models := map[string]*boundedModel{}
			for _, r := range sc.Replicas {
				reps[r] = bvReplica(t, sc, r)
				bound, origin := sc.replicaConfig(r)
				models[r] = newBoundedModel(p64(t, bound), origin, sc.Window)
				if st, ok := sc.Initial[r]; ok {
					models[r].load(t, st.Entries)
					require.Equal(t, st, models[r].state(), "replica %s's initial state on the model", r)
				}
			}
			for i, s := range sc.Steps {
				for k, want := range s.expand() {
					got := bvRun(t, reps, want)
					require.Equal(t, want, got, "step %d.%d on the Go type", i, k)
					require.Equal(t, want, models[want.Replica].step(t, models, want), "step %d.%d on the model", i, k)
				}
			}
			if sc.generated() {
				require.Empty(t, sc.Final)
				require.Len(t, sc.FinalDigest, len(sc.Replicas))
				for _, r := range sc.Replicas {
					want := sc.FinalDigest[r]
					require.Equal(t, want, bvStateOf(t, reps[r]).digest(), "replica %s on the Go type", r)
					require.Equal(t, want, models[r].state().digest(), "replica %s on the model", r)
				}
				return
			}
			for _, r := range sc.Replicas {
				want := sc.Final[r]
				require.Equal(t, want, bvStateOf(t, reps[r]), "replica %s on the Go type", r)
				require.Equal(t, want, models[r].state(), "replica %s on the model", r)
			}
		})
	}
	require.NotEmpty(t, f.GeneratedDecodes)
	for _, g := range f.GeneratedDecodes {
		t.Run("generated_decode/"+g.Name, func(t *testing.T) {
			require.Equal(t, g, g.decode(t))
		})
	}
	for _, d := range f.Decode {
		t.Run("decode/"+d.Name, func(t *testing.T) {
			b, err := hex.DecodeString(d.Hex)
			require.NoError(t, err)
			c, err := bounded.Decode(b, 0)
			require.Equal(t, d.Error, bvKind(err))
			require.Equal(t, d.Invariant, bvInvariant(err), "%v", err)
			if err == nil {
				require.Equal(t, d.Value, c.BigValue().String())
				again, err := c.MarshalBinary()
				require.NoError(t, err)
				require.Equal(t, d.Hex, hex.EncodeToString(again))
			}
		})
	}
}

// boundedModel is SPEC.md 13 written plainly: maps, with the derived
// totals (value, received, rights, what an entry gave) computed exactly
// with big integers; an operation may not take one further past int64
// (what an entry gave must fit), a merge may.
type boundedModel struct {
	bound   int64
	origin  string
	window  int
	entries map[string]*bmEntry
	// givers lists the actors whose entry gave rights, when known, so
	// that received totals need not visit every entry.
	givers []string
}

type bmEntry struct {
	seq                    uint64
	credits, debits, asked int64
	sent                   map[string]int64
	recent                 [][2]any // txn string, amount int64
}

func newBoundedModel(bound int64, origin string, window int) *boundedModel {
	if window == 0 {
		window = 64
	}
	return &boundedModel{bound: bound, origin: origin, window: window, entries: map[string]*bmEntry{}}
}

func (m *boundedModel) clone() *boundedModel {
	n := *m
	n.givers = nil
	n.entries = map[string]*bmEntry{}
	for a, e := range m.entries {
		c := *e
		c.sent = map[string]int64{}
		for k, v := range e.sent {
			c.sent[k] = v
		}
		c.recent = slices.Clone(e.recent)
		n.entries[a] = &c
	}
	return &n
}

// load sets the model's entries to es, as a vector lists them.
func (m *boundedModel) load(t *testing.T, es []bvEntry) {
	for _, be := range es {
		seq, err := strconv.ParseUint(be.Seq, 10, 64)
		require.NoError(t, err)
		e := &bmEntry{seq: seq, credits: p64(t, be.Credits), debits: p64(t, be.Debits), asked: p64(t, be.Asked), sent: map[string]int64{}}
		for to, n := range be.Sent {
			e.sent[to] = p64(t, n)
		}
		for _, x := range be.Recent {
			e.recent = append(e.recent, [2]any{x[0], p64(t, x[1])})
		}
		m.entries[be.Actor] = e
	}
	m.givers = nil
}

// add returns a+b and whether it fits in int64.
func add(a, b int64) (int64, bool) {
	s := a + b
	return s, (b >= 0) == (s >= a)
}

// exact returns x as an int64, math.MaxInt64 or math.MinInt64 when it does
// not fit (SPEC.md 13.1), and whether it fits.
func exact(x *big.Int) (int64, bool) {
	switch {
	case x.IsInt64():
		return x.Int64(), true
	case x.Sign() > 0:
		return math.MaxInt64, false
	}
	return math.MinInt64, false
}

// bigReceived is what the other entries gave i, exactly.
func (m *boundedModel) bigReceived(i string) *big.Int {
	if m.givers == nil {
		m.givers = []string{}
		for a, e := range m.entries {
			if len(e.sent) > 0 {
				m.givers = append(m.givers, a)
			}
		}
	}
	r := new(big.Int)
	for _, a := range m.givers {
		if n, ok := m.entries[a].sent[i]; ok && a != i {
			r.Add(r, big.NewInt(n))
		}
	}
	return r
}

// received returns what the other entries gave i, and whether it fits.
func (m *boundedModel) received(i string) (int64, bool) { return exact(m.bigReceived(i)) }

// rights returns i's rights, computed exactly (SPEC.md 13.1: no partial
// sum needs to fit, only the result), and whether they fit.
func (m *boundedModel) rights(i string) (int64, bool) { return m.rightsGiven(i, m.bigReceived(i)) }

// rightsGiven is rights(i) when i received recv.
func (m *boundedModel) rightsGiven(i string, recv *big.Int) (int64, bool) {
	return exact(m.bigRights(i, recv))
}

// bigRights is rights(i), exactly, when i received recv.
func (m *boundedModel) bigRights(i string, recv *big.Int) *big.Int {
	r := new(big.Int).Set(recv)
	if i == m.origin && m.origin != "" {
		r.Sub(r, big.NewInt(m.bound))
	}
	if e := m.entries[i]; e != nil {
		r.Add(r, big.NewInt(e.credits))
		r.Sub(r, big.NewInt(e.debits))
		for _, n := range e.sent {
			r.Sub(r, big.NewInt(n))
		}
	}
	return r
}

// value returns Σ credits − Σ debits (clamped) and whether it fits.
func (m *boundedModel) value() (int64, bool) { return exact(m.bigValue()) }

// bigValue is the value, exactly.
func (m *boundedModel) bigValue() *big.Int {
	v := new(big.Int)
	for _, e := range m.entries {
		v.Add(v, big.NewInt(e.credits))
		v.Sub(v, big.NewInt(e.debits))
	}
	return v
}

// totalsOf returns the derived totals SPEC.md 13.1 names that a change
// of actors' entries or grants can move, exactly: the value (key "") and
// the received ("received " + a) and rights ("rights " + a) of each of
// actors.
func (m *boundedModel) totalsOf(actors []string) map[string]*big.Int {
	out := map[string]*big.Int{"": m.bigValue()}
	for _, a := range actors {
		r := m.bigReceived(a)
		out["received "+a], out["rights "+a] = r, m.bigRights(a, r)
	}
	return out
}

// further reports whether after is past int64 and further from it than
// before (nil: 0), which SPEC.md 13.2 refuses.
func further(before, after *big.Int) bool {
	if before == nil {
		before = new(big.Int)
	}
	d := new(big.Int).Sub(after, before)
	return !after.IsInt64() && d.Sign() != 0 && d.Sign() == after.Sign()
}

func (m *boundedModel) actors() []string {
	set := map[string]bool{}
	for a, e := range m.entries {
		set[a] = true
		for to := range e.sent {
			set[to] = true
		}
	}
	if m.origin != "" {
		set[m.origin] = true
	}
	var out []string
	for a := range set {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}

func bvValidID(s string) bool { return crdt.CheckID(s) == "" }

// holders returns the amounts held for txn.
func (m *boundedModel) holders(txn string) []int64 {
	var out []int64
	for _, e := range m.entries {
		for _, x := range e.recent {
			if x[0].(string) == txn {
				out = append(out, x[1].(int64))
			}
		}
	}
	return out
}

// next returns a copy of a's entry with seq + 1 (a new one at 1).
// next returns a copy of a's entry with the next sequence number, or nil
// when its sequence number is 2^63−1 (SPEC.md 13.2: overflow).
func (m *boundedModel) next(a string) *bmEntry {
	e := m.entries[a]
	if e == nil {
		return &bmEntry{seq: 1, sent: map[string]int64{}}
	}
	if e.seq == math.MaxInt64 {
		return nil
	}
	c := *e
	c.seq++
	c.sent = map[string]int64{}
	for k, v := range e.sent {
		c.sent[k] = v
	}
	c.recent = slices.Clone(e.recent)
	return &c
}

// bmMaxActors is the most entries an operation leaves, bmMaxMerged the
// most a merge or a decoder accepts (SPEC.md 13.2, 13.4).
const (
	bmMaxActors = 4096
	bmMaxMerged = 1 << 16
)

// commit installs e as a's entry if a new actor stays within the cap
// (else "too_large") and, when totals is set, what e gave fits and no
// derived total goes past int64 or further past it (else "overflow").
// Request and Withdraw change only asked, which no derived total includes.
func (m *boundedModel) commit(a string, e *bmEntry, totals bool) string {
	old := m.entries[a]
	if old == nil && len(m.entries) >= bmMaxActors {
		return "too_large"
	}
	// Only the value and the totals of a and of those a now gives a
	// different amount can change.
	touched := []string{a}
	for to, n := range e.sent {
		if old == nil || old.sent[to] != n {
			touched = append(touched, to)
		}
	}
	if old != nil {
		for to := range old.sent {
			if _, ok := e.sent[to]; !ok {
				touched = append(touched, to)
			}
		}
	}
	var before map[string]*big.Int
	if totals {
		before = m.totalsOf(touched)
	}
	if len(e.sent) > 0 || old != nil && len(old.sent) > 0 {
		m.givers = nil
	}
	m.entries[a] = e
	given := new(big.Int)
	for _, n := range e.sent {
		given.Add(given, big.NewInt(n))
	}
	moved := false
	if totals {
		for k, v := range m.totalsOf(touched) {
			moved = moved || further(before[k], v)
		}
	}
	if totals && (!given.IsInt64() || moved) {
		if old == nil {
			delete(m.entries, a)
		} else {
			m.entries[a] = old
		}
		m.givers = nil
		return "overflow"
	}
	return ""
}

func (m *boundedModel) available(a string) string {
	r, _ := m.rights(a)
	return i64(max(0, r))
}

func (m *boundedModel) step(t *testing.T, all map[string]*boundedModel, s bvStep) bvStep {
	out := s
	out.Outcome, out.Changed, out.Error, out.Available = "", nil, "", ""
	amt := p64(t, s.Amount)
	yes, no := true, false
	switch s.Op {
	case "apply":
		switch {
		case !bvValidID(s.Actor):
			out.Error = "invalid_actor"
		case !bvValidID(s.Txn):
			out.Error = "invalid_txn"
		case amt == 0 || amt == math.MinInt64:
			out.Error = "invalid_amount"
		case len(m.holders(s.Txn)) > 0:
			if slices.Contains(m.holders(s.Txn), amt) {
				out.Outcome = "duplicate"
			} else {
				out.Error = "conflicting_transaction"
			}
		default:
			if r, _ := m.rights(s.Actor); amt < 0 && r < -amt {
				out.Error, out.Available = "insufficient_rights", m.available(s.Actor)
				break
			}
			e := m.next(s.Actor)
			if e == nil {
				out.Error = "overflow"
				break
			}
			var ok bool
			if amt > 0 {
				e.credits, ok = add(e.credits, amt)
			} else {
				e.debits, ok = add(e.debits, -amt)
			}
			if !ok {
				out.Error = "overflow"
				break
			}
			e.recent = append(e.recent, [2]any{s.Txn, amt})
			if len(e.recent) > m.window {
				e.recent = e.recent[len(e.recent)-m.window:]
			}
			if out.Error = m.commit(s.Actor, e, true); out.Error == "" {
				out.Outcome = "applied"
			}
		}
	case "transfer":
		switch {
		case !bvValidID(s.Actor) || !bvValidID(s.To) || s.Actor == s.To:
			out.Error = "invalid_actor"
		case amt <= 0:
			out.Error = "invalid_amount"
		default:
			if r, _ := m.rights(s.Actor); r < amt {
				out.Error, out.Available = "insufficient_rights", m.available(s.Actor)
				break
			}
			e := m.next(s.Actor)
			if e == nil {
				out.Error = "overflow"
				break
			}
			if _, ok := e.sent[s.To]; !ok && len(e.sent) >= 4096 {
				out.Error = "too_large" // the encoding's cap on recipients (13.4)
				break
			}
			var ok bool
			if e.sent[s.To], ok = add(e.sent[s.To], amt); !ok {
				out.Error = "overflow"
				break
			}
			out.Error = m.commit(s.Actor, e, true)
		}
	case "request":
		switch {
		case !bvValidID(s.Actor):
			out.Error = "invalid_actor"
		case amt <= 0:
			out.Error = "invalid_amount"
		default:
			recv, _ := m.received(s.Actor)
			want, ok := add(recv, amt)
			switch {
			case !ok:
				out.Error = "overflow"
			case m.entries[s.Actor] != nil && m.entries[s.Actor].asked >= want:
				out.Changed = &no
			case m.next(s.Actor) == nil:
				out.Error = "overflow"
			default:
				e := m.next(s.Actor)
				e.asked = want
				if out.Error = m.commit(s.Actor, e, false); out.Error == "" {
					out.Changed = &yes
				}
			}
		}
	case "withdraw":
		recv, _ := m.received(s.Actor)
		switch e := m.entries[s.Actor]; {
		case !bvValidID(s.Actor):
			out.Error = "invalid_actor"
		case e == nil || e.asked <= recv:
			out.Changed = &no
		case m.next(s.Actor) == nil:
			out.Error = "overflow"
		default:
			n := m.next(s.Actor)
			n.asked = recv
			if out.Error = m.commit(s.Actor, n, false); out.Error == "" {
				out.Changed = &yes
			}
		}
	case "retract":
		e := m.entries[s.Actor]
		i := -1
		if e != nil {
			i = slices.IndexFunc(e.recent, func(x [2]any) bool { return x[0].(string) == s.Txn })
		}
		if i < 0 {
			out.Changed = &no
			break
		}
		x := e.recent[i][1].(int64)
		if r, _ := m.rights(s.Actor); x > 0 && r < x {
			out.Error, out.Available = "insufficient_rights", m.available(s.Actor)
			break
		}
		n := m.next(s.Actor)
		if n == nil {
			out.Error = "overflow"
			break
		}
		if x > 0 {
			n.credits -= x
		} else {
			n.debits += x
		}
		n.recent = slices.Delete(n.recent, i, i+1)
		if out.Error = m.commit(s.Actor, n, true); out.Error == "" {
			out.Changed = &yes
		}
	case "merge":
		other := all[s.From]
		if other.bound != m.bound || other.origin != m.origin {
			out.Error = "invalid_config"
			break
		}
		saved := m.clone()
		for a, e := range other.clone().entries {
			if mine := m.entries[a]; mine == nil || e.seq > mine.seq || (e.seq == mine.seq && bmCompare(e, mine) > 0) {
				m.entries[a] = e
			}
		}
		m.givers = nil
		if len(m.entries) > bmMaxMerged {
			*m = *saved
			out.Error = "too_large"
		}
	}
	return out
}

// bmCompare orders two versions of one entry with one seq (SPEC.md 13.2).
func bmCompare(a, b *bmEntry) int {
	for _, c := range [][2]int64{{a.credits, b.credits}, {a.debits, b.debits}, {a.asked, b.asked}} {
		if c[0] != c[1] {
			if c[0] < c[1] {
				return -1
			}
			return 1
		}
	}
	pairs := func(e *bmEntry) [][2]any {
		var out [][2]any
		for _, k := range sortedKeys(e.sent) {
			out = append(out, [2]any{k, e.sent[k]})
		}
		return out
	}
	if c := cmpPairs(pairs(a), pairs(b)); c != 0 {
		return c
	}
	return cmpPairs(a.recent, b.recent)
}

func cmpPairs(a, b [][2]any) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if x, y := a[i][0].(string), b[i][0].(string); x != y {
			if x < y {
				return -1
			}
			return 1
		}
		if x, y := a[i][1].(int64), b[i][1].(int64); x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

func (m *boundedModel) state() bvState {
	st := bvState{Value: m.bigValue().String(), Rights: map[string]string{}, Entries: []bvEntry{}}
	got := map[string]*big.Int{} // what each actor received: one pass
	for a, e := range m.entries {
		for to, n := range e.sent {
			if to != a {
				if got[to] == nil {
					got[to] = new(big.Int)
				}
				got[to].Add(got[to], big.NewInt(n))
			}
		}
	}
	for _, a := range m.actors() {
		bigRecv := got[a]
		if bigRecv == nil {
			bigRecv = new(big.Int)
		}
		r, _ := m.rightsGiven(a, bigRecv)
		st.Rights[a] = i64(r)
		recv, _ := exact(bigRecv)
		if e := m.entries[a]; e != nil && e.asked > recv {
			if st.Outstanding == nil {
				st.Outstanding = map[string]string{}
			}
			st.Outstanding[a] = i64(e.asked - recv)
		}
	}
	var names []string
	for a := range m.entries {
		names = append(names, a)
	}
	slices.Sort(names)
	// The encoding, written by hand from SPEC.md 13.4.
	var w bmWriter
	w.array(3)
	w.str("bounded")
	w.int(1)
	w.array(3)
	w.int(m.bound)
	w.str(m.origin)
	w.array(len(names))
	for _, a := range names {
		e := m.entries[a]
		be := bvEntry{Actor: a, Seq: strconv.FormatUint(e.seq, 10), Credits: i64(e.credits), Debits: i64(e.debits), Asked: i64(e.asked), Recent: [][2]string{}}
		w.array(7)
		w.str(a)
		w.int(int64(e.seq))
		w.int(e.credits)
		w.int(e.debits)
		w.int(e.asked)
		keys := sortedKeys(e.sent)
		w.array(len(keys))
		for _, k := range keys {
			if be.Sent == nil {
				be.Sent = map[string]string{}
			}
			be.Sent[k] = i64(e.sent[k])
			w.array(2)
			w.str(k)
			w.int(e.sent[k])
		}
		w.array(len(e.recent))
		for _, x := range e.recent {
			be.Recent = append(be.Recent, [2]string{x[0].(string), i64(x[1].(int64))})
			w.array(2)
			w.str(x[0].(string))
			w.int(x[1].(int64))
		}
		st.Entries = append(st.Entries, be)
	}
	st.Hex = hex.EncodeToString(w.b)
	return st
}

// bmWriter is a msgpack writer for the model: arrays, strings and integers
// in their smallest forms (SPEC.md 3.2).
type bmWriter struct{ b []byte }

func (w *bmWriter) array(n int) {
	switch {
	case n < 16:
		w.b = append(w.b, 0x90|byte(n))
	case n <= math.MaxUint16:
		w.b = append(w.b, 0xdc, byte(n>>8), byte(n))
	default:
		w.b = append(w.b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

func (w *bmWriter) str(s string) {
	switch n := len(s); {
	case n < 32:
		w.b = append(w.b, 0xa0|byte(n))
	case n < 256:
		w.b = append(w.b, 0xd9, byte(n))
	default:
		w.b = append(w.b, 0xda, byte(n>>8), byte(n))
	}
	w.b = append(w.b, s...)
}

func (w *bmWriter) int(v int64) {
	be := func(code byte, x uint64, size int) {
		w.b = append(w.b, code)
		for i := size - 1; i >= 0; i-- {
			w.b = append(w.b, byte(x>>(8*i)))
		}
	}
	switch {
	case v >= 0 && v <= 127:
		w.b = append(w.b, byte(v))
	case v < 0 && v >= -32:
		w.b = append(w.b, byte(v))
	case v >= 0 && v <= math.MaxUint8:
		be(0xcc, uint64(v), 1)
	case v >= 0 && v <= math.MaxUint16:
		be(0xcd, uint64(v), 2)
	case v >= 0 && v <= math.MaxUint32:
		be(0xce, uint64(v), 4)
	case v >= 0:
		be(0xcf, uint64(v), 8)
	case v >= math.MinInt8:
		be(0xd0, uint64(v), 1)
	case v >= math.MinInt16:
		be(0xd1, uint64(v), 2)
	case v >= math.MinInt32:
		be(0xd2, uint64(v), 4)
	default:
		be(0xd3, uint64(v), 8)
	}
}

// TestBoundedInitialStateChecked shows that a scenario's initial state is
// checked on both sides: a hex that does not encode the listed entries (here
// seq 2^63-2 where the entries say 2^63-1) is caught by the Go type, which
// decodes it, and by the model, which encodes the entries.
func TestBoundedInitialStateChecked(t *testing.T) {
	progs := bvPrograms()
	i := slices.IndexFunc(progs, func(sc bvScenario) bool { return sc.Name == "sequence number at its limit" })
	require.GreaterOrEqual(t, i, 0)
	m := newBoundedModel(0, "", progs[i].Window)
	m.load(t, progs[i].Initial["r"].Entries)
	good := m.state()
	bad := good
	bad.Hex = strings.Replace(good.Hex, "cf7fffffffffffffff", "cf7ffffffffffffffe", 1)
	require.NotEqual(t, good.Hex, bad.Hex)
	for _, st := range []bvState{good, bad} {
		b, err := hex.DecodeString(st.Hex)
		require.NoError(t, err)
		c, err := bounded.Decode(b, 0)
		require.NoError(t, err)
		if st.Hex == good.Hex {
			require.Equal(t, st, bvStateOf(t, c))
		} else {
			require.NotEqual(t, st, bvStateOf(t, c))
		}
	}
	require.NotEqual(t, bad, m.state())

	// The model's limit: a change of the entry at 2^63-1 is overflow, one
	// below it is applied.
	ap := bvStep{Replica: "r", Op: "apply", Actor: "a", Txn: "c2", Amount: "1"}
	require.Equal(t, "overflow", m.step(t, nil, ap).Error)
	below := slices.Clone(progs[i].Initial["r"].Entries)
	below[0].Seq = i64(math.MaxInt64 - 1)
	m = newBoundedModel(0, "", progs[i].Window)
	m.load(t, below)
	require.Equal(t, "applied", m.step(t, nil, ap).Outcome)
}
