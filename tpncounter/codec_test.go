package tpncounter

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/counterkit/counterkit/crdt"
	"github.com/counterkit/counterkit/internal/wire"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

type op struct {
	actor crdt.ActorID
	txn   crdt.TxnID
	amt   int64
}

// codecCases are the table cases: the golden files and the fuzz seeds.
func codecCases() map[string]*Counter {
	build := func(hl int, ops ...op) *Counter {
		c, err := New(Options{HistoryLength: hl})
		if err != nil {
			panic(err)
		}
		for _, o := range ops {
			if _, err := c.Apply(o.actor, o.txn, o.amt); err != nil {
				panic(err)
			}
		}
		return c
	}
	dup := build(2, op{"a", "t1", 5}, op{"a", "t2", -3})
	other := build(2, op{"b", "t1", 5}, op{"b", "t3", 7})
	if err := dup.Merge(other); err != nil {
		panic(err)
	}
	if _, err := dup.Compact("b"); err != nil {
		panic(err)
	}
	// timed forgets x@5 under Options.TxnTime: entry a carries
	// forgot = 5 s (y is folded, z and w are in the history).
	timed, err := New(Options{HistoryLength: 1, FoldedLength: 1, TxnTime: atTime})
	if err != nil {
		panic(err)
	}
	for _, o := range []op{{"a", "x@5", 3}, {"a", "y@6", 4}, {"a", "z@7", 5}, {"a", "w@8", 6}, {"b", "d@9", -2}} {
		if _, err := timed.Apply(o.actor, o.txn, o.amt); err != nil {
			panic(err)
		}
	}
	// based: a and b retired at 1 s and folded by the cutoff 2 s into the
	// bases (P 5, N 3); c retired at 3 s stays; d is live (version 4).
	based := build(2, op{"a", "t1", 5}, op{"b", "t2", -3}, op{"c", "t3", 7}, op{"d", "t4", 1})
	for _, r := range []struct {
		at     int64
		actors []crdt.ActorID
	}{{1, []crdt.ActorID{"a", "b"}}, {3, []crdt.ActorID{"c"}}} {
		if ok, err := based.RetireAllAt(time.Unix(r.at, 0), r.actors...); !ok || err != nil {
			panic(fmt.Sprint(ok, err))
		}
	}
	if n := based.Fold(time.Unix(2, 0)); n != 2 {
		panic(n)
	}
	// wide: e, f and g each credit 2^62 and debit it back, retired at 1 s
	// and folded at 2 s: both bases hold 3 × 2^62, past int64 (a 16-byte
	// total), and the value is h's 1.
	wide := build(2, op{"h", "t0", 1})
	for _, a := range []crdt.ActorID{"e", "f", "g"} {
		for _, amt := range []int64{1 << 62, -1 << 62} {
			if _, err := wide.Apply(a, crdt.TxnID(fmt.Sprint(a, amt)), amt); err != nil {
				panic(err)
			}
		}
	}
	if ok, err := wide.RetireAllAt(time.Unix(1, 0), "e", "f", "g"); !ok || err != nil {
		panic(fmt.Sprint(ok, err))
	}
	if n := wide.Fold(time.Unix(2, 0)); n != 6 {
		panic(n)
	}
	return map[string]*Counter{
		"wide":   wide,
		"based":  based,
		"timed":  timed,
		"empty":  build(3),
		"one":    build(3, op{"actor-1", "txn-1", 42}),
		"debit":  build(3, op{"a", "t", -7}),
		"folded": build(2, op{"a", "t1", 1}, op{"a", "t2", 2}, op{"a", "t3", 3}, op{"a", "t4", 4}, op{"b", "t5", -5}),
		"max":    build(3, op{"a", "big", math.MaxInt64}, op{"b", "small", -math.MaxInt64}),
		"shared": dup,
	}
}

func TestGolden(t *testing.T) {
	for name, c := range codecCases() {
		t.Run(name, func(t *testing.T) {
			b, err := c.MarshalBinary()
			require.NoError(t, err)
			path := filepath.Join("testdata", name+".tpn")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, b, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./tpncounter -run TestGolden -update to create it")
			require.Equal(t, want, b, "encoding changed; if intended, bump FormatVersion or rerun with -update")
			var d Counter
			require.NoError(t, d.UnmarshalBinary(want))
			require.True(t, d.Equal(c))
			require.Equal(t, c.Value(), d.Value())
			require.Equal(t, c.Horizon(), d.Horizon())
		})
	}
	require.Equal(t, time.Unix(5, 0).UTC(), codecCases()["timed"].Horizon(), "the timed case has forgotten something")
}

// TestGoldenV1 decodes the format version 1 files (entries without the
// forgot field), which the decoder still reads, and re-encodes them.
func TestGoldenV1(t *testing.T) {
	for name, c := range codecCases() {
		if name == "timed" || name == "based" || name == "wide" {
			continue // not expressible in version 1
		}
		t.Run(name, func(t *testing.T) {
			v1, err := os.ReadFile(filepath.Join("testdata", "v1", name+".tpn"))
			require.NoError(t, err)
			require.Equal(t, byte(1), v1[2+len(crdt.TagTPNCounter)], "a version 1 file")
			var d Counter
			require.NoError(t, d.UnmarshalBinary(v1))
			require.True(t, d.Equal(c))
			require.True(t, d.Horizon().IsZero())
			want, err := c.MarshalBinary()
			require.NoError(t, err)
			got, err := d.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, want, got)
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	enc := func(build func(e *wire.Encoder)) []byte {
		e := wire.NewEncoder(crdt.TagTPNCounter, 2) // what MarshalBinary writes without retired entries
		build(e)
		b, err := e.Bytes()
		require.NoError(t, err)
		return b
	}
	entryF := func(e *wire.Encoder, fields int, forgot int64, actor string, seq uint64, total int64, hist ...Txn) {
		e.ArrayLen(fields)
		e.String(actor)
		e.Uint(seq)
		e.Int(total)
		if fields == 6 {
			e.Int(forgot)
		}
		e.ArrayLen(len(hist))
		for _, t := range hist {
			e.ArrayLen(2)
			e.String(string(t.ID))
			e.Int(t.Amount)
		}
		e.ArrayLen(0)
	}
	entry := func(e *wire.Encoder, actor string, seq uint64, total int64, hist ...Txn) {
		entryF(e, 6, 0, actor, seq, total, hist...)
	}
	half := func(e *wire.Encoder, fill func()) { fill() }
	encV1 := func(build func(e *wire.Encoder)) []byte {
		e := wire.NewEncoder(crdt.TagTPNCounter, 1)
		build(e)
		b, err := e.Bytes()
		require.NoError(t, err)
		return b
	}
	good, err := codecCases()["one"].MarshalBinary()
	require.NoError(t, err)
	tg, err := codecCases()["one"].Positive().MarshalBinary()
	require.NoError(t, err)
	cases := map[string]struct {
		data []byte
		want error
	}{
		"truncated":   {good[:len(good)-1], crdt.ErrCorruptEncoding},
		"trailing":    {append(bytes.Clone(good), 0xc0), crdt.ErrCorruptEncoding},
		"wrong tag":   {tg, crdt.ErrTypeMismatch},
		"empty input": {nil, crdt.ErrCorruptEncoding},
		"unsorted actors": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			half(e, func() { e.ArrayLen(2); entry(e, "b", 1, 0); entry(e, "a", 1, 0) })
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"zero seq": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entry(e, "a", 0, 0)
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"negative total": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entry(e, "a", 1, -1)
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"zero amount": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entry(e, "a", 1, 0, Txn{"t", 0})
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"seq MaxSeq+1": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entry(e, "a", MaxSeq+1, 0)
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"seq 2^64-1": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entry(e, "a", math.MaxUint64, 0)
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"txn twice in one actor": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entry(e, "a", 1, 0, Txn{"t", 1}, Txn{"t", 1})
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"negative forgot": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entryF(e, 6, -1, "a", 1, 0)
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"version 2 entry of five fields": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entryF(e, 5, 0, "a", 1, 0)
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"version 1 entry of six fields": {encV1(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entryF(e, 6, 0, "a", 1, 0)
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
		"version 4": {func() []byte {
			e := wire.NewEncoder(crdt.TagTPNCounter, FormatVersion+1)
			e.ArrayLen(2)
			e.ArrayLen(0)
			e.ArrayLen(0)
			b, err := e.Bytes()
			require.NoError(t, err)
			return b
		}(), crdt.ErrUnsupportedVersion},
		"invalid actor": {enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entry(e, "bad\x00actor", 1, 0)
			e.ArrayLen(0)
		}), crdt.ErrCorruptEncoding},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := codecCases()["folded"]
			before := c.Clone()
			err := c.UnmarshalBinary(tc.data)
			require.ErrorIs(t, err, tc.want)
			require.True(t, c.Equal(before), "a failed decode leaves the receiver unchanged")
		})
	}
	t.Run("seq bound named", func(t *testing.T) {
		var c Counter
		err := c.UnmarshalBinary(cases["seq 2^64-1"].data)
		require.ErrorContains(t, err, `actor "a" has sequence number 18446744073709551615, above MaxSeq (9223372036854775807)`)
	})
	// Decoded as conflicts (which Merge can produce), not refused.
	accepted := map[string][]byte{
		"conflicting amounts": enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(2)
			entry(e, "a", 1, 0, Txn{"t", 1})
			entry(e, "b", 1, 0, Txn{"t", 2})
			e.ArrayLen(0)
		}),
		"credit and debit": enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entry(e, "a", 1, 0, Txn{"t", 1})
			e.ArrayLen(1)
			entry(e, "b", 1, 0, Txn{"t", 1})
		}),
		"seq MaxSeq": enc(func(e *wire.Encoder) {
			e.ArrayLen(2)
			e.ArrayLen(1)
			entry(e, "a", MaxSeq, 0, Txn{"t", 1})
			e.ArrayLen(0)
		}),
	}
	for name, data := range accepted {
		t.Run(name, func(t *testing.T) {
			var c Counter
			require.NoError(t, c.UnmarshalBinary(data))
			for _, g := range []*GCounter{&c.p, &c.n} {
				require.NoError(t, g.checkIndex())
			}
			again, err := c.MarshalBinary()
			require.NoError(t, err)
			require.Equal(t, data, again)
		})
	}
	e, ok := func() (Entry, bool) {
		var c Counter
		require.NoError(t, c.UnmarshalBinary(accepted["seq MaxSeq"]))
		return c.Positive().Entry("a")
	}()
	require.True(t, ok)
	require.Equal(t, MaxSeq, e.Seq)
	t.Run("too many actors", func(t *testing.T) {
		big, err := New(Options{MaxActors: 10})
		require.NoError(t, err)
		for i := 0; i < 10; i++ {
			_, err := big.Apply(crdt.ActorID(string(rune('a'+i))), crdt.TxnID(string(rune('a'+i))), 1)
			require.NoError(t, err)
		}
		b, err := big.MarshalBinary()
		require.NoError(t, err)
		small, err := New(Options{MaxActors: 9})
		require.NoError(t, err)
		require.NoError(t, small.UnmarshalBinary(b)) // MaxActors caps Apply only (SPEC.md 6.7)
		_, err = small.Apply("z", "z", 1)
		require.ErrorIs(t, err, crdt.ErrTooLarge)
	})
}

func FuzzCounterDecode(f *testing.F) {
	for name, c := range codecCases() {
		b, err := c.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		if v1, err := os.ReadFile(filepath.Join("testdata", "v1", name+".tpn")); err == nil {
			f.Add(v1)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Counter
		if err := c.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, crdt.ErrCorruptEncoding) && !errors.Is(err, crdt.ErrTooLarge) &&
				!errors.Is(err, crdt.ErrTypeMismatch) && !errors.Is(err, crdt.ErrUnsupportedVersion) {
				t.Fatalf("error wraps no decoder sentinel: %v", err)
			}
			return
		}
		b1, err := c.MarshalBinary()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		b2, err := c.MarshalBinary()
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("encoding twice differs")
		}
		var d Counter
		if err := d.UnmarshalBinary(b1); err != nil {
			t.Fatalf("decode(encode(x)): %v", err)
		}
		if !d.Equal(&c) || d.Value() != c.Value() {
			t.Fatalf("decode(encode(x)) != x")
		}
		// The decoded index is sound, and stays so (with the value) through
		// every actor's housekeeping.
		v := c.Value()
		for _, g := range []*GCounter{&c.p, &c.n} {
			if err := g.checkIndex(); err != nil {
				t.Fatalf("decoded index: %v", err)
			}
		}
		for _, g := range []*GCounter{&c.p, &c.n} {
			for _, a := range g.Actors() {
				if _, err := c.Compact(a); err != nil && !errors.Is(err, crdt.ErrOverflow) {
					t.Fatalf("compact %q: %v", a, err)
				}
			}
		}
		for _, g := range []*GCounter{&c.p, &c.n} {
			if err := g.checkIndex(); err != nil {
				t.Fatalf("index after compacting: %v", err)
			}
		}
		if c.Value() != v {
			t.Fatalf("compacting changed the value from %d to %d", v, c.Value())
		}
		// Folding every timed retirement keeps the value and a state that
		// encodes and decodes.
		c.Fold(MaxForgot)
		if c.Value() != v {
			t.Fatalf("folding changed the value from %d to %d", v, c.Value())
		}
		for _, g := range []*GCounter{&c.p, &c.n} {
			if err := g.checkIndex(); err != nil {
				t.Fatalf("index after folding: %v", err)
			}
		}
		if b, err := c.MarshalBinary(); err != nil || d.UnmarshalBinary(b) != nil || d.Value() != v {
			t.Fatalf("folded state does not round trip: %v", err)
		}
	})
}

func FuzzGCounterDecode(f *testing.F) {
	for _, c := range codecCases() {
		for _, g := range []*GCounter{c.Positive(), c.Negative()} {
			b, err := g.MarshalBinary()
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var g GCounter
		if err := g.UnmarshalBinary(data); err != nil {
			return
		}
		b1, err := g.MarshalBinary()
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		b2, _ := g.MarshalBinary()
		if !bytes.Equal(b1, b2) {
			t.Fatalf("encoding twice differs")
		}
		var d GCounter
		if err := d.UnmarshalBinary(b1); err != nil {
			t.Fatalf("decode(encode(x)): %v", err)
		}
		if !d.Equal(&g) || d.Value() != g.Value() {
			t.Fatalf("decode(encode(x)) != x")
		}
	})
}

// TestDecodeFindsIDsInBothHalves: a transaction credited by one actor and
// debited by another (writers that could not see each other) is a
// conflict whichever half holds fewer transactions; a decoded state
// answers Value, Owner and Conflicts as the state it was encoded from.
func TestDecodeFindsIDsInBothHalves(t *testing.T) {
	for name, credits := range map[string]int{"fewer debits": 5, "fewer credits": 0} {
		t.Run(name, func(t *testing.T) {
			a, b := &Counter{}, &Counter{}
			for i := range credits {
				_, err := a.Apply("c", crdt.TxnID(fmt.Sprintf("c%d", i)), 1)
				require.NoError(t, err)
			}
			for i := range 5 - credits {
				_, err := b.Apply("d", crdt.TxnID(fmt.Sprintf("d%d", i)), -1)
				require.NoError(t, err)
			}
			_, err := a.Apply("x", "both", 7)
			require.NoError(t, err)
			_, err = b.Apply("w", "both", -7)
			require.NoError(t, err)
			require.NoError(t, a.Merge(b))
			require.Len(t, a.Conflicts(), 1)

			bs, err := a.MarshalBinary()
			require.NoError(t, err)
			back := &Counter{}
			require.NoError(t, back.UnmarshalBinary(bs))
			require.Equal(t, a.Value(), back.Value())
			require.Equal(t, a.Conflicts(), back.Conflicts())
			want, _ := a.Owner("both")
			got, _ := back.Owner("both")
			require.Equal(t, want, got)
		})
	}
}

// TestDecodeAmountForms decodes one transaction's amount in every integer
// form: the smallest form of each size decodes, any longer one (and an
// amount of 0) is corrupt, through UnmarshalBinary, MergeBinary and
// EncodedHorizon alike.
func TestDecodeAmountForms(t *testing.T) {
	// [tag, 2, [[["a", 1, 0, 0, [["x", AMOUNT]], []]], []]] with AMOUNT
	// spliced in as raw bytes.
	head := []byte{0x93, 0xa0 | byte(len(crdt.TagTPNCounter))}
	head = append(head, crdt.TagTPNCounter...)
	head = append(head, 0x02, 0x92, 0x91, 0x96, 0xa1, 'a', 0x01, 0x00, 0x00, 0x91, 0x92, 0xa1, 'x')
	tail := []byte{0x90, 0x90}
	for _, tc := range []struct {
		amount []byte
		want   int64 // 0: corrupt
	}{
		{[]byte{0x01}, 1},
		{[]byte{0x7f}, 127},
		{[]byte{0xcc, 0x80}, 128},
		{[]byte{0xcd, 0x01, 0x00}, 256},
		{[]byte{0xce, 0x00, 0x01, 0x00, 0x00}, 1 << 16},
		{[]byte{0xcf, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00}, 1 << 32},
		{[]byte{0x00}, 0},
		{[]byte{0xcc, 0x7f}, 0},
		{[]byte{0xcd, 0x00, 0xff}, 0},
		{[]byte{0xce, 0x00, 0x00, 0xff, 0xff}, 0},
		{[]byte{0xcf, 0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff}, 0},
		{[]byte{0xd0, 0x05}, 0},
		{[]byte{0xff}, 0},
	} {
		data := append(append(bytes.Clone(head), tc.amount...), tail...)
		c := newT(t, Options{})
		err := c.UnmarshalBinary(data)
		m := newT(t, Options{})
		merr := m.MergeBinary(data)
		_, herr := EncodedHorizon(data)
		if tc.want == 0 {
			require.ErrorIs(t, err, crdt.ErrCorruptEncoding, "% x", tc.amount)
			require.ErrorIs(t, merr, crdt.ErrCorruptEncoding, "% x", tc.amount)
			require.ErrorIs(t, herr, crdt.ErrCorruptEncoding, "% x", tc.amount)
			continue
		}
		require.NoError(t, err, "% x", tc.amount)
		require.NoError(t, merr, "% x", tc.amount)
		require.NoError(t, herr, "% x", tc.amount)
		require.Equal(t, tc.want, c.Value())
		require.Equal(t, tc.want, m.Value())
		require.Equal(t, data, must(c.MarshalBinary()))
	}
}
