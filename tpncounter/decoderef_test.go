package tpncounter

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/testsize"
	"github.com/counterkit/counterkit/internal/wire"
)

// The reference decoder is the straightforward one the package had before
// decoding was made to allocate each part of the state once (it collects
// every entry's transactions in []Txn lists and a map, then builds the entry
// with entryFrom), plus the MaxSeq check. The real decoder must accept the
// same inputs with the same errors and build the same states; the
// reference's allocations are also the "before" figures of
// TestDecodeMemory.

func refUnmarshalGCounter(g *GCounter, data []byte) error {
	g.init()
	d, version, err := wire.NewDecoder(data, crdt.TagTGCounter, FormatVersion, crdt.DefaultMaxEncodedSize)
	if err != nil {
		return err
	}
	n := &GCounter{o: g.o}
	n.init()
	if err := n.refDecodeBody(d, version); err != nil {
		return err
	}
	if err := d.Finish(); err != nil {
		return err
	}
	if err := refEncoderVersion(crdt.TagTGCounter, version, n); err != nil {
		return err
	}
	*g = *n
	return nil
}

// refEncoderVersion refuses what the encoder does not write back in
// version, and a version 1 state whose encoding is too large.
func refEncoderVersion(tag crdt.TypeTag, version uint64, halves ...*GCounter) error {
	b, err := marshal(tag, halves...)
	if err != nil {
		return fmt.Errorf("%w: version 1: %v", crdt.ErrTooLarge, err)
	}
	if w := uint64(b[2+len(tag)]); w < version {
		return fmt.Errorf("%w: a state of version %d under version %d (not canonical)", crdt.ErrCorruptEncoding, w, version)
	}
	return nil
}

func refUnmarshalCounter(c *Counter, data []byte) error {
	c.p.init()
	d, version, err := wire.NewDecoder(data, crdt.TagTPNCounter, FormatVersion, crdt.DefaultMaxEncodedSize)
	if err != nil {
		return err
	}
	k, err := d.ArrayLen(maxFields)
	if err != nil {
		return err
	}
	if k != 2 {
		return fmt.Errorf("%w: counter body has %d halves, want 2", crdt.ErrCorruptEncoding, k)
	}
	n := &Counter{}
	n.p.o, n.n.o = c.p.o, c.p.o
	n.p.init()
	n.n.init()
	if err := n.p.refDecodeBody(d, version); err != nil {
		return err
	}
	if err := n.n.refDecodeBody(d, version); err != nil {
		return err
	}
	if err := d.Finish(); err != nil {
		return err
	}
	if err := refEncoderVersion(crdt.TagTPNCounter, version, &n.p, &n.n); err != nil {
		return err
	}
	*c = *n
	c.cross = nil
	c.link()
	c.findCross(c.p.ents, nil)
	return nil
}

func (g *GCounter) refDecodeBody(d *wire.Decoder, version uint64) error {
	fields := 6
	if version == 1 {
		fields = 5
	}
	limit := MaxActorsLimit + MaxRetired // whatever MaxActors (SPEC.md 6.7)
	if version >= 4 {
		limit++
	}
	n, err := d.ArrayLen(limit)
	if err != nil {
		return err
	}
	var prev crdt.ActorID
	live, retired, first := 0, 0, 0
	for i := 0; i < n; i++ {
		k, err := d.ArrayLen(maxFields)
		if err != nil {
			return err
		}
		if version >= 4 && i == 0 && k == 3 {
			b, err := readBase(d)
			if err != nil {
				return err
			}
			g.useBase(b)
			first = 1
			continue
		}
		timed := version >= 4 && k == 5
		isRetired := version >= 3 && k == 4 || timed
		if k != fields && !isRetired {
			return fmt.Errorf("%w: entry has %d fields, want %d", crdt.ErrCorruptEncoding, k, fields)
		}
		a, err := d.Actor()
		if err != nil {
			return err
		}
		if i > first && a <= prev {
			return fmt.Errorf("%w: actor %q not in strictly ascending order", crdt.ErrCorruptEncoding, a)
		}
		prev = a
		var seq uint64
		var total, forgot int64
		if seq, err = d.Uint(); err != nil {
			return err
		}
		if seq == 0 {
			return fmt.Errorf("%w: actor %q has sequence number 0", crdt.ErrCorruptEncoding, a)
		}
		if seq > MaxSeq {
			return fmt.Errorf("%w: actor %q has sequence number %d, above MaxSeq (%d)", crdt.ErrCorruptEncoding, a, seq, MaxSeq)
		}
		if total, err = d.NonNegInt(); err != nil {
			return err
		}
		if fields == 6 {
			if forgot, err = d.NonNegInt(); err != nil {
				return err
			}
		}
		if err := checkForgot(a, forgot); err != nil {
			return err
		}
		var at int64
		if timed {
			if at, err = d.NonNegInt(); err != nil {
				return err
			}
			if err := g.checkRetiredAt(a, at); err != nil {
				return err
			}
		}
		if isRetired {
			retired++
			r := entryFrom(a, seq, total, forgot, nil, nil)
			r.retired, r.retiredAt = true, at
			g.swap(a, nil, r)
			continue
		}
		live++
		seen := map[crdt.TxnID]struct{}{}
		var lists [2][]Txn // history, folded record
		for part := 0; part < 2; part++ {
			m, err := d.ArrayLen(MaxEntriesPerActor - len(seen))
			if err != nil {
				return err
			}
			list := make([]Txn, 0, m)
			for j := 0; j < m; j++ {
				t, err := refDecodeTxn(d, version)
				if err != nil {
					return err
				}
				if _, dup := seen[t.ID]; dup {
					return fmt.Errorf("%w: actor %q holds transaction %q twice", crdt.ErrCorruptEncoding, a, t.ID)
				}
				seen[t.ID] = struct{}{}
				list = append(list, t)
			}
			lists[part] = list
		}
		if err := refCheckEntry(a, seq, total, lists[0], lists[1]); err != nil {
			return err
		}
		g.swap(a, nil, entryFrom(a, seq, total, forgot, lists[0], lists[1]))
	}
	return nil
}

// refCheckEntry is checkCounts on the lists of a live entry.
func refCheckEntry(a crdt.ActorID, seq uint64, total int64, history, folded []Txn) error {
	if len(history) > MaxHistoryLength+1 {
		return invariantf(InvHistoryWithinCap, "actor %q holds %d transactions in its history, more than MaxHistoryLength + 1 (%d)", a, len(history), MaxHistoryLength+1)
	}
	if n := len(history) + len(folded); seq < uint64(n) {
		return invariantf(InvSeqCountsItems, "actor %q: sequence number %d below the %d transactions its entry holds", a, seq, n)
	}
	hsum := big.NewInt(total)
	for _, t := range history {
		hsum.Add(hsum, big.NewInt(t.Amount))
	}
	if !hsum.IsInt64() {
		return invariantf(InvSumFits, "actor %q: total %d and history sum past int64", a, total)
	}
	var sum big.Int
	for _, t := range folded {
		sum.Add(&sum, big.NewInt(t.Amount))
	}
	if sum.Cmp(big.NewInt(total)) > 0 {
		return invariantf(InvTotalCoversFolded, "actor %q: total %d below the sum of its folded record", a, total)
	}
	return nil
}

func refDecodeTxn(d *wire.Decoder, version uint64) (Txn, error) {
	k, err := d.ArrayLen(maxFields)
	if err != nil {
		return Txn{}, err
	}
	if k != 2 {
		return Txn{}, fmt.Errorf("%w: transaction has %d fields, want 2", crdt.ErrCorruptEncoding, k)
	}
	b, _, err := d.TxnIDBytes(nil, version >= 3)
	if err != nil {
		return Txn{}, err
	}
	id := crdt.TxnID(b)
	if err := id.Validate(); err != nil {
		return Txn{}, fmt.Errorf("%w: %v", crdt.ErrCorruptEncoding, err)
	}
	amt, err := d.Int()
	if err != nil {
		return Txn{}, err
	}
	if amt <= 0 {
		return Txn{}, fmt.Errorf("%w: transaction %q has amount %d, want > 0", crdt.ErrCorruptEncoding, id, amt)
	}
	return Txn{ID: id, Amount: amt}, nil
}

// checkSameAsReference decodes data with both decoders, as a Counter and as
// a GCounter, and fails unless they give the same error text, or equal
// states with sound indexes.
func checkSameAsReference(t *testing.T, data []byte) {
	t.Helper()
	var c, rc Counter
	err, rerr := c.UnmarshalBinary(data), refUnmarshalCounter(&rc, data)
	if fmt.Sprint(err) != fmt.Sprint(rerr) {
		t.Fatalf("Counter: decoder says %v, reference %v (input %x)", err, rerr, data)
	}
	if err == nil {
		if !c.Equal(&rc) || c.Value() != rc.Value() || c.Horizon() != rc.Horizon() {
			t.Fatalf("Counter: decoded states differ (input %x)", data)
		}
		for _, g := range []*GCounter{&c.p, &c.n} {
			if err := g.checkIndex(); err != nil {
				t.Fatalf("Counter: decoded index: %v (input %x)", err, data)
			}
		}
	}
	var g, rg GCounter
	err, rerr = g.UnmarshalBinary(data), refUnmarshalGCounter(&rg, data)
	if fmt.Sprint(err) != fmt.Sprint(rerr) {
		t.Fatalf("GCounter: decoder says %v, reference %v (input %x)", err, rerr, data)
	}
	if err == nil {
		if !g.Equal(&rg) || g.Value() != rg.Value() || g.Horizon() != rg.Horizon() {
			t.Fatalf("GCounter: decoded states differ (input %x)", data)
		}
		if err := g.checkIndex(); err != nil {
			t.Fatalf("GCounter: decoded index: %v (input %x)", err, data)
		}
	}
}

// referenceInputs are the golden encodings, both halves of each as
// GCounters, and some worst-case shapes at a small size.
func referenceInputs(t testing.TB) [][]byte {
	var out [][]byte
	for name, c := range codecCases() {
		for _, enc := range []interface{ MarshalBinary() ([]byte, error) }{c, c.Positive(), c.Negative()} {
			b, err := enc.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
		if v1, err := os.ReadFile(filepath.Join("testdata", "v1", name+".tpn")); err == nil {
			out = append(out, v1)
		}
	}
	for _, s := range memShapes {
		s.actors = min(s.actors, 20)
		s.perActor = min(s.perActor, 40)
		out = append(out, s.encoding(600))
	}
	return out
}

// TestDecodeSameAsReference compares the decoders on every prefix of the
// reference inputs (each is corrupt but the whole) and on random one-byte
// changes of them.
func TestDecodeSameAsReference(t *testing.T) {
	testsize.SkipSequential(t)
	rng := rand.New(rand.NewSource(1))
	changes := 300
	if testing.Short() {
		changes = 30
	}
	for _, data := range referenceInputs(t) {
		for n := 0; n <= len(data); n++ {
			checkSameAsReference(t, data[:n])
		}
		for k := 0; k < changes; k++ {
			b := bytes.Clone(data)
			b[rng.Intn(len(b))] = byte(rng.Intn(256))
			checkSameAsReference(t, b)
		}
	}
}

// FuzzDecodeSameAsReference checks any input the same way.
func FuzzDecodeSameAsReference(f *testing.F) {
	for _, data := range referenceInputs(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSameAsReference(t, data)
		var c Counter
		if err := c.UnmarshalBinary(data); err != nil && !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTooLarge) &&
			!errors.Is(err, crdt.ErrTypeMismatch) && !errors.Is(err, crdt.ErrUnsupportedVersion) {
			t.Fatalf("error wraps no decoder sentinel: %v", err)
		}
	})
}
